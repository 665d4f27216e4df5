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
	return string(appendLink(nil, base, from, target))
}

// appendLink appends Link(base, from, target) to b, for a base that is
// set and a target that is a site path.
func appendLink(b []byte, base, from, target string) []byte {
	if from == "" {
		return append(append(b, base...), target[1:]...)
	}
	rest := ""
	if i := strings.IndexAny(target, "?#"); i >= 0 {
		target, rest = target[:i], target[i:]
	}
	fromDir := from[:strings.LastIndex(from, "/")+1] // "/apis/X/" for "/apis/X/v1.json"
	slash := strings.LastIndex(target, "/")
	toDir, file := target[:slash+1], target[slash+1:]
	if strings.Contains(fromDir, "//") || strings.Contains(toDir, "//") {
		return append(b, linkSplit(fromDir, toDir, file)+rest...)
	}
	// Drop the leading directories the two share; what is left of the
	// page's directory is climbed out of, what is left of the target's
	// is walked into.
	f, t := fromDir[1:], toDir[1:]
	for {
		i, j := strings.IndexByte(f, '/'), strings.IndexByte(t, '/')
		if i < 0 || j < 0 || f[:i] != t[:j] {
			break
		}
		f, t = f[i+1:], t[j+1:]
	}
	start := len(b)
	for range strings.Count(f, "/") {
		b = append(b, "../"...)
	}
	b = append(append(b, t...), file...)
	if len(b) == start {
		b = append(b, "./"...)
	}
	return append(b, rest...)
}

// linkSplit is appendLink's relative path for directories with empty
// segments ("/a//b/"), which strings.Trim and strings.Split see as the
// path segments they are.
func linkSplit(fromDir, toDir, file string) string {
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
	return b.String()
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
	out := make([]byte, 0, len(body)+len(body)/16)
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
		var prefix string
		switch {
		case isLinkAttr(name) && val[0] == '/':
		case string(name) == "content" && bytes.HasPrefix(val, []byte("0; url=/")):
			prefix, val = "0; url=", val[len("0; url="):]
		default:
			continue
		}
		out = append(out, body[w:start]...)
		out = append(out, prefix...)
		out = appendLinkAttr(out, base, from, val)
		out = append(out, '"')
		w = end + 1
	}
	return append(out, body[w:]...)
}

// appendLinkAttr appends the attribute value val (escaped, a site path)
// passed through [Link], escaped again.
func appendLinkAttr(b []byte, base, from string, val []byte) []byte {
	target := string(val)
	if !strings.HasPrefix(target, "//") && !bytes.ContainsAny(val, "&'<>") {
		// Nothing to unescape and nothing to escape: Link adds only
		// "../", "./" and the base path's plain segments.
		return appendLink(b, base, from, target)
	}
	return append(b, html.EscapeString(Link(base, from, html.UnescapeString(target)))...)
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
