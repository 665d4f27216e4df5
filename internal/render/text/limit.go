package text

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/span"
)

// gridRowBytes is the size of one row of Grid; coloured rows carry an
// escape sequence per byte.
const (
	gridRowBytes      = 74
	gridRowBytesColor = 340
)

// limitedGrid writes the byte grid of data in style st (coloured from the
// leaves of t), or of as many leading bytes as room allows, followed by a
// line that says how many were left out.
func limitedGrid(b *bytes.Buffer, data []byte, t *span.Tree, room int64, bud *budget.Budget, st Style) {
	start := b.Len()
	rowBytes := int64(gridRowBytes)
	if st.Color {
		rowBytes = gridRowBytesColor
	}
	rows := (room - 2*rowBytes) / rowBytes
	shown := len(data)
	if int64(len(data)+15)/16 > rows {
		shown = int(max(rows, 0)) * 16
	}
	// Room for the rows at once, not by doubling (a plain row is
	// gridRowBytes, a coloured one less than gridRowBytesColor).
	b.Grow(((shown+15)/16 + 4) * int(rowBytes))
	GridStyle(b, data[:shown], t, st)
	if shown < len(data) {
		b.WriteString(report.OutputSpent(bud, fmt.Sprintf("bytes 0x%x to 0x%x of %d", shown, len(data), len(data))) + "\n")
	}
	bud.AddOutput(b.Len() - start)
}

// limitedTree writes the object tree of t, or of its first nodes (depth
// first) that fit in room, with a last row that says how many nodes were
// left out. The rows are counted in t's table; rows are as wide as the
// widest, so the node count that fits is found by halving.
func limitedTree(b *bytes.Buffer, t *span.Tree, room int64, bud *budget.Budget, st Style) {
	total := countNodes(t, t.Len()+1)
	if total == 0 {
		return
	}
	keep := total
	// Rows are padded to the widest: measure the widest row of the first
	// nodes that could fit, and keep as many as fit at that width (fewer
	// nodes are never wider).
	if est := room / 48; int64(keep) > est {
		keep = int(max(est, 1))
	}
	w := rowWidth(t, keep)
	if int64(keep)*w > room {
		keep = int(max(room/w, 1))
	}
	start := b.Len()
	for {
		if keep < total {
			treeStyle(b, t, keep, report.OutputSpent(bud, english.Count(total-keep, "more tree node")), st)
		} else {
			treeStyle(b, t, -1, "", st)
		}
		if n := int64(b.Len() - start); n <= room || keep <= 1 {
			if n > room {
				// Even one row is too wide: cut at a line boundary.
				out := b.Bytes()[start:]
				b.Truncate(start + bytes.LastIndexByte(out[:max(room, 0)], '\n') + 1)
				b.WriteString(report.OutputSpent(bud, "the object tree") + "\n")
			}
			bud.AddOutput(b.Len() - start)
			return
		}
		b.Truncate(start) // too long: fewer nodes
		keep /= 2
	}
}

// rowWidth is about the width of Tree's rows for the first keep nodes of
// t (depth first): the widest cell of each column, padded, plus the
// widest description.
func rowWidth(t *span.Tree, keep int) int64 {
	var wn, wt, wv, ws, wa int
	left := keep
	var val []byte
	visit(t, t.Root(), func(id span.ID, depth int) bool {
		if left <= 0 {
			return false
		}
		left--
		r := t.N(id)
		name := len(t.Name(id))
		if r.Index >= 0 {
			name += len(strconv.Itoa(int(r.Index))) + 2
		}
		wn = max(wn, 4*depth+name)
		wt = max(wt, len(t.Type(id)))
		val = t.AppendValueText(val[:0], id)
		wv = max(wv, len(val))
		ws = max(ws, len("[0x, B]")+max(4, hexDigits(int64(r.Off)))+len(strconv.Itoa(int(r.Len))))
		about := len(t.About(id))
		if f := t.Flag(id); f != "" {
			about += len(f) + 3
		}
		if err := t.Err(id); err != nil {
			about = len(err.Error()) + 7
		}
		wa = max(wa, min(about, maxAbout))
		return true
	})
	return int64(wn+2+wt+2+wv+2+ws+2+wa) + 1
}
