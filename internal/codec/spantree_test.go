package codec_test

import (
	"regexp"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// elemName is an array element's own name in a pointer-tree path
// ("Resources.AlterConfigsResource[0]"), which the one path syntax drops
// ("Resources[0]").
var elemName = regexp.MustCompile(`\.[A-Za-z0-9_]+\[`)

// TestSpanTreeMatchesNodes checks that every frame's span.Tree shows what
// its pointer tree shows: the same rows in the same order with the same
// names, types, offsets, sizes, values, notes and errors, and paths in the
// one syntax.
func TestSpanTreeMatchesNodes(t *testing.T) {
	r := loadRelease(t, "4.3")
	rows := 0
	for _, api := range r.reg.APIs {
		if api.Request.Reserved() {
			continue
		}
		for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
			for _, kind := range []schema.MessageType{schema.TypeRequest, schema.TypeResponse} {
				b, err := sample.Encode(r.c, api, kind, v)
				if err != nil {
					t.Fatalf("%s v%d: %v", api.Name, v, err)
				}
				opts := codec.Options{Spans: true, Sample: true}
				var f *codec.Frame
				if kind == schema.TypeRequest {
					f, err = r.c.DecodeRequest(b, opts)
				} else {
					f, err = r.c.DecodeResponse(b, api, v, opts)
				}
				if err != nil {
					t.Fatalf("%s v%d: %v", api.Name, v, err)
				}
				tr := f.SpanTree()
				var old []*span.Node
				f.Root.Walk(func(n *span.Node, _ int) { old = append(old, n) })
				var ids []span.ID
				tr.Walk(tr.Root(), func(id span.ID, _ int) { ids = append(ids, id) })
				if len(ids) != len(old) {
					t.Fatalf("%s v%d %d: %d rows, want %d", api.Name, v, kind, len(ids), len(old))
				}
				for i, n := range old {
					id := ids[i]
					row := tr.N(id)
					wantPath := elemName.ReplaceAllString(n.Path(), "[")
					if got := tr.DisplayName(id); got != n.DisplayName() || tr.Type(id) != n.Type || tr.About(id) != n.About ||
						int(row.Off) != n.Off || int(row.Len) != n.Len || row.Cat != n.Cat || tr.Path(id) != wantPath {
						t.Fatalf("%s v%d row %d: got %q %q %q [%d,%d] %q, want %q %q %q [%d,%d] %q", api.Name, v, i,
							got, tr.Type(id), tr.About(id), row.Off, row.Len, tr.Path(id), n.DisplayName(), n.Type, n.About, n.Off, n.Len, wantPath)
					}
					if got, want := tr.ValueText(id), n.ValueText(); got != want && n.Note == "" {
						// the tree annotates from the descriptor; the pointer tree only when a hook is set
						if n.Field == nil || span.NoteFor(n.Field) == span.NoteNone {
							t.Fatalf("%s v%d %s: value %q, want %q", api.Name, v, wantPath, got, want)
						}
					}
					gj, gok := tr.AppendValueJSON(nil, id)
					wj, wok := n.AppendValueJSON(nil)
					if string(gj) != string(wj) || gok != wok {
						t.Fatalf("%s v%d %s: JSON %s, want %s", api.Name, v, wantPath, gj, wj)
					}
					rows++
				}
			}
		}
	}
	if rows < 10000 {
		t.Fatalf("%d rows compared; every 4.3 sample has more", rows)
	}
	t.Logf("%d rows compared", rows)
}
