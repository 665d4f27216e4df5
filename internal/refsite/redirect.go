package refsite

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"

	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/site"
)

var redirectTmpl = template.Must(template.New("redirect").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="0; url={{.}}">
<link rel="canonical" href="{{.}}">
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<title>Moved · manifester</title>
</head>
<body>
<p>This page is at <a href="{{.}}">{{.}}</a>.</p>
</body>
</html>
`))

// RedirectPage is a page that sends the browser to target: what a static
// host serves where a server would answer 301.
func RedirectPage(target string) ([]byte, error) {
	var b strings.Builder
	if err := redirectTmpl.Execute(&b, target); err != nil {
		return nil, fmt.Errorf("refsite: redirect page: %w", err)
	}
	return []byte(b.String()), nil
}

// Redirects returns the friendly paths of a registry's API pages and where
// each leads: /apis/<key>/ and /apis/<lower-case name>/ to /apis/<Name>/.
func Redirects(reg *schema.Registry) map[string]string {
	out := map[string]string{}
	for _, api := range reg.APIs {
		target := "/apis/" + api.Name + "/"
		out["/apis/"+strconv.Itoa(int(api.Key))+"/"] = target
		if lower := "/apis/" + strings.ToLower(api.Name) + "/"; lower != target {
			out[lower] = target
		}
	}
	return out
}

func addRedirects(b *site.Builder, reg *schema.Registry) error {
	for from, to := range Redirects(reg) {
		if b.Has(from) {
			continue
		}
		page, err := RedirectPage(to)
		if err != nil {
			return err
		}
		if err := b.Add(from, site.TypeHTML, page); err != nil {
			return err
		}
	}
	return nil
}

// Resolve maps a path under /apis/ whose API segment is a key or in any
// letter case to the canonical path ("/apis/fetch/v3/" -> "/apis/Fetch/v3/"),
// for a server that answers with a redirect. ok is false when the segment
// names no API or is already canonical.
func Resolve(reg *schema.Registry, urlPath string) (string, bool) {
	rest, ok := strings.CutPrefix(urlPath, "/apis/")
	if !ok {
		return "", false
	}
	seg, tail, _ := strings.Cut(rest, "/")
	var api *schema.API
	if n, err := strconv.ParseInt(seg, 10, 16); err == nil {
		api, ok = reg.API(int16(n))
	} else {
		api, ok = reg.APIByName(seg)
	}
	if !ok || api.Name == seg {
		return "", false
	}
	if tail == "" && !strings.HasSuffix(rest, "/") {
		return "/apis/" + api.Name + "/", true
	}
	return "/apis/" + api.Name + "/" + tail, true
}
