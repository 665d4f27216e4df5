package html

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/manifester/manifester/internal/schema"
)

// TestOlderVersionsSwitcherAndFooter renders a page of v1 built from an
// older release: the switcher lists the Switcher message's versions (3-5)
// and, apart, the older group (v0, v1, the current one); the page's footer
// replaces the renderer's; markup in both comes out as text.
func TestOlderVersionsSwitcherAndFooter(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	r.Footer = "Kafka 4.3 message specs."
	p := evilPage()
	p.API, p.Version = "Produce", 1
	old := &schema.Message{Valid: schema.Versions{Lo: 0, Hi: 2}, Flexible: schema.None}
	newest := &schema.Message{Valid: schema.Versions{Lo: 3, Hi: 5}, Flexible: schema.Versions{Lo: 5, Hi: schema.MaxVersion}}
	in := &PageInput{Page: p, API: &schema.API{Key: 0, Name: "Produce", Request: old, Response: old}, Extras: Extras{
		Footer:   "Kafka 3.9 message specs. " + evilScript + badUTF8,
		Switcher: newest,
		Older: []OlderVersion{
			{V: 0, Href: "/apis/Produce/v0/", Title: evilAttr},
			{V: 1, Href: "/apis/Produce/v1/", Title: "removed in Kafka 4.0; built from the 3.9 specs"},
		},
	}}
	var buf bytes.Buffer
	if err := r.Page(&buf, in); err != nil {
		t.Fatal(err)
	}
	doc := checkSafe(t, buf.Bytes())
	navs := findNodes(doc, func(n *html.Node) bool { return n.DataAtom == atom.Nav && attrOf(n, "class") == "versions" })
	if len(navs) != 1 {
		t.Fatalf("%d version switchers", len(navs))
	}
	var main, older []string
	var current string
	for _, ul := range findNodes(navs[0], func(n *html.Node) bool { return n.DataAtom == atom.Ul }) {
		for _, a := range findNodes(ul, func(n *html.Node) bool { return n.DataAtom == atom.A }) {
			if attrOf(ul, "class") == "older" {
				older = append(older, attrOf(a, "href"))
			} else {
				main = append(main, attrOf(a, "href"))
			}
			if attrOf(a, "aria-current") == "page" {
				current = attrOf(a, "href")
			}
		}
	}
	if want := []string{"/apis/Produce/v3/", "/apis/Produce/v4/", "/apis/Produce/v5/"}; !slices.Equal(main, want) {
		t.Errorf("main group %q, want %q", main, want)
	}
	if want := []string{"/apis/Produce/v0/", "/apis/Produce/v1/"}; !slices.Equal(older, want) {
		t.Errorf("older group %q, want %q", older, want)
	}
	if current != "/apis/Produce/v1/" {
		t.Errorf("current %q", current)
	}
	labels := findNodes(navs[0], func(n *html.Node) bool { return n.DataAtom == atom.Span && attrOf(n, "class") == "label older" })
	if len(labels) != 1 || textOf(labels[0]) != "older releases" {
		t.Error("no 'older releases' label")
	}
	f := findNodes(doc, func(n *html.Node) bool { return n.DataAtom == atom.Footer })
	if len(f) != 1 || !strings.HasPrefix(textOf(f[0]), "Kafka 3.9 message specs. "+evilScript) || strings.Contains(textOf(f[0]), "4.3") {
		t.Errorf("footer %q", textOf(f[0]))
	}

	// Without Extras.Footer the renderer's footer stays.
	buf.Reset()
	in.Extras = Extras{}
	if err := r.Page(&buf, in); err != nil {
		t.Fatal(err)
	}
	doc = checkSafe(t, buf.Bytes())
	if f := findNodes(doc, func(n *html.Node) bool { return n.DataAtom == atom.Footer }); !strings.HasPrefix(textOf(f[0]), "Kafka 4.3 message specs.") {
		t.Errorf("footer %q", textOf(f[0]))
	}
}
