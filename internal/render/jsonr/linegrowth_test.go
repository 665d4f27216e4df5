package jsonr

import (
	"runtime"
	"testing"

	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/report"
)

// TestLineGrowsOnce: a frame's line appended to an empty buffer is built
// in about one allocation of its size (the room lineGuess makes, doubled
// when it falls short), not regrown node by node as append would (a
// quarter at a time once it is large, which allocates about five times
// the line): over the benchmark corpus (Produce and Fetch with batches of
// records, a 1,000-partition Metadata, every API), the bytes allocated
// while writing the lines (the line and everything else) are under three
// times the lines' length.
func TestLineGrowsOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("-race moves allocations to the heap: the bytes allocated say nothing of the line's growth")
	}
	c, frames, _ := corpusFrames(t)
	var fs []*report.Frame
	for _, bf := range frames {
		o := bf.o
		o.Lean = true
		f := report.Decode(c, bf.b, o)
		if _, err := AppendLine(nil, f, Options{}); err != nil { // fragments made once, as in a run
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	var before, after runtime.MemStats
	lines := 0
	runtime.ReadMemStats(&before)
	for _, f := range fs {
		b, err := AppendLine(nil, f, Options{})
		if err != nil {
			t.Fatal(err)
		}
		lines += len(b)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3*uint64(lines) {
		t.Errorf("%d lines of %d bytes in all allocated %d bytes (%.1f times), want under 3 times", len(fs), lines, alloc, float64(alloc)/float64(lines))
	} else {
		t.Logf("%d lines of %d bytes in all allocated %d bytes (%.2f times)", len(fs), lines, alloc, float64(alloc)/float64(lines))
	}
}

// TestLineGrowsOnceInflated: the line of a frame of compressed batches is
// made room for once, its inflated records included (their hex and nodes
// are most of it), and before the body, which writes the records too.
// Before, the room was guessed from the frame's own bytes and nodes after
// the body was written, and a line many times its frame grew by doubling:
// about three times its length allocated.
func TestLineGrowsOnceInflated(t *testing.T) {
	if raceEnabled {
		t.Skip("-race moves allocations to the heap: the bytes allocated say nothing of the line's growth")
	}
	c := inflating(t)
	for _, fr := range [][]byte{
		inflatingProduce(1, 200, 1024, hostile.Zstd, hostile.LZ4),
		inflatingProduce(2, 50, 4000, hostile.Gzip, hostile.Snappy),
		inflatingProduce(3, 2000, 100, hostile.Snappy),
	} {
		f := report.Decode(c, fr, report.Options{Lean: true})
		if !f.OK() {
			t.Fatal(f.Error)
		}
		if _, err := AppendLine(nil, f, Options{}); err != nil { // fragments made once, as in a run
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b, err := AppendLine(nil, f, Options{})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 10*len(fr) {
			t.Fatalf("a line of %d bytes for a frame of %d: not inflated?", len(b), len(fr))
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		if alloc > 2*uint64(len(b)) {
			t.Errorf("frame of %d bytes: its line of %d bytes allocated %d bytes (%.1f times), want under 2 times", len(fr), len(b), alloc, float64(alloc)/float64(len(b)))
		} else {
			t.Logf("frame of %d bytes: its line of %d bytes allocated %d bytes (%.2f times)", len(fr), len(b), alloc, float64(alloc)/float64(len(b)))
		}
	}
}
