package wire

import (
	"encoding/binary"
	"errors"
	"testing"
	"testing/quick"
)

// The varint encodings are checked against encoding/binary, an independent
// implementation of the same LEB128/zig-zag scheme.
func TestUvarintMatchesStdlib(t *testing.T) {
	f := func(v uint32) bool {
		got := AppendUvarint(nil, v)
		want := binary.AppendUvarint(nil, uint64(v))
		if string(got) != string(want) || UvarintLen(v) != len(want) {
			return false
		}
		r := Reader{B: got}
		back, err := r.Uvarint()
		return err == nil && back == v && r.Off == len(got)
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 20000}); err != nil {
		t.Fatal(err)
	}
}

func TestVarintMatchesStdlib(t *testing.T) {
	f := func(v int32, w int64) bool {
		if string(AppendVarint(nil, v)) != string(binary.AppendVarint(nil, int64(v))) {
			return false
		}
		if VarintLen(v) != len(binary.AppendVarint(nil, int64(v))) {
			return false
		}
		if string(AppendVarlong(nil, w)) != string(binary.AppendVarint(nil, w)) {
			return false
		}
		r := Reader{B: AppendVarlong(AppendVarint(nil, v), w)}
		a, err1 := r.Varint()
		b, err2 := r.Varlong()
		return err1 == nil && err2 == nil && a == v && b == w && r.Remaining() == 0
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 20000}); err != nil {
		t.Fatal(err)
	}
}

func TestReaderErrors(t *testing.T) {
	cases := []struct {
		name string
		in   []byte
		read func(r *Reader) error
		want error
	}{
		{"int16 short", []byte{1}, func(r *Reader) error { _, err := r.Int16(); return err }, ErrTruncated},
		{"int32 short", []byte{1, 2, 3}, func(r *Reader) error { _, err := r.Int32(); return err }, ErrTruncated},
		{"int64 short", make([]byte, 7), func(r *Reader) error { _, err := r.Int64(); return err }, ErrTruncated},
		{"uvarint unterminated", []byte{0x80, 0x80}, func(r *Reader) error { _, err := r.Uvarint(); return err }, ErrTruncated},
		{"uvarint six bytes", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, func(r *Reader) error { _, err := r.Uvarint(); return err }, ErrVarint},
		{"varlong eleven bytes", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, func(r *Reader) error { _, err := r.Varlong(); return err }, ErrVarint},
		{"span past end", []byte{1, 2}, func(r *Reader) error { _, err := r.Span(3); return err }, ErrTruncated},
		{"span negative", []byte{1, 2}, func(r *Reader) error { _, err := r.Span(-1); return err }, ErrTruncated},
	}
	for _, c := range cases {
		r := Reader{B: c.in}
		if err := c.read(&r); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
		if r.Off != 0 {
			t.Errorf("%s: offset moved to %d on error", c.name, r.Off)
		}
	}
}

func TestFixedWidth(t *testing.T) {
	b := AppendInt16(nil, -2)
	b = AppendUint16(b, 65535)
	b = AppendInt32(b, -3)
	b = AppendUint32(b, 0xdeadbeef)
	b = AppendInt64(b, -4)
	b = AppendFloat64(b, 1.5)
	b = AppendBool(b, true)
	b = AppendInt8(b, -1)
	r := Reader{B: b}
	i16, _ := r.Int16()
	u16, _ := r.Uint16()
	i32, _ := r.Int32()
	u32, _ := r.Uint32()
	i64, _ := r.Int64()
	f, _ := r.Float64()
	bl, _ := r.Int8()
	i8, err := r.Int8()
	if err != nil || i16 != -2 || u16 != 65535 || i32 != -3 || u32 != 0xdeadbeef || i64 != -4 || f != 1.5 || bl != 1 || i8 != -1 || r.Remaining() != 0 {
		t.Fatalf("round trip mismatch: %v %v %v %v %v %v %v %v %v", i16, u16, i32, u32, i64, f, bl, i8, err)
	}
}
