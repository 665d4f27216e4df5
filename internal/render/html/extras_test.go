package html

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

func findNodes(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	if n.Type == html.ElementNode && match(n) {
		out = append(out, n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = append(out, findNodes(c, match)...)
	}
	return out
}

func attrOf(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// TestExtrasBadgesAndNoteEscaped checks what extensions add to the title
// badges, the intro note and index rows: markup comes out as text, and
// each appears where it belongs.
func TestExtrasBadgesAndNoteEscaped(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	in := &PageInput{Page: evilPage(), Extras: Extras{
		Badges: []Badge{{Class: evilAttr, Text: evilScript, Title: evilQuote + badUTF8}},
		Intro:  evilScript + badUTF8,
	}}
	if err := r.Page(&buf, in); err != nil {
		t.Fatal(err)
	}
	doc := checkSafe(t, buf.Bytes())
	h1 := findNodes(doc, func(n *html.Node) bool { return n.DataAtom == atom.H1 })
	if len(h1) != 1 || !strings.Contains(textOf(h1[0]), evilScript) {
		t.Errorf("the badge text is not in the title as text")
	}
	note := findNodes(doc, func(n *html.Node) bool { return n.DataAtom == atom.P && attrOf(n, "class") == "note-removed" })
	if len(note) != 1 || !strings.HasPrefix(textOf(note[0]), evilScript) {
		t.Errorf("the intro note is missing or not text")
	}

	buf.Reset()
	row := IndexRow{Key: 4, Name: "LeaderAndIsr", Reserved: true, Badges: []Badge{{Class: "removed", Text: evilScript + badUTF8, Title: evilAttr}}}
	if err := r.Index(&buf, &IndexInput{Release: "4.3", Rows: []IndexRow{row}}); err != nil {
		t.Fatal(err)
	}
	doc = checkSafe(t, buf.Bytes())
	spans := findNodes(doc, func(n *html.Node) bool { return n.DataAtom == atom.Span && attrOf(n, "class") == "badge removed" })
	if len(spans) != 1 || !strings.HasPrefix(textOf(spans[0]), evilScript) || attrOf(spans[0], "title") != evilAttr {
		t.Errorf("index row badge: %d spans", len(spans))
	}
}
