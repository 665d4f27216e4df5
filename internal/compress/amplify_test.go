package compress

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/klauspost/compress/snappy"
)

// TestXerialManyBlocksLinear: a xerial snappy stream of many tiny blocks
// (7 bytes each, of one inflated byte) is inflated with memory in
// proportion to what it inflates to. Growing the output by each block's
// size alone copied all of it for each block: n blocks cost n²/2 bytes.
func TestXerialManyBlocksLinear(t *testing.T) {
	const blocks = 40000
	raw := bytes.Repeat([]byte{'k'}, blocks)
	data := xerial(raw, 1)
	if n := len(snappy.Encode(nil, raw[:1])); n != 3 {
		t.Fatalf("a block of one byte encodes to %d bytes; want 3", n)
	}
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	got, err := Decompress(Snappy, data)
	runtime.ReadMemStats(&b)
	if err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("inflated %d bytes (%v); want %d", len(got), err, len(raw))
	}
	used := b.TotalAlloc - a.TotalAlloc
	t.Logf("%d bytes in %d blocks inflated to %d, allocating %d bytes", len(data), blocks, len(got), used)
	// Doubling: at most about four times the output, and the pool's
	// first buffers.
	if limit := uint64(4*len(got) + 64<<10); used > limit {
		t.Errorf("%d bytes inflating to %d allocated %d bytes; want at most %d", len(data), len(got), used, limit)
	}
}
