package codec_test

import (
	"fmt"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// TestSpanTreeMatchesValues checks the tree the decoder builds against
// the Values it builds in the same pass (which the kmsg differential
// checks against franz-go): every row of a spec field or array element
// holds its Value's integer, float, bytes and nullness, and names the
// schema field it stands for. Frames: every smallest 4.3 frame and the
// bench corpus (filled by kmsg, with records).
func TestSpanTreeMatchesValues(t *testing.T) {
	r := loadRelease(t, "4.3")
	checked := 0
	reused := &span.Tree{}
	check := func(what string, f *codec.Frame) {
		tr := f.SpanTree()
		kids := tr.Kids(tr.Root())
		body := kids[len(kids)-1]
		if d := tr.Desc(body); d.Message != f.Message() || d.Struct != f.Message().Body {
			t.Fatalf("%s: body row describes %v", what, d.Message)
		}
		var walk func(id span.ID, v *codec.Value)
		walk = func(id span.ID, v *codec.Value) {
			for _, k := range tr.Kids(id) {
				d := tr.Desc(k)
				row := tr.N(k)
				switch {
				case d.Field == nil:
					if tr.Name(k) == "tagged_fields" {
						walk(k, v)
					}
					continue
				case tr.Name(id) == "tagged_fields": // the tag that carries a field
					walk(k, v)
					continue
				}
				var kv *codec.Value
				if row.Index >= 0 {
					if tr.Desc(id).Field != d.Field || int(row.Index) >= len(v.Kids()) {
						t.Fatalf("%s %s: element of another field", what, tr.Path(k))
					}
					kv = &v.Kids()[row.Index]
				} else {
					if d.Name != d.Field.Name || d.Field.Index >= len(v.Kids()) {
						t.Fatalf("%s %s: row of field %s", what, tr.Path(k), d.Field.Name)
					}
					kv = &v.Kids()[d.Field.Index]
				}
				switch row.Val {
				case span.ValInt, span.ValBool, span.ValFloat:
					if row.Int != kv.Int() {
						t.Fatalf("%s %s: row %d, value %d", what, tr.Path(k), row.Int, kv.Int())
					}
				case span.ValString, span.ValBytes, span.ValUUID, span.ValRecords:
					if string(tr.ValueBytes(k)) != string(kv.Bytes()) || row.Null != kv.IsNull() {
						t.Fatalf("%s %s: row %q null %v, value %q null %v", what, tr.Path(k), tr.ValueBytes(k), row.Null, kv.Bytes(), kv.IsNull())
					}
				case span.ValArray, span.ValStruct:
					if row.Null != kv.IsNull() {
						t.Fatalf("%s %s: row null %v, value null %v", what, tr.Path(k), row.Null, kv.IsNull())
					}
				}
				checked++
				walk(k, kv)
			}
		}
		walk(body, &f.Body)
		// Decoding for the tree only (NoValues, a reused tree) builds
		// the same tree.
		var g *codec.Frame
		var err error
		opts := codec.Options{Spans: true, NoValues: true, Tree: reused}
		if f.Kind == schema.TypeRequest {
			g, err = r.c.DecodeRequest(f.SpanTree().Bytes, opts)
		} else {
			g, err = r.c.DecodeResponse(f.SpanTree().Bytes, f.API, f.Version, opts)
		}
		if err != nil || g.SpanTree() != reused || len(g.Body.Kids()) != 0 {
			t.Fatalf("%s: NoValues decode: %v", what, err)
		}
		if p := sameTree(tr, reused); p != "" {
			t.Fatalf("%s: NoValues tree differs: %s", what, p)
		}
	}
	for _, tr := range triples(r.reg) {
		b, err := sample.Encode(r.c, tr.api, tr.kind, tr.v)
		if err != nil {
			t.Fatal(err)
		}
		f, err := decodeFrame(r.c, tr, b, codec.Options{Spans: true})
		if err != nil {
			t.Fatalf("%s: %v", tr, err)
		}
		check(tr.String(), f)
	}
	for _, x := range corpusExchanges(r.reg) {
		api, _ := r.reg.API(x.Request.Key)
		// (a few of kmsg's frames are not valid at their version: skipped)
		if fq, err := r.c.DecodeRequest(x.Request.Bytes, codec.Options{Spans: true}); err == nil {
			check(api.Name+" request", fq)
		}
		if fr, err := r.c.DecodeResponse(x.Response.Bytes, api, x.Response.Version, codec.Options{Spans: true}); err == nil {
			check(api.Name+" response", fr)
		}
	}
	if checked < 30000 {
		t.Fatalf("%d rows checked", checked)
	}
	t.Logf("%d rows checked against their values", checked)
}

// sameTree compares two trees row by row: the rows, and what their
// descriptors and extras say.
func sameTree(a, b *span.Tree) string {
	if a.Len() != b.Len() {
		return fmt.Sprintf("%d rows, %d rows", a.Len(), b.Len())
	}
	for i := range a.Nodes {
		id := span.ID(i)
		if a.Nodes[i] != b.Nodes[i] || a.Desc(id) != b.Desc(id) || a.Name(id) != b.Name(id) || a.Type(id) != b.Type(id) ||
			a.About(id) != b.About(id) || a.Note(id) != b.Note(id) || a.Flag(id) != b.Flag(id) || fmt.Sprint(a.Err(id)) != fmt.Sprint(b.Err(id)) ||
			string(a.ValueBytes(id)) != string(b.ValueBytes(id)) {
			return fmt.Sprintf("row %d (%s)", i, a.Path(id))
		}
	}
	return ""
}

// TestNoValuesScratchReuse decodes every corpus frame, and the smallest
// instance of every message, for the tree alone, one after another in
// three orders: a decode without values writes its values into scratch
// that the next such decode reuses, so a value set as an integer there
// may sit beside a stale pointer, which nothing may then read as flags
// (a null set on such a slot once followed a stale pointer as a box).
// Each tree must be the one a decode with values builds.
func TestNoValuesScratchReuse(t *testing.T) {
	r := loadRelease(t, "4.3")
	type input struct {
		tr   triple
		b    []byte
		want *span.Tree
	}
	var ins []input
	add := func(tr triple, b []byte) {
		f, err := decodeFrame(r.c, tr, b, codec.Options{Spans: true})
		if err != nil {
			return // (a few of kmsg's frames are not valid at their version)
		}
		ins = append(ins, input{tr, b, f.SpanTree()})
	}
	for _, tr := range triples(r.reg) {
		b, err := sample.Encode(r.c, tr.api, tr.kind, tr.v)
		if err != nil {
			t.Fatal(err)
		}
		add(tr, b)
	}
	for _, x := range corpusExchanges(r.reg) {
		api, _ := r.reg.API(x.Request.Key)
		add(triple{api, x.Request.Version, schema.TypeRequest}, x.Request.Bytes)
		add(triple{api, x.Response.Version, schema.TypeResponse}, x.Response.Bytes)
	}
	if len(ins) < 500 {
		t.Fatalf("%d frames to decode", len(ins))
	}
	reused := &span.Tree{}
	n := len(ins)
	for _, order := range []func(i int) int{
		func(i int) int { return i },
		func(i int) int { return n - 1 - i },
		func(i int) int { return i * 7919 % n }, // a prime above n: a permutation
	} {
		for i := range n {
			in := ins[order(i)]
			if _, err := decodeFrame(r.c, in.tr, in.b, codec.Options{Spans: true, NoValues: true, Tree: reused}); err != nil {
				t.Fatalf("%s: %v", in.tr, err)
			}
			if p := sameTree(in.want, reused); p != "" {
				t.Fatalf("%s: the tree differs from a decode with values: %s", in.tr, p)
			}
		}
	}
}
