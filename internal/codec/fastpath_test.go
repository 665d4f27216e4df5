package codec_test

import (
	"fmt"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// TestFastPathsMatchGeneral decodes every smallest 4.3 frame and the
// bench corpus's exchanges, whole and cut short at several points, once
// with the decoder's fast paths (each plan's program: runs of fixed-width
// fields, array, string, struct and uuid fields read in one call, rows
// written once) and once with every field on the general path: the
// trees, values and errors must be the same, with and without values and
// spans.
func TestFastPathsMatchGeneral(t *testing.T) {
	r := loadRelease(t, "4.3")
	type frame struct {
		name    string
		kind    schema.MessageType
		api     *schema.API
		version int16
		b       []byte
	}
	var frames []frame
	for _, tr := range triples(r.reg) {
		b, err := sample.Encode(r.c, tr.api, tr.kind, tr.v)
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, frame{tr.String(), tr.kind, tr.api, tr.v, b})
	}
	for _, x := range corpusExchanges(r.reg) {
		api, _ := r.reg.API(x.Request.Key)
		frames = append(frames, frame{api.Name + " request", schema.TypeRequest, api, x.Request.Version, x.Request.Bytes},
			frame{api.Name + " response", schema.TypeResponse, api, x.Response.Version, x.Response.Bytes})
	}
	decode := func(f frame, b []byte, opts codec.Options) (*codec.Frame, error) {
		if f.kind == schema.TypeRequest {
			return r.c.DecodeRequest(b, opts)
		}
		return r.c.DecodeResponse(b, f.api, f.version, opts)
	}
	rows := 0
	for _, f := range frames {
		// Cuts at fixed points, and at eight points spread over the
		// frame and the last bytes, so that every kind of program step
		// meets a short read somewhere (and falls back to the general
		// path, which builds the error).
		cuts := []int{len(f.b), len(f.b) - 1, len(f.b) * 3 / 4, len(f.b) / 2, len(f.b) / 3, 20}
		for k := 1; k <= 8; k++ {
			cuts = append(cuts, len(f.b)*k/9+k%3, len(f.b)-1-k)
		}
		for _, cut := range cuts {
			if cut < 0 || cut > len(f.b) {
				continue
			}
			what := fmt.Sprintf("%s cut at %d of %d", f.name, cut, len(f.b))
			for _, noValues := range []bool{false, true} {
				opts := codec.Options{Spans: true, NoValues: noValues, Tree: &span.Tree{}}
				fast, fastErr := decode(f, f.b[:cut], opts)
				codec.SetGeneralOnly(true)
				opts.Tree = &span.Tree{}
				slow, slowErr := decode(f, f.b[:cut], opts)
				codec.SetGeneralOnly(false)
				if fmt.Sprint(fastErr) != fmt.Sprint(slowErr) {
					t.Fatalf("%s: error %v, general path %v", what, fastErr, slowErr)
				}
				if p := sameTree(fast.SpanTree(), slow.SpanTree()); p != "" {
					t.Fatalf("%s (no values %v): tree differs from the general path's: %s", what, noValues, p)
				}
				if !codec.Equal(&fast.Body, &slow.Body) || !codec.Equal(&fast.Header, &slow.Header) {
					t.Fatalf("%s: values differ from the general path's", what)
				}
				rows += fast.SpanTree().Len()
			}
			// And without a tree: the values alone.
			fast, fastErr := decode(f, f.b[:cut], codec.Options{})
			codec.SetGeneralOnly(true)
			slow, slowErr := decode(f, f.b[:cut], codec.Options{})
			codec.SetGeneralOnly(false)
			if fmt.Sprint(fastErr) != fmt.Sprint(slowErr) || !codec.Equal(&fast.Body, &slow.Body) {
				t.Fatalf("%s without spans: %v / %v, or values differ", what, fastErr, slowErr)
			}
		}
	}
	if rows < 100000 {
		t.Fatalf("only %d rows compared", rows)
	}
	t.Logf("%d frames, %d rows compared", len(frames), rows)
}
