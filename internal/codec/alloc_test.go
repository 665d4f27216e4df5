package codec_test

import (
	"encoding/binary"
	"encoding/hex"
	"runtime"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/span"
)

// Allocation bound for TestLyingCountsAllocateLittle: a decode may allocate
// at most allocPerByte bytes per input byte plus allocFixed. Decoding with
// spans builds a node (~230 bytes) and a Value (~120 bytes) for a field as
// small as one byte, so the bound is linear in the input, never in what a
// count or length claims.
const (
	allocPerByte = 1024
	allocFixed   = 64 << 10
)

// lie returns copies of frame b with one length or count prefix replaced by
// a huge claim: int16 0x7fff, int32 0x7fffffff, or a 5-byte uvarint of
// 0xffffffff in place of a 1-byte compact one (the size prefix is patched
// so that only the inner claim lies).
func lie(t *span.Tree, b []byte) [][]byte {
	var out [][]byte
	t.Walk(t.Root(), func(id span.ID, _ int) {
		n := t.N(id)
		name, typ, off := t.Name(id), t.Type(id), int(n.Off)
		if n.Parent == span.None || name == "size" && t.Name(n.Parent) == "Frame" {
			return
		}
		isPrefix := n.Val == span.ValCount || name == "tagged_fields" || name == "count" ||
			(n.Enc != span.EncNone && n.Enc != span.EncVarint && t.IsLeaf(id)) ||
			name == "batchLength" || name == "recordsCount"
		if !isPrefix || off+int(n.Len) > len(b) {
			return
		}
		m := append([]byte(nil), b...)
		switch {
		case typ == "int16" || n.Enc == span.EncInt16:
			binary.BigEndian.PutUint16(m[off:], 0x7fff)
		case typ == "int32" || n.Enc == span.EncInt32:
			binary.BigEndian.PutUint32(m[off:], 0x7fffffff)
		case b[off] < 0x80: // a 1-byte uvarint
			m = append(append(append([]byte(nil), b[:off]...), 0xff, 0xff, 0xff, 0xff, 0x0f), b[off+1:]...)
			binary.BigEndian.PutUint32(m, uint32(len(m)-4))
		default:
			return
		}
		out = append(out, m)
	})
	return out
}

func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestLyingCountsAllocateLittle feeds every smallest request and response
// of 4.3 with each length and count prefix in turn claiming up to
// gigabytes, and checks that decoding (with and without spans) allocates in
// proportion to the input, not to the claim.
func TestLyingCountsAllocateLittle(t *testing.T) {
	c, vs := fuzzSetup(t)
	frames, worst := 0, 0.0
	for _, v := range vs {
		b, _ := hex.DecodeString(v.Hex)
		api, _ := c.Reg.API(v.APIKey)
		dec := func(m []byte, opts codec.Options) {
			if v.Kind == "request" {
				_, _ = c.DecodeRequest(m, opts)
			} else {
				_, _ = c.DecodeResponse(m, api, v.Version, opts)
			}
		}
		var root *span.Tree
		if v.Kind == "request" {
			f, err := c.DecodeRequest(b, codec.Options{Spans: true})
			if err != nil {
				t.Fatalf("%s v%d request: %v", v.Name, v.Version, err)
			}
			root = f.SpanTree()
		} else {
			f, err := c.DecodeResponse(b, api, v.Version, codec.Options{Spans: true})
			if err != nil {
				t.Fatalf("%s v%d response: %v", v.Name, v.Version, err)
			}
			root = f.SpanTree()
		}
		for _, m := range lie(root, b) {
			frames++
			for _, spans := range []bool{false, true} {
				got := allocated(func() { dec(m, codec.Options{Spans: spans}) })
				limit := uint64(allocPerByte*len(m) + allocFixed)
				worst = max(worst, float64(got)/float64(len(m)))
				if got > limit {
					t.Errorf("%s v%d %s (%d bytes, spans=%v): allocated %d bytes, limit %d", v.Name, v.Version, v.Kind, len(m), spans, got, limit)
				}
			}
		}
	}
	if frames < 1000 {
		t.Fatalf("only %d lying frames built; the mutator found too few prefixes", frames)
	}
	t.Logf("%d lying frames; worst allocation %.0f bytes per input byte", frames, worst)
}
