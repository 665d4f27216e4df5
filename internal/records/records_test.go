package records

import (
	"errors"
	"testing"

	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

// A whole batch followed by the first 30 bytes of another: Fetch responses
// may end like this (Kafka ignores the cut entry), requests may not.
var descRecordsRoot = span.NewDesc("Records", "records", "")

func TestTrailingPartialEntry(t *testing.T) {
	whole := EmptyBatch()
	payload := append(append([]byte(nil), whole...), whole[:30]...)
	for _, allow := range []bool{true, false} {
		tr := &span.Tree{}
		tr.Reset(payload)
		tr.N(tr.Add(span.None, descRecordsRoot, 0, span.CatRecordBatch)).Val = span.ValRecords
		d := Decoder{R: &wire.Reader{B: payload}, Tree: tr, AllowPartial: allow}
		err := d.Decode(0)
		if d.Batches != 1 {
			t.Errorf("allow=%v: %d whole batches, want 1", allow, d.Batches)
		}
		last := tr.N(0).Last
		if n := tr.N(last); tr.Flag(last) != "partial" || int(n.Off) != len(whole) || n.Len != 30 {
			t.Errorf("allow=%v: last node %s [%d,%d] flag %q, want the partial entry at [%d,30]", allow, tr.Name(last), n.Off, n.Len, tr.Flag(last), len(whole))
		}
		if allow {
			if err != nil {
				t.Errorf("allow=true: %v", err)
			}
			continue
		}
		var de *wire.DecodeError
		if !errors.As(err, &de) || !errors.Is(err, ErrBatchLength) || de.Offset != len(whole) || de.Path != "[1]" {
			t.Errorf("allow=false: got %v, want ErrBatchLength at offset %d path [1]", err, len(whole))
		}
		if tr.Err(last) == nil {
			t.Errorf("allow=false: the partial node carries no error")
		}
	}
}
