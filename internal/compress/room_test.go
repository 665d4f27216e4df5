package compress

import (
	"bytes"
	"fmt"
	"testing"
)

// TestInflateFillsRoomExactly: an area that inflates to exactly the room
// it is given stays in that room (a reused spare tree's bytes keep their
// size), one byte more grows it, and both read right, for every codec
// that streams (gzip, lz4, zstd).
func TestInflateFillsRoomExactly(t *testing.T) {
	for _, size := range []int{1000, 1 << 20} {
		var lines []byte
		for i := 0; len(lines) < size; i++ {
			lines = fmt.Appendf(lines, "%08d a line of a log, numbered %x\n", i*7919%100003, i)
		}
		plain := lines[:size]
		for _, c := range []struct {
			name  string
			codec int
			data  []byte
		}{{"gzip", Gzip, gz(t, plain)}, {"lz4", LZ4, lz(t, plain)}, {"zstd", Zstd, zs(t, plain)}} {
			room := make([]byte, 0, size)
			out, err := DecompressLimitInto(room, c.codec, c.data, Limit(len(c.data)))
			if err != nil || !bytes.Equal(out, plain) {
				t.Fatalf("%s %d: %d bytes, %v", c.name, size, len(out), err)
			}
			if cap(out) != size || &out[0] != &room[:1][0] {
				t.Errorf("%s %d: inflated into a new buffer of %d bytes, not the room of %d", c.name, size, cap(out), size)
			}
			small := make([]byte, 0, size-1)
			if out, err = DecompressLimitInto(small, c.codec, c.data, Limit(len(c.data))); err != nil || !bytes.Equal(out, plain) {
				t.Errorf("%s %d into a room one byte short: %d bytes, %v", c.name, size, len(out), err)
			}
		}
	}
}
