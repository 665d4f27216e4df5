package text

import (
	"strconv"
	"unsafe"

	"github.com/manifester/manifester/internal/span"
)

// strArena makes the many short strings of a tree's rows (a name with
// its tree prefix, a value, an [offset, size] cell) in shared chunks:
// one allocation for a chunk's worth of strings, not one each. The bytes
// of a chunk, once made into a string, are not written again until
// reset, which hands the chunks out again from the first: no string the
// arena made before a reset may be used after it.
type strArena struct {
	buf    []byte   // the chunk being filled
	chunks [][]byte // the chunks of arenaChunk bytes made, for reuse after reset
	next   int      // the index in chunks of the next chunk to fill
}

// arenaChunk is the size of a chunk (a string longer than it gets a
// chunk of its own length, not kept for reuse).
const arenaChunk = 32 << 10

// room makes sure the current chunk has n more bytes.
func (a *strArena) room(n int) {
	if cap(a.buf)-len(a.buf) >= n {
		return
	}
	switch {
	case n > arenaChunk:
		a.buf = make([]byte, 0, n)
	case a.next < len(a.chunks):
		a.buf = a.chunks[a.next][:0]
		a.next++
	default:
		a.buf = make([]byte, 0, arenaChunk)
		a.chunks = append(a.chunks, a.buf)
		a.next = len(a.chunks)
	}
}

// reset makes every chunk free to be written again, from the first.
func (a *strArena) reset() { a.buf, a.next = nil, 0 }

// size is the bytes of the chunks the arena keeps.
func (a *strArena) size() int { return len(a.chunks) * arenaChunk }

// done returns the string of the bytes appended since start.
func (a *strArena) done(start int) string {
	if len(a.buf) == start {
		return ""
	}
	return unsafe.String(&a.buf[start], len(a.buf)-start)
}

// join returns the concatenation of parts.
func (a *strArena) join(parts ...string) string {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	a.room(n)
	start := len(a.buf)
	for _, p := range parts {
		a.buf = append(a.buf, p...)
	}
	return a.done(start)
}

// bytes returns b as a string.
func (a *strArena) bytes(b []byte) string {
	a.room(len(b))
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.done(start)
}

// displayName returns the node's span.Tree.DisplayName ("name[3]").
func (a *strArena) displayName(t *span.Tree, id span.ID) string {
	a.room(len(t.Name(id)) + 13) // the index: "[", at most 11 digits, "]"
	start := len(a.buf)
	a.buf = t.AppendDisplayName(a.buf, id)
	return a.done(start)
}

// span returns the [offset, size] cell (spanText).
func (a *strArena) span(off, size int32) string {
	if off < 0 {
		return spanText(off, size)
	}
	a.room(32)
	start := len(a.buf)
	a.buf = appendSpan(a.buf, off, size)
	return a.done(start)
}

// appendSpan appends the [offset, size] cell of an offset >= 0:
// "[0x0009, 4B]", at least four hex digits.
func appendSpan(b []byte, off, size int32) []byte {
	b = append(b, "[0x"...)
	for d := hexDigits(int64(off)); d < 4; d++ {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, int64(off), 16)
	return append(strconv.AppendInt(append(b, ", "...), int64(size), 10), "B]"...)
}
