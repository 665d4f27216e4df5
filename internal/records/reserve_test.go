package records_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// inflatedTrees decodes batches snappy batches of area, each claiming
// count records, into a fresh tree under a frame's budget, and returns
// their inflated trees and the budget.
func inflatedTrees(t *testing.T, area []byte, count int32, batches int) ([]*span.Tree, *budget.Budget) {
	t.Helper()
	var b []byte
	for range batches {
		b = records.AppendBatch(b, &records.Batch{Attributes: 2, NumRecords: count, Records: snappyBlock(area), ProducerID: -1})
	}
	bud := budget.Limits{}.For(context.Background(), len(b))
	tr := &span.Tree{}
	tr.Reset(b)
	tr.N(tr.Add(span.None, descRecords, 0, span.CatRecordBatch)).Val = span.ValRecords
	d := records.Decoder{R: &wire.Reader{B: b}, Path: "Records", Tree: tr, Decompress: compress.Decompressor(), Budget: bud}
	_ = d.Decode(0)
	var subs []*span.Tree
	tr.Walk(0, func(id span.ID, _ int) {
		if x := tr.Extra(id, false); x != nil && x.Detached != nil {
			subs = append(subs, x.Detached)
		}
	})
	if len(subs) == 0 {
		t.Fatal("no inflated tree")
	}
	return subs, bud
}

// snappyBlock is Kafka's snappy framing's simplest form: one raw block.
func snappyBlock(b []byte) []byte { return s2.EncodeSnappy(nil, b) }

// TestInflatedRowsReservedOnce: the inflated records' rows are made room
// for at once, from the batch's record count, not regrown as they come
// (which copied the table a dozen times for a batch of thousands of
// records and left up to a quarter of it unused); and a batch that claims
// far more records than its bytes can hold reserves only what they can.
func TestInflatedRowsReservedOnce(t *testing.T) {
	recs := make([]kmsg.Record, 5000)
	for i := range recs {
		recs[i].OffsetDelta = int32(i)
	}
	area := recordsArea(recs)
	subs, _ := inflatedTrees(t, area, int32(len(recs)), 1)
	sub := subs[0]
	if sub.Len() < 8*len(recs) {
		t.Fatalf("%d rows for %d records", sub.Len(), len(recs))
	}
	if spare := cap(sub.Nodes) - sub.Len(); spare > 256 {
		t.Errorf("%d rows used of a table of %d: regrown as the records came", sub.Len(), cap(sub.Nodes))
	}
	subs, _ = inflatedTrees(t, area, 1<<30, 1)
	if most := (len(area)/7)*8 + 1 + 256; cap(subs[0].Nodes) > most {
		t.Errorf("a batch of %d bytes claiming 2^30 records: a table of %d rows, want at most %d", len(area), cap(subs[0].Nodes), most)
	}
}

// TestInflatedRowsReservedWithinBudget: batches whose records end at once
// (bytes that are no record) but which claim many cannot make room
// beyond the frame's node budget between them: what they hold is what
// the budget allows, not what each claims.
func TestInflatedRowsReservedWithinBudget(t *testing.T) {
	junk := bytes.Repeat([]byte{0x7f}, 64<<10) // a record length of -64, at once
	subs, bud := inflatedTrees(t, junk, 1<<30, 200)
	if len(subs) < 100 {
		t.Fatalf("%d inflated trees of 200 batches", len(subs))
	}
	rows := 0
	for _, s := range subs {
		rows += cap(s.Nodes)
	}
	if most := int(bud.MaxNodes) + 256*len(subs); rows > most {
		t.Errorf("%d batches of junk claiming 2^30 records: %d rows made room for, want at most %d (the node budget, %d)", len(subs), rows, most, bud.MaxNodes)
	}
	t.Logf("%d batches: %d rows made room for, node budget %d", len(subs), rows, bud.MaxNodes)
}
