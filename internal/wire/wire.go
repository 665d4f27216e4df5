// Package wire holds the Kafka wire primitives: big-endian fixed-width
// integers, unsigned and zig-zag varints, and a bounds-checked [Reader] that
// knows its offset. It has no knowledge of message specs.
//
// Encoding appends to a caller-owned slice in the style of encoding/binary
// (AppendInt32(dst, v) []byte); decoding reads from a [Reader] whose methods
// return [ErrTruncated] or [ErrVarint] and never panic.
package wire

import (
	"encoding/binary"
	"errors"
	"math"
)

// Sentinel errors returned by [Reader]. Callers wrap them with an offset and a
// field path; test with errors.Is.
var (
	// ErrTruncated means fewer bytes remain than the value needs.
	ErrTruncated = errors.New("truncated: not enough bytes")
	// ErrVarint means a varint ran past its maximum length (5 bytes for
	// 32-bit values, 10 for 64-bit ones).
	ErrVarint = errors.New("invalid varint: too many continuation bytes")
)

// AppendBool appends 1 for true and 0 for false.
func AppendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// AppendInt8 appends v as one byte.
func AppendInt8(dst []byte, v int8) []byte { return append(dst, byte(v)) }

// AppendInt16 appends v big-endian.
func AppendInt16(dst []byte, v int16) []byte { return binary.BigEndian.AppendUint16(dst, uint16(v)) }

// AppendUint16 appends v big-endian.
func AppendUint16(dst []byte, v uint16) []byte { return binary.BigEndian.AppendUint16(dst, v) }

// AppendInt32 appends v big-endian.
func AppendInt32(dst []byte, v int32) []byte { return binary.BigEndian.AppendUint32(dst, uint32(v)) }

// AppendUint32 appends v big-endian.
func AppendUint32(dst []byte, v uint32) []byte { return binary.BigEndian.AppendUint32(dst, v) }

// AppendInt64 appends v big-endian.
func AppendInt64(dst []byte, v int64) []byte { return binary.BigEndian.AppendUint64(dst, uint64(v)) }

// AppendFloat64 appends the IEEE-754 bits of v big-endian.
func AppendFloat64(dst []byte, v float64) []byte {
	return binary.BigEndian.AppendUint64(dst, math.Float64bits(v))
}

// AppendUvarint appends v as an unsigned varint (7 bits a byte, low group first).
func AppendUvarint(dst []byte, v uint32) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// AppendUvarlong appends a 64-bit unsigned varint.
func AppendUvarlong(dst []byte, v uint64) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// AppendVarint appends v zig-zag encoded as a 32-bit varint.
func AppendVarint(dst []byte, v int32) []byte {
	return AppendUvarint(dst, uint32(v<<1)^uint32(v>>31))
}

// AppendVarlong appends v zig-zag encoded as a 64-bit varint.
func AppendVarlong(dst []byte, v int64) []byte {
	return AppendUvarlong(dst, uint64(v<<1)^uint64(v>>63))
}

// UvarintLen returns the number of bytes AppendUvarint writes for v.
func UvarintLen(v uint32) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// VarintLen returns the number of bytes AppendVarint writes for v.
func VarintLen(v int32) int { return UvarintLen(uint32(v<<1) ^ uint32(v>>31)) }

// Reader reads primitives from B starting at Off. Every method checks bounds
// first and leaves Off unchanged on error.
type Reader struct {
	B   []byte
	Off int
}

// Remaining returns the number of unread bytes.
func (r *Reader) Remaining() int { return len(r.B) - r.Off }

// Int8 reads one signed byte.
func (r *Reader) Int8() (int8, error) {
	if r.Off+1 > len(r.B) {
		return 0, ErrTruncated
	}
	v := int8(r.B[r.Off])
	r.Off++
	return v, nil
}

// Int16 reads a big-endian int16.
func (r *Reader) Int16() (int16, error) {
	if r.Off+2 > len(r.B) {
		return 0, ErrTruncated
	}
	v := int16(binary.BigEndian.Uint16(r.B[r.Off:]))
	r.Off += 2
	return v, nil
}

// Uint16 reads a big-endian uint16.
func (r *Reader) Uint16() (uint16, error) {
	if r.Off+2 > len(r.B) {
		return 0, ErrTruncated
	}
	v := binary.BigEndian.Uint16(r.B[r.Off:])
	r.Off += 2
	return v, nil
}

// Int32 reads a big-endian int32.
func (r *Reader) Int32() (int32, error) {
	v, err := r.Uint32()
	return int32(v), err
}

// Uint32 reads a big-endian uint32.
func (r *Reader) Uint32() (uint32, error) {
	if r.Off+4 > len(r.B) {
		return 0, ErrTruncated
	}
	v := binary.BigEndian.Uint32(r.B[r.Off:])
	r.Off += 4
	return v, nil
}

// Int64 reads a big-endian int64.
func (r *Reader) Int64() (int64, error) {
	if r.Off+8 > len(r.B) {
		return 0, ErrTruncated
	}
	v := int64(binary.BigEndian.Uint64(r.B[r.Off:]))
	r.Off += 8
	return v, nil
}

// Float64 reads a big-endian IEEE-754 double.
func (r *Reader) Float64() (float64, error) {
	v, err := r.Int64()
	return math.Float64frombits(uint64(v)), err
}

// Uvarint reads an unsigned varint of at most 5 bytes. Like Kafka's reader it
// keeps only the low 32 bits of a 5-byte value.
func (r *Reader) Uvarint() (uint32, error) {
	var v uint32
	for i := 0; i < 5; i++ {
		if r.Off+i >= len(r.B) {
			return 0, ErrTruncated
		}
		b := r.B[r.Off+i]
		v |= uint32(b&0x7f) << (7 * i)
		if b < 0x80 {
			r.Off += i + 1
			return v, nil
		}
	}
	return 0, ErrVarint
}

// Uvarlong reads an unsigned varint of at most 10 bytes.
func (r *Reader) Uvarlong() (uint64, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		if r.Off+i >= len(r.B) {
			return 0, ErrTruncated
		}
		b := r.B[r.Off+i]
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			r.Off += i + 1
			return v, nil
		}
	}
	return 0, ErrVarint
}

// Varint reads a zig-zag varint of at most 5 bytes.
func (r *Reader) Varint() (int32, error) {
	u, err := r.Uvarint()
	return int32(u>>1) ^ -int32(u&1), err
}

// Varlong reads a zig-zag varint of at most 10 bytes.
func (r *Reader) Varlong() (int64, error) {
	u, err := r.Uvarlong()
	return int64(u>>1) ^ -int64(u&1), err
}

// Span returns the next n bytes without copying them.
func (r *Reader) Span(n int) ([]byte, error) {
	if n < 0 || n > len(r.B)-r.Off {
		return nil, ErrTruncated
	}
	v := r.B[r.Off : r.Off+n : r.Off+n]
	r.Off += n
	return v, nil
}
