// Package hexout writes lower-case hex, as encoding/hex does, eight input
// bytes at a time: the JSON lines of `decode --pcap` are mostly hex (the
// frame, bytes and records values), and encoding/hex's byte-at-a-time
// table loop was the largest single cost of writing them.
package hexout

import (
	"encoding/binary"
	"slices"
)

const digits = "0123456789abcdef"

// AppendEncode appends the lower-case hex of src to dst, exactly as
// [encoding/hex.AppendEncode] does, and returns the extended buffer.
func AppendEncode(dst, src []byte) []byte {
	n := len(dst)
	dst = slices.Grow(dst, 2*len(src))[:n+2*len(src)]
	out := dst[n:]
	i := 0
	for ; i+8 <= len(src); i += 8 {
		x := binary.LittleEndian.Uint64(src[i:])
		o := out[2*i : 2*i+16]
		binary.LittleEndian.PutUint64(o[0:8], spread(x&0xFFFFFFFF))
		binary.LittleEndian.PutUint64(o[8:16], spread(x>>32))
	}
	for ; i < len(src); i++ {
		c := src[i]
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&0xF]
	}
	return dst
}

// spread turns the four bytes in the low half of v (the first in the
// lowest byte) into their eight hex digits, the first digit in the
// lowest byte.
func spread(v uint64) uint64 {
	// Each byte into its own 16-bit lane.
	v = (v | v<<16) & 0x0000FFFF0000FFFF
	v = (v | v<<8) & 0x00FF00FF00FF00FF
	// The high nibble into the lane's low byte, the low nibble into its
	// high byte: digits in memory order.
	n := (v>>4)&0x000F000F000F000F | (v&0x000F000F000F000F)<<8
	// '0'+n, and 'a'-'0'-10 more for nibbles of 10 and up (n+6 carries
	// into bit 4 exactly then).
	letter := ((n + 0x0606060606060606) >> 4) & 0x0101010101010101
	return n + 0x3030303030303030 + letter*('a'-'0'-10)
}
