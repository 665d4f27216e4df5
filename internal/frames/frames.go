// Package frames owns Kafka's length-delimited framing: every frame is an
// int32 size prefix and that many bytes. It splits whole buffers ([Split],
// [All]), finds the whole frame at the start of bytes being accumulated
// ([Whole]), and peeks at request and response headers ([PeekRequest],
// [PeekResponse]) without decoding them. Sizes are never trusted: a size
// that claims more bytes than are there, a negative one, or one outside
// the caller's limits is an error naming the frame's offset, and nothing
// is ever allocated from a size.
package frames

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"

	"github.com/manifester/manifester/internal/wire"
)

// Header lengths, size prefix included.
const (
	// SizeLen is the length of the size prefix.
	SizeLen = 4
	// RequestHeaderLen covers the size, API key, API version and
	// correlation id of a request.
	RequestHeaderLen = 12
	// ResponseHeaderLen covers the size and correlation id of a response.
	ResponseHeaderLen = 8
)

// Size reads the size prefix at the start of b: the number of bytes that
// follow it. ok is false when b is shorter than the prefix.
func Size(b []byte) (size int32, ok bool) {
	if len(b) < SizeLen {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(b)), true
}

// PeekRequest reads the API key, version and correlation id of a request
// frame (size prefix included) without decoding it. ok is false when b
// is shorter than [RequestHeaderLen].
func PeekRequest(b []byte) (key, version int16, corr int32, ok bool) {
	if len(b) < RequestHeaderLen {
		return 0, 0, 0, false
	}
	return int16(binary.BigEndian.Uint16(b[4:])), int16(binary.BigEndian.Uint16(b[6:])), int32(binary.BigEndian.Uint32(b[8:])), true
}

// PeekClientID reads the client id of a request header v1 or v2 (every
// request header but ControlledShutdown v0's): the int16-prefixed string
// after size, key, version and correlation id; nil when it is null or
// does not fit in b.
func PeekClientID(b []byte) *string {
	if len(b) < 14 {
		return nil
	}
	n := int(int16(binary.BigEndian.Uint16(b[12:14])))
	if n < 0 || 14+n > len(b) {
		return nil
	}
	s := string(b[14 : 14+n])
	return &s
}

// PeekResponse reads the correlation id of a response frame (size prefix
// included). ok is false when b is shorter than [ResponseHeaderLen].
func PeekResponse(b []byte) (corr int32, ok bool) {
	if len(b) < ResponseHeaderLen {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(b[4:])), true
}

// ErrOutOfRange says a size prefix is outside the limits a caller frames
// with (it also wraps wire.ErrFrameSize).
var ErrOutOfRange = errors.New("frame size out of range")

// InRange reports whether a size prefix lies in [lo, hi].
func InRange(size int32, lo, hi int) bool {
	return int64(size) >= int64(lo) && int64(size) <= int64(hi)
}

// Whole finds the whole frame at the start of b, a stream's bytes being
// accumulated: n is its length, size prefix included, once b holds all of
// it, and 0 while more bytes are needed. A size prefix outside [lo, hi]
// is an error wrapping [ErrOutOfRange] and wire.ErrFrameSize, found as
// soon as the prefix is there, so no caller buffers up to a size it would
// refuse.
func Whole(b []byte, lo, hi int) (n int, err error) {
	size, ok := Size(b)
	if !ok {
		return 0, nil
	}
	if !InRange(size, lo, hi) {
		return 0, fmt.Errorf("%w: %w: size prefix %d, want %d to %d", wire.ErrFrameSize, ErrOutOfRange, size, lo, hi)
	}
	if int64(size) > int64(len(b)-SizeLen) {
		return 0, nil
	}
	return SizeLen + int(size), nil
}

// Frame is one frame of a stream, size prefix included.
type Frame struct {
	// Offset is where the frame starts in the stream.
	Offset int
	// Bytes is the frame (a sub-slice of the stream).
	Bytes []byte
	// Err is set on a last piece that is not a whole frame; it wraps
	// wire.ErrFrameSize.
	Err error
}

// Split cuts b into back-to-back frames. Every frame but possibly the last
// is whole; a last piece whose size prefix is negative, cut short or claims
// more bytes than remain carries Err and holds all the remaining bytes.
func Split(b []byte) []Frame {
	var out []Frame
	for f := range All(b) {
		out = append(out, f)
	}
	return out
}

// All yields the frames of b as [Split] returns them, one at a time, so a
// caller that stops early does not frame the rest.
func All(b []byte) iter.Seq[Frame] {
	return func(yield func(Frame) bool) {
		for i, off := 0, 0; off < len(b); i++ {
			rest := b[off:]
			size, ok := Size(rest)
			var err error
			switch {
			case !ok:
				err = fmt.Errorf("frame %d at offset %d: %w: need 4 bytes for the size prefix, have %d", i, off, wire.ErrFrameSize, len(rest))
			case size < 0:
				err = fmt.Errorf("frame %d at offset %d: %w: negative size %d", i, off, wire.ErrFrameSize, size)
			case int64(size) > int64(len(rest)-SizeLen):
				err = fmt.Errorf("frame %d at offset %d: %w: size prefix says %d bytes follow, only %d do", i, off, wire.ErrFrameSize, size, len(rest)-SizeLen)
			}
			if err != nil {
				yield(Frame{Offset: off, Bytes: rest, Err: err})
				return
			}
			n := SizeLen + int(size)
			if !yield(Frame{Offset: off, Bytes: rest[:n:n]}) {
				return
			}
			off += n
		}
	}
}
