// Package compress inflates the records area of compressed record batches
// for display: gzip, snappy (Kafka's xerial framing, or a raw snappy block
// as some producers write), lz4 (the LZ4 frame format) and zstd. It plugs
// into the codec as a [records.Decompressor].
//
// Inflating untrusted bytes is bounded: the output may not exceed a limit
// derived from the input size ([Limit]), so a small frame cannot claim
// gigabytes.
package compress

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/manifester/manifester/internal/records"
)

// Codec attribute values of RecordBatch v2 (bits 0-2).
const (
	None   = 0
	Gzip   = 1
	Snappy = 2
	LZ4    = 3
	Zstd   = 4
)

// Errors, for errors.Is. ErrCompression is the records decoder's cause
// for a batch that does not inflate (owned by package records, which
// reports it).
var (
	ErrTooLarge     = records.ErrInflateLimit
	ErrUnknownCodec = errors.New("unknown compression codec")
	ErrCompression  = records.ErrCompression
)

// maxZstdWindow is the largest zstd window accepted whatever the limit:
// producers choose windows by their own settings, not by the data's size
// (the output is still cut at the limit).
const maxZstdWindow = 8 << 20

// zstdPool keeps zstd decoders, whose window buffer (allocated whole for
// each frame's window) is then reused from batch to batch instead of
// being allocated again for each of thousands of small batches.
var zstdPool sync.Pool

// gzipPool keeps gzip readers, whose 32 KiB window is likewise reused.
var gzipPool sync.Pool

// lz4Pool keeps lz4 readers, whose block buffers (up to 4 MiB, by the
// frame's declared block size) are likewise reused.
var lz4Pool sync.Pool

// firstRoom bounds the buffer a records area starts inflating into
// before its size is known: past it the buffer grows as it fills.
const firstRoom = 4 << 20

// MaxInflated caps the inflated size of one records area.
const MaxInflated = 64 << 20

// Limit is the most bytes n compressed bytes may inflate to: 1024 times
// the input plus 64 KiB, at most [MaxInflated].
func Limit(n int) int { return min(MaxInflated, 1024*n+64<<10) }

// Decompressor returns a [records.Decompressor] with the default limits.
func Decompressor() records.Decompressor { return Decompress }

// LimitDecompressor returns a [records.LimitDecompressor]: each area
// inflates to at most [Limit] of its size, and to at most the room the
// caller gives it (a frame's inflation budget); an area stopped by the
// room fails with an error wrapping [records.ErrRoom].
func LimitDecompressor() records.LimitDecompressor { return DecompressRoomInto }

// DecompressRoom inflates data to at most min(room, Limit(len(data)))
// bytes; see [LimitDecompressor].
func DecompressRoom(codec int, data []byte, room int) ([]byte, error) {
	return DecompressRoomInto(nil, codec, data, room)
}

// DecompressRoomInto is [DecompressRoom] into dst's room (dst[:0]) when
// it is large enough: the result may share dst's memory.
func DecompressRoomInto(dst []byte, codec int, data []byte, room int) ([]byte, error) {
	per := Limit(len(data))
	if room >= per {
		return DecompressLimitInto(dst, codec, data, per)
	}
	out, err := DecompressLimitInto(dst, codec, data, max(room, 0))
	if errors.Is(err, ErrTooLarge) {
		return nil, fmt.Errorf("%w: %w", records.ErrRoom, err)
	}
	return out, err
}

// Decompress inflates data compressed with the given codec attribute.
func Decompress(codec int, data []byte) ([]byte, error) {
	return DecompressLimit(codec, data, Limit(len(data)))
}

// DecompressLimit inflates data, failing with [ErrTooLarge] beyond limit
// bytes.
func DecompressLimit(codec int, data []byte, limit int) ([]byte, error) {
	return DecompressLimitInto(nil, codec, data, limit)
}

// DecompressLimitInto is [DecompressLimit] into dst's room (dst[:0]) when
// it is large enough: the result may share dst's memory.
func DecompressLimitInto(dst []byte, codec int, data []byte, limit int) ([]byte, error) {
	dst = dst[:0]
	switch codec {
	case Gzip:
		r, _ := gzipPool.Get().(*gzip.Reader)
		var err error
		if r == nil {
			r, err = gzip.NewReader(bytes.NewReader(data))
		} else {
			err = r.Reset(bytes.NewReader(data))
		}
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		defer gzipPool.Put(r)
		return readLimited(dst, "gzip", r, len(data), limit)
	case Snappy:
		return unsnappy(dst, data, limit)
	case LZ4:
		r, _ := lz4Pool.Get().(*lz4.Reader)
		if r == nil {
			r = lz4.NewReader(nil)
		}
		defer lz4Pool.Put(r)
		r.Reset(bytes.NewReader(data))
		return readLimited(dst, "lz4", r, len(data), limit)
	case Zstd:
		d, _ := zstdPool.Get().(*zstd.Decoder)
		if d == nil {
			var err error
			if d, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderMaxMemory(MaxInflated+1)); err != nil {
				return nil, fmt.Errorf("zstd: %w", err)
			}
		}
		defer zstdPool.Put(d)
		if err := d.Reset(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return readLimited(dst, "zstd", d, len(data), limit)
	}
	return nil, fmt.Errorf("%w %d", ErrUnknownCodec, codec)
}

