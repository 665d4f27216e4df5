package codec

import (
	"errors"

	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

// descRecordsArea is the root of a records area decoded on its own.
var descRecordsArea = span.NewDesc("Records", "records", "record batches as a partition's log stores them")

// DecodeRecords decodes b as a records area on its own, the way a
// partition's log segment (a .log file, or a KRaft snapshot's .checkpoint
// file) stores it: record batches (and legacy message sets) one after
// another, with no frame around them. The records of an internal topic
// (topic, or [Codec.RecordsTopic] when set) have their keys and values
// decoded as in a records field, their bodies in the Record category.
//
// It returns the span tree, whose root is the area (named "Records") and
// whose offsets count from b's first byte, with opts' budget, and the
// first error, whose path starts with "Records". After an error the tree
// shows what was decoded before it, and the rest of b as undecoded bytes.
// A last entry cut short is an error, unless allowPartial: it is then
// shown and ignored, as Kafka's readers ignore the end of a segment being
// written.
func (c *Codec) DecodeRecords(b []byte, topic string, allowPartial bool, opts Options) (*span.Tree, error) {
	opts.Spans = true
	d := c.newDecoder(b, opts, span.CatRecord)
	t := d.t
	root := t.Add(span.None, descRecordsArea, 0, span.CatRecordBatch)
	row := t.N(root)
	row.Val, row.VLen, row.Len = span.ValRecords, int32(len(b)), int32(len(b))
	rd := records.Decoder{R: &wire.Reader{B: b}, Tree: t, Path: "Records", Decompress: c.Decompress,
		DecompressLimit: c.DecompressLimit, Budget: d.bud, AllowPartial: allowPartial,
		Contents: c.contentsFor(topic, span.CatRecord), ControlContents: c.controlContents(span.CatRecord)}
	err := rd.Decode(root)
	d.done()
	if err != nil {
		if de := (*wire.DecodeError)(nil); errors.As(err, &de) {
			row := rd.ErrRow()
			if row == span.None {
				row = root
			}
			d.place(de, row)
		}
		d.finish(root, len(b), err)
	} else {
		t.Extra(root, true).Note = batchNotes.Of(int64(rd.Batches))
	}
	d.free()
	return t, err
}

// controlContents returns the interpreter of control records alone (their
// types come from the message specs, not the record schemas): a user
// topic's transaction markers, read as kafka-dump-log reads them.
func (c *Codec) controlContents(cat span.Category) records.Contents {
	return func(t *span.Tree, key, value span.ID, control bool) {
		if control {
			(&recDecoder{c: c, t: t, cat: cat}).controlRecord(key, value)
		}
	}
}
