package records_test

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestInflatedKeyCutShowsPrefixOnly: a gzip batch whose one record's key
// length (60) runs past the record shows, in the inflated tree, the key's
// prefix and no value ("no value (varint len=60)"), not an empty key.
func TestInflatedKeyCutShowsPrefixOnly(t *testing.T) {
	area := recordsArea([]kmsg.Record{{Key: []byte("hello"), Value: []byte("v")}})
	at := bytes.Index(area, []byte("\x0ahello"))
	if at < 0 {
		t.Fatalf("no key length 5 before the key in % x", area)
	}
	area[at] = 120 // zig-zag 60
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(area); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	b := records.AppendBatch(nil, &records.Batch{Attributes: 1, NumRecords: 1, Records: z.Bytes(), ProducerID: -1})
	tr := &span.Tree{}
	tr.Reset(b)
	tr.N(tr.Add(span.None, descRecords, 0, span.CatRecordBatch)).Val = span.ValRecords
	d := records.Decoder{R: &wire.Reader{B: b}, Path: "Records", Tree: tr, Decompress: compress.Decompressor()}
	if err := d.Decode(0); err != nil {
		t.Fatalf("the batch itself is whole: %v", err)
	}
	var sub *span.Tree
	tr.Walk(0, func(id span.ID, _ int) {
		if x := tr.Extra(id, false); x != nil && x.Detached != nil {
			sub = x.Detached
		}
	})
	if sub == nil {
		t.Fatal("no inflated tree")
	}
	found := false
	sub.Walk(0, func(id span.ID, _ int) {
		if sub.Name(id) != "key" {
			return
		}
		found = true
		if got, want := sub.ValueText(id), "no value (varint len=60)"; got != want {
			t.Errorf("key: %q, want %q", got, want)
		}
		if _, ok := sub.AppendValueJSON(nil, id); ok {
			t.Error("the cut key has a JSON value")
		}
	})
	if !found {
		t.Fatalf("no key row in the inflated tree")
	}
}
