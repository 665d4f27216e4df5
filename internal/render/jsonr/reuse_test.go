package jsonr

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/span"
)

// compressedProduce is a Produce request of one batch per codec given,
// each of n records whose values (size bytes of log-like text) are
// written with seed, so that frames differ in every inflated byte.
func inflatingProduce(seed, n, size int, codecs ...int) []byte {
	var batches [][]byte
	for _, cd := range codecs {
		var raw []byte
		for i := range n {
			line := fmt.Appendf(nil, "GET /items/%d?seed=%d codec=%d 200; ", i, seed, cd)
			r := kmsg.Record{OffsetDelta: int32(i), Key: fmt.Appendf(nil, "k%d-%d", seed, i),
				Value: bytes.Repeat(line, size/len(line)+1)[:size]}
			r.Length = int32(len(r.AppendTo(nil)) - 1)
			raw = r.AppendTo(raw)
		}
		batches = append(batches, hostile.Batch(cd, raw, n))
	}
	return hostile.Produce(batches...)
}

// TestReusedTreeInflated decodes frames of compressed batches, of
// different codecs, counts and sizes, one after another into one tree
// (as decode --pcap and the proxy do), and checks that each line is the
// one a fresh tree gives: the inflated batches' trees and their bytes,
// reused from the frame before (span.Tree.SpareTree), carry nothing of
// it.
func TestReusedTreeInflated(t *testing.T) {
	c := inflating(t)
	frames := [][]byte{
		inflatingProduce(1, 40, 300, hostile.Zstd, hostile.LZ4),
		inflatingProduce(2, 5, 2000, hostile.Gzip),
		inflatingProduce(3, 60, 100, hostile.Snappy, hostile.Zstd, hostile.LZ4),
		inflatingProduce(4, 1, 10, hostile.Zstd),
		inflatingProduce(1, 40, 300, hostile.Zstd, hostile.LZ4),
	}
	tree := &span.Tree{}
	for round := range 2 {
		for i, fr := range frames {
			fresh, err := AppendLine(nil, report.Decode(c, fr, report.Options{Lean: true}), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(fresh, []byte("bytes inflated")) {
				t.Fatalf("frame %d: not inflated: %.300s", i, fresh)
			}
			got, err := AppendLine(nil, report.Decode(c, fr, report.Options{Lean: true, Tree: tree}), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, fresh) {
				t.Errorf("round %d, frame %d: the line from the reused tree differs from a fresh tree's", round, i)
			}
		}
	}
}

// TestReusedTreeInflatedAllocates: a frame of compressed batches decoded
// into a reused tree allocates a small part of what it inflates to: the
// inflated bytes and their trees reuse the buffers of the frame before.
// (Before, each batch's bytes grew from 512 bytes by doubling and its
// tree from nothing: three times the inflated bytes a frame.)
func TestReusedTreeInflatedAllocates(t *testing.T) {
	if raceEnabled {
		t.Skip("-race drops pooled decompressors at random and moves allocations to the heap: the bytes allocated say nothing of the reuse")
	}
	c := inflating(t)
	fr := inflatingProduce(1, 100, 1024, hostile.Zstd, hostile.LZ4, hostile.Gzip, hostile.Snappy)
	tree := &span.Tree{}
	// No collection from the first decode to the last measured: a
	// collection empties the decompressors' pools, and the next batch
	// would make a decompressor again (hundreds of KiB, once).
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	decode := func() {
		if f := report.Decode(c, fr, report.Options{Lean: true, Tree: tree}); !f.OK() {
			t.Fatal(f.Error)
		}
	}
	decode()
	inflated := 0
	for id := range tree.Nodes {
		if d := tree.Detached(span.ID(id)); d != nil {
			inflated += len(d.Bytes)
		}
	}
	if inflated < 4*100*1024 {
		t.Fatalf("%d bytes inflated, want the four batches' %d at least", inflated, 4*100*1024)
	}
	// The least of five decodes: a goroutine that moves to another P
	// between a decompressor's Put and the next Get misses the pool's
	// private slot and makes one again (on a loaded machine); without the
	// reuse every decode allocates several times the inflated bytes.
	per := -1
	for range 5 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		decode()
		runtime.ReadMemStats(&after)
		if n := int(after.TotalAlloc - before.TotalAlloc); per < 0 || n < per {
			per = n
		}
	}
	t.Logf("%d bytes inflated a frame, %d bytes allocated by the least-allocating decode", inflated, per)
	if per > inflated/8 {
		t.Errorf("%d bytes allocated a frame that inflates to %d; want at most an eighth of it", per, inflated)
	}
}

// TestReusedTreeSpareOfFailedBatch: a batch that does not inflate gives
// back the spare tree it took, so the next frame's batch reuses it (it
// was dropped before, one lost reuse per bad batch).
func TestReusedTreeSpareOfFailedBatch(t *testing.T) {
	c := inflating(t)
	good := inflatingProduce(1, 10, 100, hostile.Zstd)
	bad := hostile.Produce(records.AppendBatch(nil, &records.Batch{Attributes: int16(hostile.Zstd), NumRecords: 1,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Records: []byte("these bytes are not zstd")}))
	tree := &span.Tree{}
	detached := func() *span.Tree {
		for id := range tree.Nodes {
			if d := tree.Detached(span.ID(id)); d != nil {
				return d
			}
		}
		return nil
	}
	report.Decode(c, good, report.Options{Lean: true, Tree: tree})
	first := detached()
	if first == nil {
		t.Fatal("the good frame's batch did not inflate")
	}
	line, err := AppendLine(nil, report.Decode(c, bad, report.Options{Lean: true, Tree: tree}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(line, []byte("zstd")) || detached() != nil {
		t.Fatalf("the bad batch inflated, or says nothing of zstd: %.400s", line)
	}
	report.Decode(c, good, report.Options{Lean: true, Tree: tree})
	if got := detached(); got != first {
		t.Error("the good frame's batch after a bad one did not reuse the spare tree the bad one took")
	}
}

// TestReusedTreeIdleSpares: a tree whose frame needed few of the spares
// its last frame left holds no more than a few MiB of the rest once
// decoded (span.Tree.TrimSpares), so that dozens of trees in flight in a
// capture's pipeline do not each hold a large frame's buffers.
func TestReusedTreeIdleSpares(t *testing.T) {
	c := inflating(t)
	big := inflatingProduce(1, 1000, 1024, hostile.Zstd, hostile.Zstd, hostile.Zstd, hostile.Zstd, hostile.Zstd, hostile.Zstd)
	small := inflatingProduce(2, 10, 100, hostile.Zstd)
	tree := &span.Tree{}
	if f := report.Decode(c, big, report.Options{Lean: true, Tree: tree}); !f.OK() {
		t.Fatal(f.Error)
	}
	if f := report.Decode(c, small, report.Options{Lean: true, Tree: tree}); !f.OK() {
		t.Fatal(f.Error)
	}
	idle := tree.Retained() - int64(cap(tree.Nodes))*int64(unsafe.Sizeof(span.Row{}))
	const bound = 4 << 20 // span's maxIdleSpares
	if idle > bound {
		t.Errorf("after a frame of one small batch the tree holds %d bytes of spares, want at most %d", idle, bound)
	}
	if idle == 0 {
		t.Error("the tree kept no spare at all")
	}
}
