package codec_test

import (
	"testing"

	"github.com/manifester/manifester/bench/corpus"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
)

// intArrays appends the non-empty integer arrays of the struct value v of
// s (and of its sub-structs) at version ver.
func intArrays(s *schema.Struct, v *codec.Value, ver int16, out []*codec.Value) []*codec.Value {
	if s == nil || len(v.Kids()) != len(s.Fields) {
		return out
	}
	for _, f := range s.Fields {
		if !f.Versions.Contains(ver) {
			continue
		}
		x := &v.Kids()[f.Index]
		switch {
		case f.Type.Kind == schema.KindArray && f.Type.Elem != nil && f.Type.Elem.Kind.IsInteger():
			if len(x.Kids()) > 0 {
				out = append(out, x)
			}
		case f.Type.ElemStruct() != nil && f.Type.Kind == schema.KindArray:
			for i := range x.Kids() {
				out = intArrays(f.Type.ElemStruct(), &x.Kids()[i], ver, out)
			}
		case f.Type.Kind == schema.KindStruct:
			out = intArrays(f.Type.Struct, x, ver, out)
		}
	}
	return out
}

// TestSharedIntArrays checks that a decode without rows gives integer
// arrays of equal elements one Kids (the corpus's Metadata response has
// 1,000 partitions whose replica and ISR lists are five lists over and
// over), that arrays that differ never share, that two frames never share
// with each other, and that a decode with rows shares nothing.
func TestSharedIntArrays(t *testing.T) {
	r := loadRelease(t, "4.3")
	var resp corpus.Frame
	for _, x := range corpusExchanges(r.reg) {
		if x.Response.Key == 3 && len(x.Response.Bytes) > 10000 {
			resp = x.Response
		}
	}
	if resp.Bytes == nil {
		t.Fatal("no large Metadata response in the corpus")
	}
	api, _ := r.reg.API(3)
	decode := func(opts codec.Options) []*codec.Value {
		f, err := r.c.DecodeResponse(resp.Bytes, api, resp.Version, opts)
		if err != nil {
			t.Fatal(err)
		}
		return intArrays(api.Response.Body, &f.Body, resp.Version, nil)
	}
	backing := func(v *codec.Value) *codec.Value { return &v.Kids()[0] }
	a, b := decode(codec.Options{}), decode(codec.Options{})
	if len(a) < 2000 {
		t.Fatalf("only %d integer arrays", len(a))
	}
	owners := map[*codec.Value]*codec.Value{}
	for _, x := range a {
		if o, ok := owners[backing(x)]; ok {
			if !codec.Equal(o, x) || len(o.Kids()) != len(x.Kids()) {
				t.Fatalf("arrays %v and %v share their elements", o.Kids(), x.Kids())
			}
			continue
		}
		owners[backing(x)] = x
	}
	if len(owners) > 20 {
		t.Errorf("%d integer arrays have %d backing arrays; want the few distinct lists", len(a), len(owners))
	}
	for _, x := range b {
		if _, ok := owners[backing(x)]; ok {
			t.Fatal("two frames share an integer array")
		}
	}
	tree := decode(codec.Options{Spans: true})
	seen := map[*codec.Value]bool{}
	for _, x := range tree {
		if seen[backing(x)] {
			t.Fatal("a decode with rows shares integer arrays")
		}
		seen[backing(x)] = true
	}
}
