package jsonr

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testshared"
)

const goldenDir = "../../../testdata/golden"

func loadCodec(t testing.TB, dir string) *codec.Codec {
	t.Helper()
	reg, err := schema.Load(dir)
	if err != nil {
		t.Fatalf("loading %s: %v", dir, err)
	}
	return codec.New(reg)
}

// pathValue matches the "path" members of an indented document: a key
// can only be where a quote opens a string that is followed by a colon,
// so no string's contents match.
var pathValue = regexp.MustCompile(`"path": "((?:[^"\\]|\\.)*)"`)

// treePaths lists the escaped paths of the nodes of t in the order the
// writer writes them (depth first, parents first, an inflated tree right
// after its node's children), from Tree.Path, not from the writer.
func treePaths(t *span.Tree) []string {
	var out []string
	if t == nil || t.Root() == span.None {
		return out
	}
	var walk func(id span.ID)
	walk = func(id span.ID) {
		out = append(out, string(span.AppendJSONStringBody(nil, t.Path(id))))
		for k := t.N(id).First; k != span.None; k = t.N(k).Next {
			walk(k)
		}
		if d := t.Detached(id); d != nil && d.Root() != span.None {
			out = append(out, treePaths(d)...)
		}
	}
	walk(t.Root())
	return out
}

// checkPageGolden compares the page document of p with the golden file
// name byte for byte, except the "path" values, which must be the nodes'
// paths in the one syntax (Tree.Path) in the document's order, and the
// render-time notes of values (counted in noted).
func checkPageGolden(t *testing.T, p *page.Page, name string, noted *int) {
	t.Helper()
	got, err := PageDocument(p)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(goldenDir, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	paths := append(treePaths(p.Request.Spans), treePaths(p.Response.Spans)...)
	if m := pathValue.FindAll(got, -1); len(m) != len(paths) {
		t.Fatalf("%s: %d paths written, the trees have %d nodes", name, len(m), len(paths))
	}
	i := 0
	want = pathValue.ReplaceAllFunc(want, func([]byte) []byte {
		if i >= len(paths) {
			i++
			return nil
		}
		s := `"path": "` + paths[i] + `"`
		i++
		return []byte(s)
	})
	if i != len(paths) {
		t.Fatalf("%s: the golden has %d paths, the trees %d nodes", name, i, len(paths))
	}
	if bytes.Equal(got, want) {
		return
	}
	// The one other difference allowed: a note the tree gives at render
	// time (an error code's name, an API key's API) after a value that
	// the golden shows bare, as every front end now shows it.
	notes := map[string]bool{}
	for _, tr := range []*span.Tree{p.Request.Spans, p.Response.Spans} {
		tr.Walk(tr.Root(), func(id span.ID, _ int) {
			if n := tr.Note(id); n != "" {
				notes[n] = true
			}
		})
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	ok := len(gl) == len(wl)
	for j := 0; ok && j < len(gl); j++ {
		if gl[j] == wl[j] {
			continue
		}
		w, g := strings.TrimSuffix(wl[j], `",`), strings.TrimSuffix(gl[j], `",`)
		note, found := strings.CutPrefix(g, w+" (")
		ok = found && strings.Contains(w, `"text": "`) && strings.HasSuffix(note, ")") && notes[strings.TrimSuffix(note, ")")]
		*noted++
	}
	if !ok {
		t.Fatalf("%s: the page document differs from the golden other than in paths and notes (-golden +got):\n%s", name, cmp.Diff(wl, gl))
	}
}

// TestPageGoldens: the page documents of every API of 4.3 (from the
// scrubbed copy the page goldens are made from, schema text replaced by
// its stand-in) and of the synthetic specs at every version are the page
// goldens byte for byte, paths aside, which are the trees' paths.
func TestPageGoldens(t *testing.T) {
	c := loadCodec(t, testshared.ScrubbedSpec(t, "4.3"))
	n, noted := 0, 0
	for _, api := range c.Reg.APIs {
		if api.Reserved() {
			continue
		}
		p, err := page.Build(c, api, -1)
		if err != nil {
			t.Fatalf("%s: %v", api.Name, err)
		}
		for _, s := range []*page.Section{p.Request, p.Response} {
			s.Schema = testshared.StandIn("schema", s.Schema) + "\n"
		}
		checkPageGolden(t, p, filepath.Join(api.Name, fmt.Sprintf("v%d.json", p.Version)), &noted)
		n++
	}
	for _, dir := range []string{"everytype", "escapes"} {
		c := loadCodec(t, "../../../testdata/specs/"+dir)
		for _, api := range c.Reg.APIs {
			for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
				p, err := page.Build(c, api, v)
				if err != nil {
					t.Fatalf("%s v%d: %v", api.Name, v, err)
				}
				checkPageGolden(t, p, filepath.Join("synthetic", api.Name, fmt.Sprintf("v%d.json", v)), &noted)
				n++
			}
		}
	}
	if n < 90 {
		t.Fatalf("only %d pages", n)
	}
	t.Logf("%d pages; %d values carry a render-time note the golden lacks", n, noted)
}

// BenchmarkPageDocument writes the page document of Metadata, the
// largest page, as `show --format json` and the site do.
func BenchmarkPageDocument(b *testing.B) {
	c := loadCodec(b, testshared.Spec(b, "4.3"))
	api, err := c.Reg.Lookup("Metadata")
	if err != nil {
		b.Fatal(err)
	}
	p, err := page.Build(c, api, -1)
	if err != nil {
		b.Fatal(err)
	}
	doc, err := PageDocument(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := PageDocument(p); err != nil {
			b.Fatal(err)
		}
	}
}
