// Package frames splits a byte stream into Kafka frames by their int32 size
// prefixes, without trusting them: a size that claims more bytes than the
// stream holds, or a negative one, ends the split with an error naming the
// frame's offset, and nothing is allocated from a size.
package frames

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/manifester/manifester/internal/wire"
)

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
	for off := 0; off < len(b); {
		rest := b[off:]
		if len(rest) < 4 {
			out = append(out, Frame{Offset: off, Bytes: rest, Err: fmt.Errorf("frame %d at offset %d: %w: need 4 bytes for the size prefix, have %d", len(out), off, wire.ErrFrameSize, len(rest))})
			break
		}
		size := int32(binary.BigEndian.Uint32(rest))
		switch {
		case size < 0:
			out = append(out, Frame{Offset: off, Bytes: rest, Err: fmt.Errorf("frame %d at offset %d: %w: negative size %d", len(out), off, wire.ErrFrameSize, size)})
			return out
		case int64(size) > int64(len(rest)-4):
			out = append(out, Frame{Offset: off, Bytes: rest, Err: fmt.Errorf("frame %d at offset %d: %w: size prefix says %d bytes follow, only %d do", len(out), off, wire.ErrFrameSize, size, len(rest)-4)})
			return out
		}
		n := 4 + int(size)
		out = append(out, Frame{Offset: off, Bytes: rest[:n:n]})
		off += n
	}
	return out
}

// ErrTooLarge says a size prefix exceeds the reader's limit.
var ErrTooLarge = errors.New("frame larger than the limit")

// Reader reads frames one at a time from a stream.
type Reader struct {
	r   io.Reader
	max int
	off int64
}

// NewReader reads frames from r, refusing any whose size prefix exceeds
// max bytes.
func NewReader(r io.Reader, max int) *Reader { return &Reader{r: r, max: max} }

// Offset is the stream offset of the next frame.
func (r *Reader) Offset() int64 { return r.off }

// Next returns the next whole frame, size prefix included. It returns
// io.EOF at a clean end of stream, and an error wrapping
// wire.ErrFrameSize (with the bytes read so far) when the stream ends
// inside a frame or a size prefix is negative or too large. Memory grows
// with the bytes actually read, never with the size a prefix claims.
func (r *Reader) Next() ([]byte, error) {
	var hdr [4]byte
	n, err := io.ReadFull(r.r, hdr[:])
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return hdr[:n], fmt.Errorf("frame at offset %d: %w: stream ended after %d bytes of the size prefix", r.off, wire.ErrFrameSize, n)
	}
	size := int32(binary.BigEndian.Uint32(hdr[:]))
	if size < 0 {
		return hdr[:], fmt.Errorf("frame at offset %d: %w: negative size %d", r.off, wire.ErrFrameSize, size)
	}
	if int64(size) > int64(r.max) {
		return hdr[:], fmt.Errorf("frame at offset %d: %w: size prefix says %d bytes, the limit is %d", r.off, ErrTooLarge, size, r.max)
	}
	buf := make([]byte, 4, 4+min(int(size), 64<<10))
	copy(buf, hdr[:])
	lr := io.LimitReader(r.r, int64(size))
	for len(buf)-4 < int(size) {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := lr.Read(buf[len(buf):cap(buf)][:min(cap(buf)-len(buf), 4+int(size)-len(buf))])
		buf = buf[:len(buf)+m]
		if err != nil {
			if err == io.EOF {
				break
			}
			return buf, fmt.Errorf("frame at offset %d: %w", r.off, err)
		}
	}
	if len(buf)-4 < int(size) {
		return buf, fmt.Errorf("frame at offset %d: %w: size prefix says %d bytes follow, the stream ended after %d", r.off, wire.ErrFrameSize, size, len(buf)-4)
	}
	r.off += int64(len(buf))
	return buf, nil
}
