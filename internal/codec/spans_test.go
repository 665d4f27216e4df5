package codec_test

import (
	"fmt"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// TestSpansTileEveryFrame decodes the smallest frame of every (api,
// version, kind) of every release with spans on and checks the span tree:
// the root covers the frame, the leaves tile it in order with no gap or
// overlap, every group is exactly the union of its children (which are
// contiguous and in order), every node below the root has a category that
// fits where it is, and records fields carry a RecordBatch node.
func TestSpansTileEveryFrame(t *testing.T) {
	for _, label := range releaseLabels(t) {
		t.Run(label, func(t *testing.T) {
			rel := loadRelease(t, label)
			n := 0
			for _, tr := range triples(rel.reg) {
				frame, err := sample.Encode(rel.c, tr.api, tr.kind, tr.v)
				if err != nil {
					t.Errorf("%s: encode: %v", tr, err)
					continue
				}
				f, err := decodeFrame(rel.c, tr, frame, codec.Options{Spans: true, Sample: true})
				if err != nil {
					t.Errorf("%s: decode: %v", tr, err)
					continue
				}
				for _, problem := range checkTree(f.SpanTree(), len(frame)) {
					t.Errorf("%s: %s", tr, problem)
				}
				for _, problem := range checkCategories(f.SpanTree(), tr.kind) {
					t.Errorf("%s: %s", tr, problem)
				}
				if want := recordsFields(tr.msg().Body, tr.v, 0); want > 0 {
					if got := countBatches(f.SpanTree()); got != want {
						t.Errorf("%s: %d RecordBatch nodes of %d bytes, want %d (one per records field)", tr, got, records.BatchHeaderSize, want)
					}
				}

				// The body decoded alone tiles the body bytes.
				m := tr.msg()
				body := sample.Body(m, tr.v)
				bb, err := rel.c.EncodeBody(nil, m, tr.v, &body)
				if err != nil {
					t.Errorf("%s: encode body: %v", tr, err)
					continue
				}
				_, root, err := rel.c.DecodeBody(m, tr.v, bb, codec.Options{Spans: true})
				if err != nil {
					t.Errorf("%s: decode body: %v", tr, err)
					continue
				}
				for _, problem := range checkTree(root, len(bb)) {
					t.Errorf("%s (body only): %s", tr, problem)
				}
				n++
			}
			t.Logf("%s: span trees of %d frames checked", label, n)
		})
	}
}

// checkTree returns what is wrong with a span tree over size bytes.
func checkTree(t *span.Tree, size int) []string {
	var out []string
	if t == nil || t.Root() == span.None {
		return []string{"no span tree"}
	}
	root := t.Root()
	if r := t.N(root); r.Off != 0 || int(r.Len) != size {
		out = append(out, fmt.Sprintf("root covers [%d, %d), want [0, %d)", r.Off, r.Off+r.Len, size))
	}
	// Leaves tile [0, size) in order.
	at := 0
	for _, id := range t.Leaves(root) {
		l := t.N(id)
		off, n := int(l.Off), int(l.Len)
		if off != at {
			out = append(out, fmt.Sprintf("leaf %s at [0x%04x, %dB]: expected offset 0x%04x (gap or overlap)", t.Path(id), off, n, at))
		}
		// Only a struct with no fields on the wire (the ApiVersions v0-2
		// request body) and the empty raw data of an unknown tag of size 0
		// (its size prefix is a separate leaf) may own no bytes.
		empty := t.Type(id) == "struct" || l.Val == span.ValStruct || l.Val == span.ValBytes && l.Enc == span.EncNone && len(t.ValueBytes(id)) == 0
		if n < 0 || n == 0 && !empty {
			out = append(out, fmt.Sprintf("leaf %s at 0x%04x has length %d", t.Path(id), off, n))
		}
		at = off + n
	}
	if at != size {
		out = append(out, fmt.Sprintf("leaves end at %d, frame has %d bytes", at, size))
	}
	// Groups are the union of their children, which are contiguous.
	t.Walk(root, func(id span.ID, _ int) {
		if t.IsLeaf(id) {
			return
		}
		n := t.N(id)
		first, last := t.N(n.First), t.N(n.Last)
		if first.Off != n.Off || last.Off+last.Len != n.Off+n.Len {
			out = append(out, fmt.Sprintf("group %q covers [%d, %d), its children [%d, %d)", t.Path(id), n.Off, n.Off+n.Len, first.Off, last.Off+last.Len))
		}
		prev := span.None
		for k := n.First; k != span.None; k = t.N(k).Next {
			if t.N(k).Parent != id {
				out = append(out, fmt.Sprintf("node %q: wrong parent", t.Path(k)))
			}
			if prev != span.None {
				if p := t.N(prev); t.N(k).Off != p.Off+p.Len {
					out = append(out, fmt.Sprintf("children %q and %q of %q are not contiguous", t.DisplayName(prev), t.DisplayName(k), t.Path(id)))
				}
			}
			prev = k
		}
	})
	if len(out) > 10 {
		out = append(out[:10], fmt.Sprintf("... and %d more", len(out)-10))
	}
	return out
}

// checkCategories checks that every node below the root has a category and
// that it fits its place: the Frame subtree is "frame", the header subtree
// "rpc header" (or tagged_fields), the body the body category of the kind
// (or tagged_fields, RecordBatch, Record).
func checkCategories(t *span.Tree, kind schema.MessageType) []string {
	var out []string
	bodyCat := span.CatRequestBody
	if kind == schema.TypeResponse {
		bodyCat = span.CatResponseBody
	}
	kids := t.Kids(t.Root())
	if len(kids) != 3 {
		return []string{fmt.Sprintf("root has %d children, want frame, header and body", len(kids))}
	}
	allowed := []map[span.Category]bool{
		{span.CatFrame: true},
		{span.CatHeader: true, span.CatTagged: true},
		{bodyCat: true, span.CatTagged: true, span.CatRecordBatch: true, span.CatRecord: true},
	}
	for i, top := range kids {
		t.Walk(top, func(id span.ID, _ int) {
			if c := t.N(id).Cat; c == span.CatNone {
				out = append(out, fmt.Sprintf("node %q has no category", t.Path(id)))
			} else if !allowed[i][c] {
				out = append(out, fmt.Sprintf("node %q has category %q under %q", t.Path(id), c, t.Name(top)))
			}
		})
	}
	if c := t.N(kids[0]).Cat; c != span.CatFrame {
		out = append(out, fmt.Sprintf("first child %q is %q, want frame", t.Name(kids[0]), c))
	}
	if c := t.N(kids[2]).Cat; c != bodyCat {
		out = append(out, fmt.Sprintf("body %q is %q, want %q", t.Name(kids[2]), c, bodyCat))
	}
	return out
}

// recordsFields counts the records values the smallest instance of s holds
// at v (each array holds one element, so each records field counts once).
func recordsFields(s *schema.Struct, v int16, depth int) int {
	if s == nil || depth > 64 {
		return 0
	}
	n := 0
	for _, f := range s.Fields {
		if !f.Versions.Contains(v) || f.IsTagged(v) {
			continue
		}
		switch {
		case f.Type.Kind == schema.KindRecords:
			n++
		case f.Type.ElemStruct() != nil:
			n += recordsFields(f.Type.ElemStruct(), v, depth+1)
		}
	}
	return n
}

// countBatches counts RecordBatch group nodes of exactly one empty batch.
func countBatches(t *span.Tree) int {
	n := 0
	t.Walk(t.Root(), func(id span.ID, _ int) {
		x := t.N(id)
		if x.Cat == span.CatRecordBatch && !t.IsLeaf(id) && x.Len == records.BatchHeaderSize &&
			(x.Parent == span.None || t.N(x.Parent).Cat != span.CatRecordBatch) {
			n++
		}
	})
	return n
}

// TestSpanChecksCatchBrokenTrees makes sure the tree checks above can fail:
// each damage to a real AlterConfigs v2 request tree must be reported.
func TestSpanChecksCatchBrokenTrees(t *testing.T) {
	rel := loadRelease(t, "4.3")
	api, ok := rel.reg.APIByName("AlterConfigs")
	if !ok {
		t.Fatal("no AlterConfigs in 4.3")
	}
	damage := map[string]func(t *span.Tree){
		"leaf shifted":     func(t *span.Tree) { t.N(t.Leaves(t.Root())[3]).Off++ },
		"leaf shortened":   func(t *span.Tree) { t.N(t.Leaves(t.Root())[5]).Len-- },
		"group too long":   func(t *span.Tree) { t.N(t.Kids(t.Root())[2]).Len++ },
		"root too short":   func(t *span.Tree) { t.N(t.Root()).Len-- },
		"category missing": func(t *span.Tree) { t.N(t.Leaves(t.Root())[7]).Cat = span.CatNone },
		"wrong category":   func(t *span.Tree) { t.N(t.Kids(t.Kids(t.Root())[1])[0]).Cat = span.CatRequestBody },
	}
	for name, hurt := range damage {
		frame, err := sample.Encode(rel.c, api, schema.TypeRequest, 2)
		if err != nil {
			t.Fatal(err)
		}
		f, err := rel.c.DecodeRequest(frame, codec.Options{Spans: true})
		if err != nil {
			t.Fatal(err)
		}
		tr := f.SpanTree()
		if p := append(checkTree(tr, len(frame)), checkCategories(tr, schema.TypeRequest)...); len(p) != 0 {
			t.Fatalf("undamaged tree reported: %v", p)
		}
		hurt(tr)
		if p := append(checkTree(tr, len(frame)), checkCategories(tr, schema.TypeRequest)...); len(p) == 0 {
			t.Errorf("%s: not reported", name)
		}
	}
}
