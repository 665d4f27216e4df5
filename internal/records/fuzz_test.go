package records_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/manifester/manifester/bench/corpus"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

var descRecords = span.NewDesc("Records", "records", "")

// prefixed is a row's path as the decoder's Path "Records" makes it.
func prefixed(p string) string {
	if p == "" || p[0] == '[' {
		return "Records" + p
	}
	return "Records." + p
}

// decode runs the records decoder over b, with spans when spans is set.
func decode(b []byte, spans bool) (*span.Tree, error) {
	d := records.Decoder{R: &wire.Reader{B: b}, Path: "Records"}
	if !spans {
		return nil, d.Decode(span.None)
	}
	tr := &span.Tree{}
	tr.Reset(b)
	tr.N(tr.Add(span.None, descRecords, 0, span.CatRecordBatch)).Val = span.ValRecords
	d.Tree = tr
	err := d.Decode(0)
	tr.N(0).Len = int32(d.R.Off)
	if err != nil {
		// the error's path is the path of the row it is set on
		if row := d.ErrRow(); row != span.None {
			if de := err.(*wire.DecodeError); de.Path != prefixed(tr.Path(row)) {
				return nil, fmt.Errorf("error path %q, its row's %q", de.Path, prefixed(tr.Path(row)))
			}
		}
	}
	return tr, err
}

// FuzzRecordBatch decodes arbitrary bytes as a records payload, seeded with
// real RecordBatch v2s written by franz-go's kmsg (several records with
// keys, values and headers), the empty batch and a truncated batch.
// Properties: no panic; spans and plain decoding give the same error; every
// error is a *wire.DecodeError inside the input; on success the leaves tile
// the input exactly; with the first batch's CRC fixed, the records' fast
// path gives the general path's rows and error.
func FuzzRecordBatch(f *testing.F) {
	f.Add(records.EmptyBatch())
	f.Add(corpus.RecordBatch(1, 3, 16))
	f.Add(corpus.RecordBatch(2, 1, 0))
	two := append(corpus.RecordBatch(3, 2, 8), corpus.RecordBatch(4, 2, 8)...)
	f.Add(two)
	f.Add(two[:len(two)-5])
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRecords(t, data)
		// Most mutations break the CRC; check the same bytes with the
		// first batch's CRC fixed so the fuzzer reaches the records.
		if len(data) >= records.BatchHeaderSize && data[16] == 2 {
			end := 12 + int(int32(uint32(data[8])<<24|uint32(data[9])<<16|uint32(data[10])<<8|uint32(data[11])))
			if end >= 21 && end <= len(data) {
				m := append([]byte(nil), data...)
				c := records.CRC32C(m[21:end])
				m[17], m[18], m[19], m[20] = byte(c>>24), byte(c>>16), byte(c>>8), byte(c)
				checkRecords(t, m)
				sameDecode(t, "CRC fixed", m)
			}
		}
	})
}

func checkRecords(t *testing.T, data []byte) {
	root, errS := decode(data, true)
	_, errP := decode(data, false)
	if fmt.Sprint(errS) != fmt.Sprint(errP) {
		t.Fatalf("spans and plain disagree: %v vs %v", errS, errP)
	}
	if errS != nil {
		var de *wire.DecodeError
		if !errors.As(errS, &de) || de.Offset < 0 || de.Offset > len(data) {
			t.Fatalf("bad error %T %v", errS, errS)
		}
		return
	}
	end := 0
	for _, id := range root.Leaves(root.Root()) {
		if id == root.Root() {
			break
		}
		if l := root.N(id); int(l.Off) != end {
			t.Fatalf("leaf %s at %d, want %d", root.Path(id), l.Off, end)
		}
		end += int(root.N(id).Len)
	}
	if !root.IsLeaf(root.Root()) && end != len(data) {
		t.Fatalf("leaves end at %d of %d", end, len(data))
	}
}

