package text

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/manifester/manifester/internal/span"
)

// visit calls f for id and the nodes under it, depth first, parents
// first, until f returns false. It keeps its own stack, so deep trees do
// not grow the goroutine's.
func visit(t *span.Tree, id span.ID, f func(id span.ID, depth int) bool) {
	if t == nil || id == span.None {
		return
	}
	depth := 0
	for x := id; ; {
		if !f(x, depth) {
			return
		}
		if k := t.N(x).First; k != span.None {
			x, depth = k, depth+1
			continue
		}
		for x != id && t.N(x).Next == span.None {
			x, depth = t.N(x).Parent, depth-1
		}
		if x == id {
			return
		}
		x = t.N(x).Next
	}
}

// countNodes is the number of nodes of t reachable from its root, at most
// limit.
func countNodes(t *span.Tree, limit int) int {
	n := 0
	visit(t, t.Root(), func(span.ID, int) bool {
		n++
		return n < limit
	})
	return n
}

// cell is one row of the object tree before layout: its cells as shown,
// each made fit for the terminal by the clean function of the format.
type cell struct {
	name, cont string // the name with its tree prefix; the prefix of rows under it
	typ, value string
	span       string
	about      string
	cat        span.Category
	err        bool
	// The cells' widths in terminal cells.
	nameCells, typCells, valCells, spanCells int
}

// rowOpts say how rows are made.
type rowOpts struct {
	short bool // descriptions cut to maxAbout runes
}

// cutName is the name of the row that stands for nodes left out.
const cutName = "..."

// treeRows returns the rows of the first keep nodes of t (depth first,
// parents first; keep < 0: all of them). When nodes are left out, a last
// row named "..." with the description cut (never shortened) stands
// where the first of them would be, as the last child of that node's
// parent. Descriptions longer than maxAbout runes are cut when o.short is
// set.
//
// The rows' strings are made in s, and are good until s is released.
func treeRows(s *rowScratch, t *span.Tree, keep int, cut string, clean func(string) string, o rowOpts) []cell {
	root := t.Root()
	if root == span.None {
		return nil
	}
	if keep < 0 {
		keep = t.Len() + 1
	}
	// Which nodes are kept, and the first one that is not: a node is
	// drawn as the last of its siblings when the next sibling is not
	// kept, unless that sibling's place is taken by the "..." row.
	kept := slices.Grow(s.kept[:0], t.Len())[:t.Len()]
	clear(kept)
	s.kept = kept
	dropped, n := span.None, 0
	visit(t, root, func(id span.ID, _ int) bool {
		if n == keep {
			dropped = id
			return false
		}
		kept[id] = true
		n++
		return true
	})
	prefix := append(s.prefix[:0], "")
	out := slices.Grow(s.cells[:0], n+1) // the kept nodes and perhaps the "..." row
	val := s.val[:0]
	a := &s.arena
	visit(t, root, func(id span.ID, depth int) bool {
		if !kept[id] {
			return false
		}
		r := t.N(id)
		name := clean(a.displayName(t, id))
		cont := ""
		if depth > 0 {
			name = a.join(prefix[depth], "+-- ", name)
			if next := r.Next; next == span.None || !kept[next] && next != dropped {
				cont = a.join(prefix[depth], "    ")
			} else {
				cont = a.join(prefix[depth], "|   ")
			}
		}
		prefix = append(prefix[:depth+1], cont)
		val = t.AppendValueText(val[:0], id)
		c := cell{name: name, cont: cont, typ: clean(t.Type(id)), value: clean(a.bytes(val)),
			span: a.span(r.Off, r.Len), cat: r.Cat}
		c.about = clean(t.About(id))
		if f := t.Flag(id); f != "" {
			c.about = strings.TrimSpace("[" + clean(f) + "] " + c.about)
		}
		if err := t.Err(id); err != nil {
			c.about, c.err = "ERROR: "+clean(err.Error()), true
		}
		if o.short {
			c.about = shorten(c.about)
		}
		out = append(out, c.measured())
		return true
	})
	if dropped != span.None {
		depth := 0
		for p := t.N(dropped).Parent; p != span.None; p = t.N(p).Parent {
			depth++
		}
		// The row's text is ours, not a description: it is never cut,
		// so that it says how to see more.
		p := prefix[depth]
		out = append(out, cell{name: p + "+-- " + cutName, cont: p + "    ", span: "[0x0000, 0B]", about: cut}.measured())
	}
	s.cells, s.prefix, s.val = out, prefix, val
	return out
}

// rowScratch holds what treeRows makes a tree's rows in: its string
// arena, the rows and the marks of the nodes kept. A capture's frames are
// many trees one after the other, so it is reused from one to the next
// (rowScratches) rather than made and collected each time.
type rowScratch struct {
	arena  strArena
	cells  []cell
	kept   []bool
	prefix []string
	val    []byte
}

// rowScratches keeps rowScratch values for reuse.
var rowScratches = sync.Pool{New: func() any { return new(rowScratch) }}

// Bounds on a rowScratch kept for reuse, so that one huge tree does not
// pin its room: the arena's chunks and the rows (a row is about 150 bytes).
const (
	maxScratchArena = 8 << 20
	maxScratchRows  = 1 << 16
)

// getRowScratch returns a rowScratch to make a tree's rows in.
func getRowScratch() *rowScratch { return rowScratches.Get().(*rowScratch) }

// release gives s back for reuse: the rows made in it, and their strings,
// must not be used afterwards.
func (s *rowScratch) release() {
	if s.arena.size() > maxScratchArena || cap(s.cells) > maxScratchRows {
		return
	}
	clear(s.cells) // the rows' descriptions and errors: not kept alive
	clear(s.prefix)
	s.cells, s.prefix = s.cells[:0], s.prefix[:0]
	s.arena.reset()
	rowScratches.Put(s)
}

// spanText is the [offset, size] cell: "[0x0009, 4B]".
func spanText(off, size int32) string {
	if off < 0 {
		return fmt.Sprintf("[0x%04x, %dB]", off, size)
	}
	var buf [32]byte
	return string(appendSpan(buf[:0], off, size))
}

// hexDigits is the number of hex digits of v >= 0 (1 for 0).
func hexDigits(v int64) int {
	n := 1
	for v >= 16 {
		v >>= 4
		n++
	}
	return n
}

// measured returns c with its widths set.
func (c cell) measured() cell {
	c.nameCells, c.typCells, c.valCells, c.spanCells = cells(c.name), cells(c.typ), cells(c.value), cells(c.span)
	return c
}

// shorten cuts a description longer than maxAbout runes to maxAbout-3
// plus "...".
func shorten(about string) string {
	if utf8.RuneCountInString(about) > maxAbout {
		return string([]rune(about)[:maxAbout-3]) + "..."
	}
	return about
}

// leafCats returns the category of each of the first n bytes, from the
// leaves of t (nil when there is no tree).
func leafCats(n int, t *span.Tree) []span.Category {
	if t == nil || t.Root() == span.None {
		return nil
	}
	cats := make([]span.Category, n)
	visit(t, t.Root(), func(id span.ID, _ int) bool {
		if r := t.N(id); r.First == span.None {
			for i := max(int(r.Off), 0); i < int(r.Off)+int(r.Len) && i < n; i++ {
				cats[i] = r.Cat
			}
		}
		return true
	})
	return cats
}
