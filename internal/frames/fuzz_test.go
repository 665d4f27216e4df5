package frames

import (
	"bytes"
	"errors"
	"testing"

	"github.com/manifester/manifester/internal/wire"
)

// FuzzFrames: on any bytes, the pieces All yields tile the input in
// order, only the last may carry an error (wrapping wire.ErrFrameSize),
// and Whole, fed the input as it accumulates, finds exactly the whole
// frames All found, each when its last byte arrives.
func FuzzFrames(f *testing.F) {
	all, _ := stream()
	f.Add(all)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 9})
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff, 1})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		var joined []byte
		var whole [][]byte
		pieces := Split(b)
		for i, p := range pieces {
			if p.Offset != len(joined) {
				t.Fatalf("piece %d at offset %d, want %d", i, p.Offset, len(joined))
			}
			joined = append(joined, p.Bytes...)
			if p.Err != nil {
				if i != len(pieces)-1 || !errors.Is(p.Err, wire.ErrFrameSize) {
					t.Fatalf("piece %d of %d: %v", i, len(pieces), p.Err)
				}
				continue
			}
			whole = append(whole, p.Bytes)
		}
		if !bytes.Equal(joined, b) {
			t.Fatalf("the pieces do not tile the input")
		}
		var found [][]byte
		start := 0
		for end := start + 1; end <= len(b); end++ {
			n, err := Whole(b[start:end], 0, 1<<31-1)
			if err != nil {
				break // a negative size: Split's last piece
			}
			if n > 0 {
				if n != end-start {
					t.Fatalf("a frame of %d bytes found in %d", n, end-start)
				}
				found = append(found, b[start:end])
				start = end
			}
		}
		if len(found) != len(whole) {
			t.Fatalf("Whole found %d frames, Split %d", len(found), len(whole))
		}
		for i := range found {
			if !bytes.Equal(found[i], whole[i]) {
				t.Fatalf("frame %d differs", i)
			}
		}
	})
}
