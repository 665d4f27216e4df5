package html_test

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/page"
	htmlr "github.com/manifester/manifester/internal/render/html"
	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/server"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testshared"
)

// treeValues returns the value column of every object-tree row under the
// element with id section, keyed by the row's path (its id after
// "<section kind>:").
func treeValues(t *testing.T, out []byte, section string) map[string]string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]string{}
	var walk func(n *html.Node, in bool)
	walk = func(n *html.Node, in bool) {
		if n.Type == html.ElementNode {
			id := attribute(n, "id")
			in = in || id == section
			if in && n.Data == "tr" && strings.HasPrefix(id, section+":") {
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.ElementNode && attribute(c, "class") == "val" {
						vals[strings.TrimPrefix(id, section+":")] = textContent(c)
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, in)
		}
	}
	walk(doc, false)
	return vals
}

func attribute(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textContent(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(textContent(c))
	}
	return b.String()
}

// TestSameNotesOnAPIAndDecodePages checks that the same bytes read the
// same on the API page and on the decode page: the smallest ApiVersions
// v3 response, decoded by a codec with no annotation hook (as the server
// and the site use it) and rendered as the server's decode page renders a
// frame, shows "= 0 (NONE)" for its error code and "= 0 (Produce)" for its
// API key, every row as the tree's own value text. The API page shows the
// same values, except that it is a smallest instance (span.Tree.Sample):
// the zeros of spec fields are bare there ("= 0"), as on the text page,
// and only those rows differ. The text renderer prints each tree's rows
// with the same values.
func TestSameNotesOnAPIAndDecodePages(t *testing.T) {
	reg, err := schema.Load(testshared.Spec(t, "4.3"))
	if err != nil {
		t.Fatal(err)
	}
	c := codec.New(reg) // as the server and the site make it: no annotation hook
	api, ok := reg.APIByName("ApiVersions")
	if !ok {
		t.Fatal("no ApiVersions")
	}
	const v = 3
	p, err := page.Build(c, api, v)
	if err != nil {
		t.Fatal(err)
	}
	r, err := htmlr.New()
	if err != nil {
		t.Fatal(err)
	}
	var apiOut bytes.Buffer
	if err := r.Page(&apiOut, &htmlr.PageInput{Page: p, API: api}); err != nil {
		t.Fatal(err)
	}
	onPage := treeValues(t, apiOut.Bytes(), "response")

	f := report.Decode(c, p.Response.Bytes, report.Options{Kind: schema.TypeResponse, API: api, Version: v})
	if f.Error != "" {
		t.Fatalf("decoding the page's response: %s", f.Error)
	}
	var decOut bytes.Buffer
	res := server.Result(f) // what POST /decode/ renders
	if err := r.DecodeFragment(&decOut, &res); err != nil {
		t.Fatal(err)
	}
	decoded := treeValues(t, decOut.Bytes(), "f0")

	tree, sample := f.SpanTree(), p.Response.Spans
	for path, w := range map[string]string{
		"ApiVersionsResponse.ErrorCode":         "(NONE)",
		"ApiVersionsResponse.ApiKeys[0].ApiKey": "(Produce)",
	} {
		if decoded[path] != "= 0 "+w || onPage[path] != "= 0" {
			t.Errorf("%s: decode page %q, want %q; API page %q, want %q", path, decoded[path], "= 0 "+w, onPage[path], "= 0")
		}
	}
	nodes := 0
	tree.Walk(tree.Root(), func(id span.ID, _ int) {
		nodes++
		path := tree.Path(id)
		if decoded[path] != tree.ValueText(id) {
			t.Errorf("%s: decode page %q, tree %q", path, decoded[path], tree.ValueText(id))
		}
		n, d := tree.N(id), tree.Desc(id)
		want := decoded[path]
		if n.Val == span.ValInt && n.Int == 0 && d.Field != nil && tree.Note(id) != "" {
			want = strings.TrimSuffix(want, " ("+tree.Note(id)+")") // a sample's zero reads bare
		}
		if onPage[path] != want {
			t.Errorf("%s: API page %q, want %q (decode page %q)", path, onPage[path], want, decoded[path])
		}
	})
	sample.Walk(sample.Root(), func(id span.ID, _ int) {
		if path := sample.Path(id); onPage[path] != sample.ValueText(id) {
			t.Errorf("%s: API page %q, page tree %q", path, onPage[path], sample.ValueText(id))
		}
	})
	if len(onPage) != nodes || len(decoded) != nodes {
		t.Errorf("%d rows on the API page, %d on the decode page, %d nodes in the tree", len(onPage), len(decoded), nodes)
	}
	// The text renderer prints the same values: the frame's as the
	// decode page, the page's as the API page.
	sameAsText(t, "decode page", tree, decoded)
	sameAsText(t, "API page", sample, onPage)
}

// sameAsText checks that text.Tree prints, on each node's line, the value
// an HTML page shows for it (vals, keyed by path) right before the node's
// [offset, size] column.
func sameAsText(t *testing.T, what string, tr *span.Tree, vals map[string]string) {
	t.Helper()
	var b bytes.Buffer
	text.Tree(&b, tr)
	lines := strings.Split(b.String(), "\n")
	i := 0
	tr.Walk(tr.Root(), func(id span.ID, _ int) {
		if i >= len(lines) {
			t.Errorf("%s: the text tree has %d lines, fewer than the nodes", what, len(lines))
			return
		}
		line, v := lines[i], vals[tr.Path(id)]
		i++
		at := strings.Index(line, "  "+v+"  ")
		if v == "" {
			at = strings.Index(line, "  [0x")
		}
		if at < 0 || !strings.HasPrefix(strings.TrimLeft(line[at+2+len(v):], " "), "[0x") {
			t.Errorf("%s shows %s as %q; the text renderer's line is %q", what, tr.Path(id), v, line)
		}
	})
}
