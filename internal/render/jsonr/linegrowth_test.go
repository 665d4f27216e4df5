package jsonr

import (
	"runtime"
	"testing"

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
