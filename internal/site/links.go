package site

import (
	"bytes"
	"html"
	"strings"
)

// Every page is rendered with site paths ("/apis/Fetch/v4/",
// "/static/site.css"): the renderers, templates and extensions write links
// that way, through [htmlr.APIPath] and the path constants of each
// package. With [Options.BasePath] set, one function, [Link], turns each
// of them into the URL the page carries: a URL relative to the page
// ("../../static/site.css"), so the export works under any prefix and from
// file://, or, on pages that can be served at any depth (the 404 page), an
// absolute path under the base path ("/prefix/static/site.css").

// linkAttrs are the attributes whose values are site URLs.
var linkAttrs = []string{"href", "src", "action", "data-base"}

// Link returns the URL a page at site path from carries for the site path
// target (which may have a query and a fragment). With base empty, target
// is returned as it is; with from empty, target is placed under base;
// otherwise the result is relative to from ("./" for the page's own
// directory).
func Link(base, from, target string) string {
	if base == "" || !strings.HasPrefix(target, "/") || strings.HasPrefix(target, "//") {
		return target
	}
	if from == "" {
		return base + target[1:]
	}
	rest := ""
	if i := strings.IndexAny(target, "?#"); i >= 0 {
		target, rest = target[:i], target[i:]
	}
	fromDir := from[:strings.LastIndex(from, "/")+1] // "/apis/X/" for "/apis/X/v1.json"
	toDir, file := target[:strings.LastIndex(target, "/")+1], target[strings.LastIndex(target, "/")+1:]
	fs := strings.Split(strings.Trim(fromDir, "/"), "/")
	ts := strings.Split(strings.Trim(toDir, "/"), "/")
	if fromDir == "/" {
		fs = nil
	}
	if toDir == "/" {
		ts = nil
	}
	n := 0
	for n < len(fs) && n < len(ts) && fs[n] == ts[n] {
		n++
	}
	var b strings.Builder
	for range len(fs) - n {
		b.WriteString("../")
	}
	for _, s := range ts[n:] {
		b.WriteString(s)
		b.WriteByte('/')
	}
	b.WriteString(file)
	if b.Len() == 0 {
		b.WriteString("./")
	}
	return b.String() + rest
}

// RewriteLinks returns an HTML page rendered with site paths with every
// link attribute (href, src, action, data-base) and meta refresh URL passed
// through [Link]. It relies on the markup coming from html/template, where
// a double quote only ever delimits an attribute value (text and values
// carry it as &#34;) and no inline script or style exists.
func RewriteLinks(body []byte, base, from string) []byte {
	if base == "" {
		return body
	}
	var out bytes.Buffer
	out.Grow(len(body) + len(body)/16)
	w := 0 // body[:w] is in out
	i := 0 // the scan position
	for {
		j := bytes.Index(body[i:], []byte(`="`))
		if j < 0 {
			break
		}
		j += i
		start := j + 2 // first byte of the value
		end := bytes.IndexByte(body[start:], '"')
		if end < 0 {
			break
		}
		end += start
		i = end + 1
		val := body[start:end]
		if len(val) == 0 || val[0] != '/' && val[0] != '0' {
			continue // neither a site path nor a meta refresh
		}
		name := attrName(body[:j])
		var nv string
		switch {
		case isLinkAttr(name) && val[0] == '/':
			nv = html.EscapeString(Link(base, from, html.UnescapeString(string(val))))
		case string(name) == "content" && bytes.HasPrefix(val, []byte("0; url=/")):
			nv = "0; url=" + html.EscapeString(Link(base, from, html.UnescapeString(string(val[len("0; url="):]))))
		default:
			continue
		}
		out.Write(body[w:start])
		out.WriteString(nv)
		out.WriteByte('"')
		w = end + 1
	}
	out.Write(body[w:])
	return out.Bytes()
}

// attrName is the attribute name that ends b (the bytes before `="`), or
// nil. It is a slice of b: a page has thousands of attributes.
func attrName(b []byte) []byte {
	k := len(b)
	for k > 0 && (b[k-1] == '-' || b[k-1] >= 'a' && b[k-1] <= 'z' || b[k-1] >= 'A' && b[k-1] <= 'Z') {
		k--
	}
	if k == 0 || (b[k-1] != ' ' && b[k-1] != '\n' && b[k-1] != '\t') {
		return nil
	}
	return b[k:]
}

func isLinkAttr(name []byte) bool {
	for _, a := range linkAttrs {
		if a == string(name) {
			return true
		}
	}
	return false
}

// CleanBase normalises a base path: "" and "/" are the root, any other is
// "/prefix/" with one leading and one trailing slash.
func CleanBase(p string) string {
	p = strings.Trim(p, "/")
	if p == "" {
		return "/"
	}
	return "/" + p + "/"
}
