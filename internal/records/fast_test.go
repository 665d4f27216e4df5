package records_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"testing"

	"github.com/manifester/manifester/bench/corpus"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/span"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// recordsArea encodes recs as a records area with kmsg.
func recordsArea(recs []kmsg.Record) []byte {
	var b []byte
	for _, r := range recs {
		r.Length = 0
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		b = r.AppendTo(b)
	}
	return b
}

// fastCases returns records areas of many shapes: the corpus's, null and
// empty keys and values, none to many headers, long values and deltas
// whose varints take three bytes.
func fastCases() [][]byte {
	var out [][]byte
	for _, sizes := range [][2]int{{3, 16}, {1, 0}, {25, 1024}, {2, 200}} {
		b := corpus.RecordBatch(uint64(sizes[0]), sizes[0], sizes[1])
		out = append(out, b[records.BatchHeaderSize:])
	}
	hdrs := func(n int) []kmsg.Header {
		var h []kmsg.Header
		for i := range n {
			h = append(h, kmsg.Header{Key: fmt.Sprintf("h%d", i), Value: []byte{byte(i), 'v'}})
		}
		return h
	}
	shapes := [][]kmsg.Record{
		{{Key: nil, Value: nil}},
		{{Key: []byte{}, Value: []byte{}}},
		{{Key: []byte("k"), Value: []byte("text value\n"), Headers: hdrs(8)}},
		{{Key: []byte("k"), Value: []byte("v"), Headers: hdrs(9)}},
		{{Key: []byte("k"), Value: []byte("v"), Headers: hdrs(255)}, {Headers: hdrs(256)}},
		{{Key: []byte("k"), Value: []byte("v"), Headers: []kmsg.Header{{Key: "", Value: nil}}}},
		{{TimestampDelta64: 1 << 20, OffsetDelta: 1 << 20, Key: []byte("k")}},
		{{TimestampDelta64: -5, OffsetDelta: 8191, Key: bytes.Repeat([]byte("x"), 8191)}},
		{{Value: bytes.Repeat([]byte{0xc3, 0xa9}, 5000)}},
		{{Attributes: -1, Value: []byte("\x00bin")}, {Key: []byte("b"), Headers: hdrs(2)}},
	}
	for _, s := range shapes {
		out = append(out, recordsArea(s))
	}
	return out
}

// batchOf wraps a records area in a batch whose recordsCount is n.
func batchOf(area []byte, n int32) []byte {
	return records.AppendBatch(nil, &records.Batch{NumRecords: n, Records: area, ProducerID: -1})
}

// sameDecode decodes b with the fast path and with the general path and
// reports how the trees or errors differ.
func sameDecode(t *testing.T, what string, b []byte) {
	t.Helper()
	for _, spans := range []bool{true, false} {
		fast, ferr := decode(b, spans)
		was := records.SetGeneralOnly(true)
		gen, gerr := decode(b, spans)
		records.SetGeneralOnly(was)
		if fmt.Sprint(ferr) != fmt.Sprint(gerr) {
			t.Fatalf("%s spans=%v: error %v, general path %v", what, spans, ferr, gerr)
		}
		if !spans {
			continue
		}
		if !reflect.DeepEqual(fast.Nodes, gen.Nodes) {
			t.Fatalf("%s: %d rows, general path %d; they differ", what, fast.Len(), gen.Len())
		}
		for id := range fast.Nodes {
			i := span.ID(id)
			if fast.Note(i) != gen.Note(i) || fast.Flag(i) != gen.Flag(i) || fmt.Sprint(fast.Err(i)) != fmt.Sprint(gen.Err(i)) {
				t.Fatalf("%s: row %d (%s) extras differ", what, id, fast.Path(i))
			}
		}
	}
}

// TestFastRecordsMatchGeneral checks that records read by the fast path
// give the rows, errors and offsets the general path gives: for batches
// of many shapes, with the count right and wrong, cut short at every
// byte, and with every byte of the records replaced by values that make
// varints and lengths lie (the CRC recomputed, so the records are read).
func TestFastRecordsMatchGeneral(t *testing.T) {
	for ci, area := range fastCases() {
		n := int32(countRecords(area))
		for _, count := range []int32{n, n + 1, max(n-1, 0)} {
			sameDecode(t, fmt.Sprintf("case %d count %d", ci, count), batchOf(area, count))
		}
		if len(area) > 1200 {
			area = area[:1200]
		}
		for cut := range len(area) {
			sameDecode(t, fmt.Sprintf("case %d cut at %d", ci, cut), batchOf(area[:cut], n))
		}
		for at := range len(area) {
			for _, v := range []byte{0x00, 0x01, 0x02, 0x03, 0x7f, 0x80, 0xfe, 0xff} {
				c := bytes.Clone(area)
				c[at] = v
				sameDecode(t, fmt.Sprintf("case %d byte %d = %#x", ci, at, v), batchOf(c, n))
			}
		}
	}
}

// countRecords counts the records of a well-formed records area.
func countRecords(b []byte) int {
	n := 0
	for len(b) > 0 {
		l, k := binary.Varint(b)
		b = b[k+int(l):]
		n++
	}
	return n
}
