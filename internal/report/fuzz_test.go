package report

import (
	"encoding/hex"
	"runtime"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testframes"
	"github.com/manifester/manifester/internal/vectors"
)

// fuzzCodec loads the newest spec once per fuzz target.
func fuzzCodec(f *testing.F) *codec.Codec {
	c := testframes.Codec(f, "4.3")
	return c
}

// seedVectors adds every vector of the kind as a seed (generated now from
// the specs; no corpus is committed).
func seedVectors(f *testing.F, c *codec.Codec, kind string, add func(v vectors.Vector, b []byte)) {
	vs, err := vectors.Generate(c)
	if err != nil {
		f.Fatal(err)
	}
	for _, v := range vs {
		if v.Kind == kind {
			b, _ := hex.DecodeString(v.Hex)
			add(v, b)
		}
	}
}

// allocBound is the most a decode of n input bytes may allocate: spans
// and values cost a bounded number of bytes per input byte.
func allocBound(n int) uint64 { return uint64(2048*n + 1<<20) }

// checkFrame is the property every fuzzed frame must hold: decoding does
// not panic, allocation is bounded by the input size, and a frame that
// decodes cleanly re-encodes to the same bytes unless Check explains why.
func checkFrame(t *testing.T, c *codec.Codec, b []byte, decode func(opts codec.Options) (*codec.Frame, error)) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fr, err := decode(codec.Options{Spans: true})
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > allocBound(len(b)) {
		t.Fatalf("decoding %d bytes allocated %d", len(b), d)
	}
	if err != nil {
		if fr == nil || fr.SpanTree() == nil {
			t.Fatalf("no partial tree with error %v", err)
		}
		return
	}
	if ok, d := Check(c, fr, b); !ok && d.Reason == "" {
		t.Fatalf("clean decode does not re-encode to the input and nothing explains it: %+v\ninput %x", d, b)
	}
}

// FuzzDecodeRequest decodes arbitrary bytes as a request frame.
func FuzzDecodeRequest(f *testing.F) {
	c := fuzzCodec(f)
	seedVectors(f, c, "request", func(_ vectors.Vector, b []byte) { f.Add(b) })
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFrame(t, c, b, func(o codec.Options) (*codec.Frame, error) { return c.DecodeRequest(b, o) })
	})
}

// FuzzDecodeResponse decodes arbitrary bytes as a response of any API and
// version: the first two arguments pick them.
func FuzzDecodeResponse(f *testing.F) {
	c := fuzzCodec(f)
	var apis []*schema.API
	for _, a := range c.Reg.APIs {
		if !a.Reserved() {
			apis = append(apis, a)
		}
	}
	index := map[int16]uint16{}
	for i, a := range apis {
		index[a.Key] = uint16(i)
	}
	seedVectors(f, c, "response", func(v vectors.Vector, b []byte) { f.Add(index[v.APIKey], v.Version, b) })
	f.Fuzz(func(t *testing.T, ai uint16, v int16, b []byte) {
		api := apis[int(ai)%len(apis)]
		valid := api.Response.Valid
		if v < valid.Lo || v > valid.Hi {
			v = valid.Lo + int16(int(uint16(v))%(int(valid.Hi)-int(valid.Lo)+1))
		}
		checkFrame(t, c, b, func(o codec.Options) (*codec.Frame, error) { return c.DecodeResponse(b, api, v, o) })
	})
}