// TestRecordBatchLiesAllocateLittle sets recordsCount, record lengths and
// header counts of a real batch to huge values (CRC fixed up, so the claims
// are believed as far as the bytes allow) and checks that decoding
// allocates in proportion to the input.
func TestRecordBatchLiesAllocateLittle(t *testing.T) {
	b := corpus.RecordBatch(5, 4, 32)
	root, err := decode(b, true)
	if err != nil {
		t.Fatal(err)
	}
	var cases [][]byte
	root.Walk(root.Root(), func(id span.ID, _ int) {
		off := int(root.N(id).Off)
		switch root.Name(id) {
		case "recordsCount":
			m := append([]byte(nil), b...)
			m[off], m[off+1], m[off+2], m[off+3] = 0x7f, 0xff, 0xff, 0xff
			cases = append(cases, fixCRC(m))
		case "length", "headerCount", "keyLength", "key", "value":
			if root.Type(id) == "varint" || root.N(id).Enc == span.EncVarint {
				// 0xfe 0xff 0xff 0xff 0x07: zig-zag 2^31-1, in place of the
				// varint (same-size replacement is not needed: the batch
				// length and CRC are fixed up).
				m := append(append(append([]byte(nil), b[:off]...), 0xfe, 0xff, 0xff, 0xff, 0x07), b[off+varintLen(b[off:]):]...)
				cases = append(cases, fixCRC(fixLength(m)))
			}
		}
	})
	if len(cases) < 5 {
		t.Fatalf("only %d lying batches", len(cases))
	}
	for i, m := range cases {
		for _, spans := range []bool{false, true} {
			var a, z runtime.MemStats
			runtime.ReadMemStats(&a)
			_, err := decode(m, spans)
			runtime.ReadMemStats(&z)
			got := z.TotalAlloc - a.TotalAlloc
			if limit := uint64(1024*len(m) + 64<<10); got > limit {
				t.Errorf("case %d (spans=%v, err %v): allocated %d bytes for %d input bytes", i, spans, err, got, len(m))
			}
		}
	}
}

func varintLen(b []byte) int {
	for i, c := range b {
		if c < 0x80 {
			return i + 1
		}
	}
	return len(b)
}

func fixLength(m []byte) []byte {
	n := uint32(len(m) - 12)
	m[8], m[9], m[10], m[11] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return m
}

func fixCRC(m []byte) []byte {
	c := records.CRC32C(m[21:])
	m[17], m[18], m[19], m[20] = byte(c>>24), byte(c>>16), byte(c>>8), byte(c)
	return m
}

// TestHeaderCountErrorOffset: a record's header count that is negative or
// claims more headers than its bytes could hold is an error at the count's
// own offset (as every other count's and field's error is), not at the
// byte after it; a negative count says it is negative.
func TestHeaderCountErrorOffset(t *testing.T) {
	b := corpus.RecordBatch(5, 4, 32)
	root, err := decode(b, true)
	if err != nil {
		t.Fatal(err)
	}
	at := -1
	root.Walk(root.Root(), func(id span.ID, _ int) {
		if at < 0 && root.Name(id) == "headerCount" {
			at = int(root.N(id).Off)
		}
	})
	if at < 0 {
		t.Fatal("no headerCount")
	}
	for _, tc := range []struct {
		varint []byte
		want   error
	}{
		{[]byte{0xfe, 0xff, 0xff, 0xff, 0x07}, wire.ErrCountTooLarge}, // 2^31-1
		{[]byte{0x01}, records.ErrHeaderCount},                        // -1
	} {
		m := append(append(append([]byte(nil), b[:at]...), tc.varint...), b[at+varintLen(b[at:]):]...)
		m = fixCRC(fixLength(m))
		for _, spans := range []bool{false, true} {
			_, err := decode(m, spans)
			var de *wire.DecodeError
			if !errors.As(err, &de) || !errors.Is(err, tc.want) || de.Offset != at || !strings.HasSuffix(de.Path, "headerCount") {
				t.Errorf("header count % x (spans %v): %v, want %v at offset %d", tc.varint, spans, err, tc.want, at)
			}
		}
	}
}
