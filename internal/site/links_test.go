package site

import (
	"net/url"
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
