package codec_test

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

// segmentOf concatenates kmsg batches as a log segment holds them, the
// base offset of each following the last offset of the one before.
func segmentOf(batches ...[]byte) []byte {
	var seg []byte
	next := int64(0)
	for _, b := range batches {
		b = append([]byte(nil), b...)
		binary.BigEndian.PutUint64(b, uint64(next)) // the base offset is outside the CRC
		next += int64(binary.BigEndian.Uint32(b[23:])) + 1
		seg = append(seg, b...)
	}
	return seg
}

// TestDecodeRecordsSegment decodes a records area on its own, as a log
// segment of __consumer_offsets holds it (two kmsg batches): every batch
// and record is a node, the keys and values read as their record types,
// with their bodies in the Record category, and the leaves tile the bytes.
// A last batch cut short is shown and ignored with allowPartial and is an
// error without; an unknown magic is an error at its byte, with the
// batches before it shown and the rest undecoded.
func TestDecodeRecordsSegment(t *testing.T) {
	c := recordsCodec(t)
	key := (&kmsg.OffsetCommitKey{Version: 1, Group: "grp", Topic: "orders", Partition: 3}).AppendTo(nil)
	val := (&kmsg.OffsetCommitValue{Version: 3, Offset: 42, LeaderEpoch: 5, Metadata: "m", CommitTimestamp: 1700000000000}).AppendTo(nil)
	gkey := (&kmsg.GroupMetadataKey{Version: 2, Group: "grp"}).AppendTo(nil)
	b1, b2 := kmsgBatch(key, val, gkey, nil), kmsgBatch(key, val)
	seg := segmentOf(b1, b2)

	tr, err := c.DecodeRecords(seg, "__consumer_offsets", false, codec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if probs := checkTree(tr, len(seg)); len(probs) > 0 {
		t.Fatalf("tree does not tile:\n%s", strings.Join(probs, "\n"))
	}
	root := row{tr, tr.Root()}
	if root.Name() != "Records" || root.Note() != "2 batches" || len(root.Kids()) != 2 {
		t.Fatalf("root %s, note %q, %d children", root.Name(), root.Note(), len(root.Kids()))
	}
	if got := child(root.Kids()[1], "baseOffset"); got == nil || got.Int() != 2 {
		t.Errorf("second batch's baseOffset: %v, want 2", got)
	}
	keys, vals := recordNodes(tr)
	if len(keys) != 3 || keys[0].Type() != "OffsetCommitKey" || keys[1].Type() != "GroupMetadataKey" || keys[2].Type() != "OffsetCommitKey" {
		t.Fatalf("%d keys: %v", len(keys), keys)
	}
	if got := fieldsOf(vals[2].Kids()[2]); !strings.HasPrefix(got, `offset= 42 leaderEpoch= 5 metadata= "m" (int16 len=1)`) {
		t.Errorf("third value's fields: %s", got)
	}
	for _, n := range vals[0].Kids()[2].Kids() {
		if n.Cat() != span.CatRecord {
			t.Errorf("value field %s has category %v, want Record", n.Name(), n.Cat())
		}
	}
	// Another topic's records stay bytes.
	if tr, err = c.DecodeRecords(seg, "orders", false, codec.Options{}); err != nil {
		t.Fatal(err)
	}
	if keys, _ := recordNodes(tr); keys[0].Type() != "bytes" {
		t.Errorf("orders key read as %s", keys[0].Type())
	}

	cut := append(append([]byte(nil), seg...), b2[:30]...)
	tr, err = c.DecodeRecords(cut, "__consumer_offsets", true, codec.Options{})
	if err != nil {
		t.Fatalf("cut last batch with allowPartial: %v", err)
	}
	if probs := checkTree(tr, len(cut)); len(probs) > 0 {
		t.Errorf("cut: tree does not tile:\n%s", strings.Join(probs, "\n"))
	}
	if last := (row{tr, tr.Root()}).Kids()[2]; last.Flag() != "partial" {
		t.Errorf("cut: last node %s flagged %q, want partial", last.Name(), last.Flag())
	}
	_, err = c.DecodeRecords(cut, "__consumer_offsets", false, codec.Options{})
	var de *wire.DecodeError
	if !errors.As(err, &de) || !errors.Is(err, records.ErrBatchLength) || de.Offset != len(seg) || de.Path != "Records[2]" {
		t.Errorf("cut without allowPartial: %v (%+v), want a batch length error at %d, Records[2]", err, de, len(seg))
	}

	bad := append([]byte(nil), seg...)
	bad[len(b1)+16] = 9
	tr, err = c.DecodeRecords(bad, "__consumer_offsets", false, codec.Options{})
	if !errors.As(err, &de) || !errors.Is(err, records.ErrMagic) || de.Offset != len(b1)+16 || !strings.HasPrefix(de.Path, "Records") {
		t.Fatalf("bad magic: %v (%+v), want an unknown magic at %d", err, de, len(b1)+16)
	}
	if probs := checkTree(tr, len(bad)); len(probs) > 0 {
		t.Errorf("bad magic: tree does not tile:\n%s", strings.Join(probs, "\n"))
	}
	kids := (row{tr, tr.Root()}).Kids()
	if len(kids) != 2 || kids[0].Name() != "RecordBatch" || kids[1].Name() != "undecoded" || kids[1].Off() != len(b1) {
		t.Errorf("bad magic: root's children %v, want the first batch then the rest undecoded from %d", kids, len(b1))
	}
}

// FuzzDecodeRecords: any bytes, read as a __consumer_offsets segment,
// decode without panicking into a tree that tiles them, with or without
// a cut last entry allowed, whatever the error.
func FuzzDecodeRecords(f *testing.F) {
	key := (&kmsg.OffsetCommitKey{Version: 1, Group: "grp", Topic: "orders", Partition: 3}).AppendTo(nil)
	val := (&kmsg.OffsetCommitValue{Version: 3, Offset: 42}).AppendTo(nil)
	seg := segmentOf(kmsgBatch(key, val), kmsgBatch(key, nil))
	f.Add(seg, false)
	f.Add(seg[:len(seg)-7], true)
	c := recordsCodec(f)
	f.Fuzz(func(t *testing.T, b []byte, partial bool) {
		tr, err := c.DecodeRecords(b, "__consumer_offsets", partial, codec.Options{})
		if len(b) == 0 { // no entries: the root alone, of no bytes
			if err != nil || tr.Len() != 1 {
				t.Fatalf("empty: %d nodes, %v", tr.Len(), err)
			}
			return
		}
		if probs := checkTree(tr, len(b)); len(probs) > 0 {
			t.Fatalf("tree does not tile:\n%s", strings.Join(probs, "\n"))
		}
	})
}
