package site

import (
	"bytes"
	"html"
	"net/url"
	"strings"
	"testing"
)

func TestLink(t *testing.T) {
	for _, c := range []struct{ base, from, target, want string }{
		{"", "/apis/X/", "/static/site.css", "/static/site.css"},
		{"/", "/", "/static/site.css", "static/site.css"},
		{"/", "/", "/", "./"},
		{"/", "/apis/X/", "/apis/X/", "./"},
		{"/", "/apis/X/", "/apis/X/#request:A.b", "./#request:A.b"},
		{"/", "/apis/X/v3/", "/apis/X/v2/", "../v2/"},
		{"/", "/apis/X/v3/", "/", "../../../"},
		{"/", "/apis/X/v3/", "/static/site.css", "../../../static/site.css"},
		{"/", "/apis/X/diff/v1..v2/", "/apis/X/diff/", "../"},
		{"/", "/apis/X/", "/apis/X/v2.json", "v2.json"},
		{"/", "/search/", "/search/?q=a", "./?q=a"},
		{"/p/q/", "", "/static/site.css", "/p/q/static/site.css"},
		{"/p/", "/x/", "#frag", "#frag"},
		{"/p/", "/x/", "https://example.org/", "https://example.org/"},
	} {
		got := Link(c.base, c.from, c.target)
		if got != c.want {
			t.Errorf("Link(%q, %q, %q) = %q, want %q", c.base, c.from, c.target, got, c.want)
		}
		// A relative link resolves, from the page under any prefix, to the
		// target under that prefix.
		if c.base != "" && c.from != "" && c.target[0] == '/' {
			page, _ := url.Parse("http://h/pre/fix" + c.from)
			ref, _ := url.Parse(got)
			if res := page.ResolveReference(ref); res.Path != "/pre/fix"+pathOf(c.target) {
				t.Errorf("%q from %q resolves to %q", got, c.from, res.Path)
			}
		}
	}
}

func pathOf(target string) string {
	u, _ := url.Parse(target)
	return u.Path
}

func TestRewriteLinks(t *testing.T) {
	in := `<a href="/apis/X/">x</a> <link rel="stylesheet" href="/static/site.css"><form action="/decode/" data-base="/apis/X/diff/"><p title="href=&#34;/no&#34;">t</p><a href="#f">f</a><meta http-equiv="refresh" content="0; url=/apis/X/"><img alt="/x" src="/static/a.svg">`
	want := `<a href="../X/">x</a> <link rel="stylesheet" href="../../static/site.css"><form action="../../decode/" data-base="../X/diff/"><p title="href=&#34;/no&#34;">t</p><a href="#f">f</a><meta http-equiv="refresh" content="0; url=../X/"><img alt="/x" src="../../static/a.svg">`
	if got := string(RewriteLinks([]byte(in), "/", "/apis/Y/")); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := string(RewriteLinks([]byte(in), "", "/apis/Y/")); got != in {
		t.Errorf("no base changed the page: %s", got)
	}
	abs := string(RewriteLinks([]byte(`<a href="/errors/#X">e</a>`), "/k/", ""))
	if abs != `<a href="/k/errors/#X">e</a>` {
		t.Errorf("absolute: %s", abs)
	}
}

func TestCleanBase(t *testing.T) {
	for in, want := range map[string]string{"": "/", "/": "/", "p": "/p/", "/p": "/p/", "/p/q/": "/p/q/"} {
		if got := CleanBase(in); got != want {
			t.Errorf("CleanBase(%q) = %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"/a b/", "/a\"/", "/../", "/a//b/"} {
		if validBase(CleanBase(bad)) {
			t.Errorf("%q accepted", bad)
		}
	}
}

// rewriteLinksReference is RewriteLinks as it was first written (every
// link unescaped, passed through linkReference and escaped again), kept
// to check the faster one against.
func rewriteLinksReference(body []byte, base, from string) []byte {
	if base == "" {
		return body
	}
	var out bytes.Buffer
	w, i := 0, 0
	for {
		j := bytes.Index(body[i:], []byte(`="`))
		if j < 0 {
			break
		}
		j += i
		start := j + 2
		end := bytes.IndexByte(body[start:], '"')
		if end < 0 {
			break
		}
		end += start
		i = end + 1
		val := body[start:end]
		if len(val) == 0 || val[0] != '/' && val[0] != '0' {
			continue
		}
		name := attrName(body[:j])
		var nv string
		switch {
		case isLinkAttr(name) && val[0] == '/':
			nv = html.EscapeString(linkReference(base, from, html.UnescapeString(string(val))))
		case string(name) == "content" && bytes.HasPrefix(val, []byte("0; url=/")):
			nv = "0; url=" + html.EscapeString(linkReference(base, from, html.UnescapeString(string(val[len("0; url="):]))))
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

// linkReference is Link as it was first written.
func linkReference(base, from, target string) string {
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
	fromDir := from[:strings.LastIndex(from, "/")+1]
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

// TestLinkMatchesReference checks Link and RewriteLinks against their
// first, simpler versions: on crafted links (empty segments, escapes,
// quotes, queries, fragments, "//" and non-site URLs) from pages at every
// depth, and on every page of the 4.3 site under three base paths.
func TestLinkMatchesReference(t *testing.T) {
	froms := []string{"", "/", "/x.json", "/apis/", "/apis/X/", "/apis/X/v1.json", "/apis/X/v3/", "/apis/X/diff/v1..v2/", "/a//b/", "//", "/a/b/c/d/e/"}
	targets := []string{"/", "/static/site.css", "/apis/X/", "/apis/X/v2/", "/apis/Y/v0/#request:A.b", "/search/?q=a&amp;b", "/a//b/c", "//host/x",
		"/x/&#39;y&#39;/", "/x/&quot;q&quot;", "/x/'raw'<>/", "/apis/X/diff/", "/errors/#UNKNOWN", "/a/b/c/", "/a/b/c/d/e/f", "#f", "x/y", "/?", "/#"}
	for _, base := range []string{"", "/", "/k/", "/p/q/"} {
		for _, from := range froms {
			for _, target := range targets {
				if got, want := Link(base, from, target), linkReference(base, from, target); got != want {
					t.Errorf("Link(%q, %q, %q) = %q, want %q", base, from, target, got, want)
				}
				page := []byte(`<a href="` + target + `">x</a><meta http-equiv="refresh" content="0; url=` + target + `"><img src="` + target + `" alt="` + target + `">`)
				if got, want := RewriteLinks(page, base, from), rewriteLinksReference(page, base, from); !bytes.Equal(got, want) {
					t.Errorf("RewriteLinks(%q, %q, %q) = %q, want %q", page, base, from, got, want)
				}
			}
		}
	}
	s := built43(t)
	n := 0
	for _, p := range s.Paths() {
		a, _ := s.Lookup(p)
		if a.ContentType != TypeHTML {
			continue
		}
		for _, c := range []struct{ base, from string }{{"/", p}, {"/k/", ""}, {"/p/q/", p}} {
			if got, want := RewriteLinks(a.Body, c.base, c.from), rewriteLinksReference(a.Body, c.base, c.from); !bytes.Equal(got, want) {
				t.Fatalf("RewriteLinks of %s under %q from %q differs from the reference", p, c.base, c.from)
			}
		}
		n++
	}
	if n < 300 {
		t.Errorf("only %d pages compared", n)
	}
}
