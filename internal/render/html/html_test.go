package html

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/span"
)

const (
	evilScript = `<script>alert(1)</script>`
	evilAttr   = `"><img src=x onerror=alert(2)>`
	evilQuote  = `it's "quoted" & <b>bold</b>`
	badUTF8    = "bad \xff\xfe utf8"
)

// evilTree is a three-byte tree whose names, types, descriptions, notes
// and flags are markup and invalid UTF-8.
func evilTree() *span.Tree {
	t := &span.Tree{Bytes: []byte("</>")}
	add := func(parent span.ID, name, typ string, off, size int, cat span.Category) span.ID {
		id := t.Add(parent, &span.Desc{}, off, cat)
		r := t.N(id)
		r.Desc = t.LocalDesc(&span.Desc{Name: name, Type: typ, About: evilScript})
		r.Len = int32(size)
		return id
	}
	root := add(span.None, evilScript, "message v0", 0, 3, span.CatNone)
	for i, name := range []string{evilAttr, badUTF8 + `x" onmouseover="alert(3)`, "ok"} {
		id := add(root, name, evilQuote, i, 1, span.CatRequestBody)
		t.N(id).Val = span.ValInt
		a := t.Extra(id, true)
		a.Note, a.Flag = badUTF8, evilAttr
	}
	return t
}

func evilPage() *page.Page {
	sec := func(kind string) *page.Section {
		return &page.Section{Kind: kind, Message: evilScript, Title: evilScript + badUTF8, Size: 3, Hex: "3c2f3e",
			Bytes: []byte("</>"), Spans: evilTree(), Schema: "{\n  // </pre><script>alert(4)</script> " + badUTF8 + "\n  \"about\": \"" + evilQuote + "\"\n}\n"}
	}
	return &page.Page{API: evilScript, Intro: evilQuote + badUTF8, Version: 0,
		Summary:  []page.Item{{Label: evilAttr, Value: evilScript}},
		Request:  sec("request"),
		Response: sec("response"),
	}
}

// checkSafe parses out and fails on anything that escaped escaping: a
// script other than the site's, an injected element, an event-handler
// attribute, invalid UTF-8.
func checkSafe(t *testing.T, out []byte) *html.Node {
	t.Helper()
	if !utf8.Valid(out) {
		t.Errorf("output is not valid UTF-8")
	}
	if bytes.Contains(out, []byte("<script>alert")) || bytes.Contains(out, []byte("<img")) || bytes.Contains(out, []byte("<b>")) {
		t.Errorf("raw markup from input reached the output")
	}
	doc, err := html.Parse(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(*html.Node)
	scripts := 0
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Script:
				scripts++
				if len(n.Attr) != 2 || n.Attr[0].Val != "/static/site.js" || n.FirstChild != nil {
					t.Errorf("unexpected script element %v", n.Attr)
				}
			case atom.Img, atom.B, atom.Iframe, atom.Object:
				t.Errorf("injected <%s>", n.Data)
			}
			for _, a := range n.Attr {
				if strings.HasPrefix(a.Key, "on") {
					t.Errorf("injected attribute %s=%q on <%s>", a.Key, a.Val, n.Data)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if scripts != 1 {
		t.Errorf("%d script elements, want the site's one", scripts)
	}
	return doc
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(x *html.Node) {
		if x.Type == html.TextNode {
			b.WriteString(x.Data)
		}
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func TestPageEscapes(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := r.Page(&out, &PageInput{Page: evilPage()}); err != nil {
		t.Fatal(err)
	}
	doc := checkSafe(t, out.Bytes())
	// The text survives as text.
	all := textOf(doc)
	for _, want := range []string{evilScript, evilAttr, evilQuote, "bad \uFFFD utf8", "</pre><script>alert(4)</script>",
		"= 0 (bad \uFFFD utf8)", "[" + evilAttr + "]"} {
		if !strings.Contains(all, want) {
			t.Errorf("page text lacks %q", want)
		}
	}
	// The grid shows the bytes "</>" as hex and in the ASCII gutter, as
	// text.
	if !strings.Contains(all, "3c2f3e") || !strings.Contains(all, "</>") {
		t.Errorf("grid bytes or gutter missing")
	}
}

func TestIndexEscapes(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	in := &IndexInput{Release: evilScript, Rows: []IndexRow{
		{Key: 0, Name: evilScript, Versions: "0-1", Flexible: "1+", Listeners: []string{evilAttr}},
		{Key: 1, Name: badUTF8, Reserved: true, Versions: "none"},
	}}
	if err := r.Index(&out, in); err != nil {
		t.Fatal(err)
	}
	doc := checkSafe(t, out.Bytes())
	if all := textOf(doc); !strings.Contains(all, evilScript) || !strings.Contains(all, evilAttr) {
		t.Errorf("index text lacks the names")
	}
}

func TestHighlightEscapesAndKeepsText(t *testing.T) {
	src := "{\n  // a <comment> & \"more\"\n  \"name\": \"</code></pre><script>x</script>\", \"n\": 3, \"b\": true\n}\n"
	h := string(Highlight(src))
	doc, err := html.Parse(strings.NewReader("<body>" + h))
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(doc); got != src {
		t.Errorf("highlighted text differs from the source:\n got %q\nwant %q", got, src)
	}
	if strings.Contains(h, "<script>") {
		t.Errorf("unescaped script in highlighted output")
	}
	for _, cls := range []string{`class="c1"`, `class="nt"`, `class="s2"`, `class="mi"`, `class="kc"`} {
		if !strings.Contains(h, cls) {
			t.Errorf("no %s token in %s", cls, h)
		}
	}
}

func TestNotFoundAndDoc(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	r.Nav = []Link{{Href: "/decode/", Text: evilScript}}
	var out bytes.Buffer
	if err := r.NotFound(&out); err != nil {
		t.Fatal(err)
	}
	doc := checkSafe(t, out.Bytes())
	if !strings.Contains(textOf(doc), "Page not found") || !strings.Contains(textOf(doc), evilScript) {
		t.Errorf("404 page lacks its heading or the nav link")
	}
	out.Reset()
	if err := r.Doc(&out, evilScript, "<p>trusted body</p>"); err != nil {
		t.Fatal(err)
	}
	checkSafe(t, out.Bytes())
}