// readLimited reads r, inflating n compressed bytes, into dst's room,
// failing beyond limit bytes. An empty dst starts at four times n (the
// ratio of compressed logs; within limit and firstRoom), so that the
// buffer is not grown from a few hundred bytes by doubling.
func readLimited(dst []byte, name string, r io.Reader, n, limit int) ([]byte, error) {
	if cap(dst) == 0 {
		dst = make([]byte, 0, min(limit+1, 4*n+512, firstRoom))
	}
	got, err := readAll(dst[:0], io.LimitReader(r, int64(limit)+1))
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return nil, &records.TooLargeError{Codec: name, Limit: limit}
	}
	if err != nil {
		return nil, &records.FailedError{Inflated: len(got), Err: fmt.Errorf("%s: %w", name, err)}
	}
	if len(got) > limit {
		return nil, &records.TooLargeError{Codec: name, Limit: limit, Partial: got[:limit]}
	}
	return got, nil
}

// readAll appends what r reads to dst until EOF. Unlike bytes.Buffer's
// ReadFrom, which grows its buffer whenever less than 512 bytes are free,
// it grows dst (doubling) only when dst is full and a read into a small
// probe finds more: an area that fills its room exactly stays in it, so
// that a reused room (a spare tree's bytes) keeps its size.
func readAll(dst []byte, r io.Reader) ([]byte, error) {
	var probe []byte // made when first needed: it escapes to the heap
	for {
		if len(dst) == cap(dst) {
			if probe == nil {
				probe = make([]byte, 512)
			}
			k, err := r.Read(probe)
			if k > 0 {
				dst = append(slices.Grow(dst, max(cap(dst), len(probe))), probe[:k]...)
			}
			if err != nil {
				return dst, eofIsEnd(err)
			}
			continue
		}
		k, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+k]
		if err != nil {
			return dst, eofIsEnd(err)
		}
	}
}

// eofIsEnd returns nil for io.EOF, the end of a stream read whole.
func eofIsEnd(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

// xerialMagic starts Kafka's (snappy-java's) framed snappy format, followed
// by int32 version and int32 compatible version, then blocks of int32
// length + raw snappy block.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

func unsnappy(out, data []byte, limit int) ([]byte, error) {
	if !bytes.HasPrefix(data, xerialMagic) {
		return snappyBlock(out, data, limit)
	}
	if len(data) < 16 {
		return nil, errors.New("snappy: xerial header cut short")
	}
	for p := 16; p < len(data); {
		if len(data)-p < 4 {
			return nil, fmt.Errorf("snappy: xerial block length cut short at %d", p)
		}
		n := int(binary.BigEndian.Uint32(data[p:]))
		p += 4
		if n < 0 || n > len(data)-p {
			return nil, fmt.Errorf("snappy: xerial block of %d bytes at %d, %d left", n, p-4, len(data)-p)
		}
		next, err := snappyBlock(out, data[p:p+n], limit-len(out))
		if err != nil {
			if tl := (*records.TooLargeError)(nil); errors.As(err, &tl) {
				tl.Limit, tl.Partial = limit, out // the blocks before this one
			}
			return nil, err
		}
		out = next
		p += n
	}
	return out, nil
}

func snappyBlock(out, block []byte, limit int) ([]byte, error) {
	n, err := snappy.DecodedLen(block)
	if err != nil {
		return nil, fmt.Errorf("snappy: %w", err)
	}
	if n > limit {
		return nil, &records.TooLargeError{Codec: "snappy", Limit: limit}
	}
	// Decoded straight into out's room: one buffer per batch, not a
	// block's copy beside it. Made with make and copy rather than
	// slices.Grow, which copies all of out's capacity and clears the new
	// room, every byte of which the decode writes. The room at least
	// doubles (within limit), so that a xerial stream of many tiny
	// blocks does not copy all its output again for each of them.
	if cap(out)-len(out) < n {
		grown := make([]byte, len(out), min(max(len(out)+n, 2*cap(out)), len(out)+limit))
		copy(grown, out)
		out = grown
	}
	dst := out[len(out) : len(out)+n]
	b, err := snappy.Decode(dst, block)
	if err != nil {
		return nil, &records.FailedError{Inflated: len(out) + n, Err: fmt.Errorf("snappy: %w", err)}
	}
	if len(b) > 0 && &b[0] != &dst[0] {
		copy(dst, b) // (snappy.Decode uses dst when it is large enough)
	}
	return out[:len(out)+len(b)], nil
}
