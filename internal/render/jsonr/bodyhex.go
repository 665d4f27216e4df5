package jsonr

import (
	"sync"

	"github.com/manifester/manifester/internal/hexout"
)

// frameHex is the hex of a lean frame, made once before its body is
// written: the body's bytes and records values (most of a Produce or
// Fetch body) copy their hex from it (jsonvalue.AppendTree), and so do
// the line's "hex" and the tree's values.
type frameHex struct {
	hex *[]byte
}

// hexPool holds the frames' hex buffers between lines.
var hexPool = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledHex bounds the hex buffers kept for reuse.
const maxPooledHex = 16 << 20

// newFrameHex makes the hex of the frame b.
func newFrameHex(b []byte) *frameHex {
	h := &frameHex{hex: hexPool.Get().(*[]byte)}
	*h.hex = hexout.AppendEncode((*h.hex)[:0], b)
	return h
}

// release hands the hex buffer back.
func (h *frameHex) release() {
	if cap(*h.hex) <= maxPooledHex {
		*h.hex = (*h.hex)[:0]
		hexPool.Put(h.hex)
	}
	h.hex = nil
}
