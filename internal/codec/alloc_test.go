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
func lie(root *span.Node, b []byte) [][]byte {
	var out [][]byte
	root.Walk(func(n *span.Node, _ int) {
		if n.Parent == nil || n.Name == "size" && n.Parent.Name == "Frame" {
			return
		}
		isPrefix := n.Val == span.ValCount || n.Name == "tagged_fields" || n.Name == "count" ||
			(n.Enc != span.EncNone && n.Enc != span.EncVarint && len(n.Kids) == 0) ||
			n.Name == "batchLength" || n.Name == "recordsCount"
		if !isPrefix || n.Off+n.Len > len(b) {
			return
		}
		m := append([]byte(nil), b...)
		switch {
		case n.Type == "int16" || n.Enc == span.EncInt16:
			binary.BigEndian.PutUint16(m[n.Off:], 0x7fff)
		case n.Type == "int32" || n.Enc == span.EncInt32:
			binary.BigEndian.PutUint32(m[n.Off:], 0x7fffffff)
		case b[n.Off] < 0x80: // a 1-byte uvarint
			m = append(append(append([]byte(nil), b[:n.Off]...), 0xff, 0xff, 0xff, 0xff, 0x0f), b[n.Off+1:]...)
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
		var root *span.Node
		if v.Kind == "request" {
			f, err := c.DecodeRequest(b, codec.Options{Spans: true})
			if err != nil {
				t.Fatalf("%s v%d request: %v", v.Name, v.Version, err)
			}
			root = f.Root
		} else {
			f, err := c.DecodeResponse(b, api, v.Version, codec.Options{Spans: true})
			if err != nil {
				t.Fatalf("%s v%d response: %v", v.Name, v.Version, err)
			}
			root = f.Root
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
