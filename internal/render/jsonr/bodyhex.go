package jsonr

import (
	"sync"

	"github.com/manifester/manifester/internal/hexout"
	"github.com/manifester/manifester/internal/span"
)

// bodyHex lets a lean frame's body copy the hex of its bytes and records
// values from the frame's hex, made once before the body is written (the
// line's "hex" follows the body and is copied from it too): most of a
// Produce or Fetch body is records, so their hex is not made twice.
type bodyHex struct {
	data []byte  // the frame
	hex  *[]byte // its hex
	// offs are where the values of the tree's bytes and records fields
	// start in data, in the table's (wire) order, the order in which
	// the body meets them; next is the first not yet met.
	offs []int32
	next int
}

// hexPool holds the frames' hex buffers between lines.
var hexPool = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledHex bounds the hex buffers kept for reuse.
const maxPooledHex = 16 << 20

// newBodyHex makes the hex of t.Bytes, the frame, and notes where t's
// bytes and records values are.
func newBodyHex(t *span.Tree) *bodyHex {
	h := &bodyHex{data: t.Bytes, hex: hexPool.Get().(*[]byte)}
	*h.hex = hexout.AppendEncode((*h.hex)[:0], t.Bytes)
	for id := span.ID(0); int(id) < t.Len(); id++ {
		if v := t.N(id).Val; v != span.ValBytes && v != span.ValRecords || t.Desc(id).Field == nil {
			continue // not a field of the body (a record's key or value)
		}
		if a := t.Extra(id, false); a != nil && a.HasValue {
			continue // not in t.Bytes
		}
		if vb := t.ValueBytes(id); len(vb) > 0 {
			h.offs = append(h.offs, int32(t.ValueOff(id)))
		}
	}
	return h
}

// lookahead is how many of the next values appendHex tries: the body
// meets the values in wire order but for tagged fields, which it writes
// in the spec's order.
const lookahead = 8

// appendHex appends the hex of b, copied from the frame's when b is one
// of the values noted (the same bytes in memory, not only equal ones).
func (h *bodyHex) appendHex(dst, b []byte) []byte {
	if len(b) > 0 {
		for i := h.next; i < len(h.offs) && i < h.next+lookahead; i++ {
			off := int(h.offs[i])
			if off+len(b) <= len(h.data) && &h.data[off] == &b[0] {
				h.next = i + 1
				return append(dst, (*h.hex)[2*off:2*(off+len(b))]...)
			}
		}
	}
	return hexout.AppendEncode(dst, b)
}

// release hands the hex buffer back.
func (h *bodyHex) release() {
	if cap(*h.hex) <= maxPooledHex {
		*h.hex = (*h.hex)[:0]
		hexPool.Put(h.hex)
	}
	h.hex = nil
}
