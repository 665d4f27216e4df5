// Package hexout writes lower-case hex, as encoding/hex does, many input
// bytes at a time: the JSON lines of `decode --pcap` are mostly hex (the
// frame, bytes and records values), and encoding/hex's byte-at-a-time
// table loop was the largest single cost of writing them. On amd64
// thirty-two bytes at a time with AVX2 where the processor has it, else
// sixteen at a time with SSE2 (part of every amd64 processor); elsewhere
// (and with the purego build tag) eight at a time from a table of pairs.
package hexout

import (
	"encoding/binary"
)

const digits = "0123456789abcdef"

// pairs holds the two hex digits of every byte value, the first in the
// low byte (the order they take in memory when stored little-endian).
var pairs = func() (t [256]uint16) {
	for i := range t {
		t[i] = uint16(digits[i>>4]) | uint16(digits[i&0xF])<<8
	}
	return t
}()

// AppendEncode appends the lower-case hex of src to dst, exactly as
// [encoding/hex.AppendEncode] does, and returns the extended buffer. When
// dst must grow it at least doubles, so that a line built of many large
// values (a JSON line of megabytes) is copied a few times, not once per
// value.
func AppendEncode(dst, src []byte) []byte {
	n := len(dst)
	dst = Reserve(dst, 2*len(src))[:n+2*len(src)]
	out := dst[n:]
	i := len(src) &^ (blockSize - 1)
	if i > 0 {
		encodeBlocks(out[:2*i], src[:i])
	}
	encodePairs(out[2*i:], src[i:])
	return dst
}

// Reserve returns b with room for n more bytes: b itself when it has
// them, else a copy with room for n or for b's capacity, whichever is
// more, after b's bytes (so a line that fills its buffer at least
// doubles it: Go's append grows large slices by a quarter, which for a
// line growing by megabytes meant a copy of the whole line every few
// values; and a line that starts in a kept buffer too small for it gets
// the room it asked for, not twice the buffer). Only b's
// bytes are copied, not the rest of its capacity (slices.Grow copies all
// of it: a kept line buffer of a hundred megabytes, copied whole to make
// room for the next line's first bytes), and the new room is not cleared
// beyond what make must (a large buffer fresh from the system is not
// cleared at all, and one reused is cleared in pieces the collector can
// stop between).
func Reserve(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), len(b)+max(n, cap(b)))
	copy(nb, b)
	return nb
}

// encodePairs writes the hex of src into out (twice as long). Eight
// bytes' digits are looked up in a table of pairs and stored as two
// 64-bit words: about twice as fast as turning nibbles into digits with
// 64-bit arithmetic (SWAR).
func encodePairs(out, src []byte) {
	i := 0
	for ; i+8 <= len(src); i += 8 {
		s := src[i : i+8 : i+8]
		lo := uint64(pairs[s[0]]) | uint64(pairs[s[1]])<<16 | uint64(pairs[s[2]])<<32 | uint64(pairs[s[3]])<<48
		hi := uint64(pairs[s[4]]) | uint64(pairs[s[5]])<<16 | uint64(pairs[s[6]])<<32 | uint64(pairs[s[7]])<<48
		o := out[2*i : 2*i+16 : 2*i+16]
		binary.LittleEndian.PutUint64(o[0:8], lo)
		binary.LittleEndian.PutUint64(o[8:16], hi)
	}
	for ; i < len(src); i++ {
		binary.LittleEndian.PutUint16(out[2*i:], pairs[src[i]])
	}
}
