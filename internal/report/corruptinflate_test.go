package report

import (
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/records"
)

// corruptBatches returns a Produce frame of n gzip batches, each
// inflating 1 MiB of zeros before its gzip trailer's checksum, which is
// wrong, fails it.
func corruptBatches(n int) []byte {
	z := hostile.Compress(hostile.Gzip, make([]byte, 1<<20))
	z[len(z)-8] ^= 0xff // the CRC-32 of the gzip trailer
	var batches [][]byte
	for range n {
		batches = append(batches, records.AppendBatch(nil, &records.Batch{Attributes: hostile.Gzip, NumRecords: 1,
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Records: z}))
	}
	return hostile.Produce(batches...)
}

// TestFailedInflationCounts: a batch that inflates as far as its bytes go
// and then fails (a wrong checksum at the end) has cost the work of what
// it inflated, which counts against the frame's inflation budget as
// inflated bytes do; batches after the budget is spent are not inflated.
// Before, only a batch stopped by its size cap counted: a frame of 200
// such batches (230 KB) inflated 200 MiB under a budget of 15 MiB.
func TestFailedInflationCounts(t *testing.T) {
	c := inflating(t)
	const n = 200
	b := corruptBatches(n)
	var f *Frame
	u := hostile.Measure(func() { f = Decode(c, b, Options{}) })
	bud := f.bud
	t.Logf("%d bytes, %d batches: inflated %d of %d, allocated %d MiB; %s", len(b), n, bud.Inflated(), bud.MaxInflate, u.Total>>20, f.Budget)
	// What was inflated (within the budget), in buffers grown by
	// doubling, and the decoders' state: a few times the budget (more
	// under the race detector); every batch inflated cost 711 MiB.
	if max := uint64(8*bud.MaxInflate + 64*int64(len(b))); u.Total > max {
		t.Errorf("allocated %d MiB for %d bytes with an inflation budget of %d MiB; want at most %d MiB", u.Total>>20, len(b), bud.MaxInflate>>20, max>>20)
	}
	if !strings.Contains(f.Budget, "inflation budget") {
		t.Errorf("Budget = %q; want it to say the inflation budget was spent", f.Budget)
	}
}
