package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/span"
)

// budgetNote is the Budget text of a frame: the limits reached while it
// was decoded (the messages after the first before of the budget's) and
// how many compressed areas were left compressed.
func budgetNote(b *budget.Budget, before, notInflatedBefore int) string {
	msgs := b.Spent()
	if len(msgs) <= before && b.NotInflated == notInflatedBefore {
		return ""
	}
	parts := append([]string(nil), msgs[min(before, len(msgs)):]...)
	if n := b.NotInflated - notInflatedBefore; n > 0 {
		parts = append(parts, plural(n, "compressed area")+" of this frame shown compressed, not inflated")
	}
	return strings.Join(parts, "; ")
}

func plural(n int, w string) string {
	if n == 1 {
		return "1 " + w
	}
	return strconv.Itoa(n) + " " + w + "s"
}

// outputBudget returns the budget that bounds the rendering of f: the one
// it was decoded under, or the default for its size.
func (f *Frame) outputBudget() *budget.Budget {
	if f.bud == nil {
		f.bud = budget.Limits{}.For(nil, len(f.Bytes))
	}
	return f.bud
}

// renderBudget is a fresh output budget for one rendering of f: each
// Text or JSON rendering (package jsonr) of a frame may write up to its output limit.
func (f *Frame) renderBudget() *budget.Budget {
	return &budget.Budget{MaxOutput: f.outputBudget().MaxOutput}
}

// outputSpent is the line that says the output budget cut the rendering.
func outputSpent(b *budget.Budget, what string) string {
	return fmt.Sprintf("output budget of %s for this frame spent: %s not shown (raise it with --max-output)", budget.Size(b.MaxOutput), what)
}

// gridRowBytes is the size of one row of text.Grid; coloured rows carry
// an escape sequence per byte.
const (
	gridRowBytes      = 74
	gridRowBytesColor = 340
)

// limitedGrid writes the byte grid of data in style st, or of as many
// leading bytes as room allows, followed by a line that says how many
// were left out.
func limitedGrid(b *strings.Builder, data []byte, tree *page.Node, room int64, bud *budget.Budget, st text.Style) {
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
	text.GridStyle(b, data[:shown], tree, st)
	if shown < len(data) {
		b.WriteString(outputSpent(bud, fmt.Sprintf("bytes 0x%x to 0x%x of %d", shown, len(data), len(data))) + "\n")
	}
	bud.AddOutput(b.Len() - start)
}

// limitedTree writes text.Tree of root, or of its first nodes (depth
// first) that fit in room, with a last row that says how many nodes were
// left out. Rows are as wide as the widest, so the node count that fits
// is found by halving.
func limitedTree(b *strings.Builder, root *page.Node, room int64, bud *budget.Budget, st text.Style) {
	total := countPage(root)
	keep := total
	// Rows are padded to the widest: measure the widest row of the first
	// nodes that could fit, and keep as many as fit at that width (fewer
	// nodes are never wider).
	if est := room / 48; int64(keep) > est {
		keep = int(max(est, 1))
	}
	if w := rowWidth(root, keep); int64(keep)*w > room {
		keep = int(max(room/w, 1))
	}
	for {
		var sb strings.Builder
		t := root
		if keep < total {
			t = prunePage(root, keep, total-keep, bud)
		}
		text.TreeStyle(&sb, t, st)
		if int64(sb.Len()) <= room || keep <= 1 {
			out := sb.String()
			if int64(len(out)) > room {
				// Even one row is too wide: cut at a line boundary.
				cut := strings.LastIndexByte(out[:max(room, 0)], '\n') + 1
				out = out[:cut] + outputSpent(bud, "the object tree") + "\n"
			}
			b.WriteString(out)
			bud.AddOutput(len(out))
			return
		}
		keep /= 2
	}
}

// treeAbout is the longest description text.Tree shows (its maxAbout).
const treeAbout = 78

// rowWidth is about the width of text.Tree's rows for the first keep
// nodes of the tree under root (depth first): the widest cell of each
// column, padded, plus the widest description.
func rowWidth(root *page.Node, keep int) int64 {
	var wn, wt, wv, ws, wa int
	left := keep
	var walk func(n *page.Node, depth int)
	walk = func(n *page.Node, depth int) {
		if left <= 0 {
			return
		}
		left--
		wn = max(wn, 4*depth+len(n.Name))
		wt = max(wt, len(n.Type))
		wv = max(wv, len(n.Value))
		ws = max(ws, len("[0x, B]")+max(4, hexLen(n.Offset))+len(strconv.Itoa(n.Size)))
		about := len(n.About)
		if n.Flag != "" {
			about += len(n.Flag) + 3
		}
		if n.Error != "" {
			about = len(n.Error) + 7
		}
		wa = max(wa, min(about, treeAbout))
		for _, k := range n.Children {
			walk(k, depth+1)
		}
	}
	walk(root, 0)
	return int64(wn+2+wt+2+wv+2+ws+2+wa) + 1
}

func hexLen(v int) int {
	n := 1
	for v >= 16 {
		v /= 16
		n++
	}
	return n
}

func countPage(n *page.Node) int {
	c := 1
	for _, k := range n.Children {
		c += countPage(k)
	}
	return c
}

// prunePage copies the first keep nodes of the tree under n (depth first,
// parents before children) and adds a row where the cut is that says how
// many were left out. Detached trees are dropped from the copy.
func prunePage(n *page.Node, keep, dropped int, bud *budget.Budget) *page.Node {
	left := keep
	var cp func(n *page.Node) *page.Node
	marked := false
	cp = func(n *page.Node) *page.Node {
		left--
		c := *n
		c.Children = nil
		c.Detached = nil
		for _, k := range n.Children {
			if left <= 0 {
				if !marked {
					marked = true
					c.Children = append(c.Children, &page.Node{Name: "...", Path: c.Path, About: outputSpent(bud, plural(dropped, "more tree node"))})
				}
				break
			}
			c.Children = append(c.Children, cp(k))
		}
		return &c
	}
	return cp(n)
}

// pruneSpan is a shallow copy of the first keep nodes of the span tree
// under n, depth first, for building page trees of bounded size; it
// returns the copy and whether anything was left out. Detached trees are
// kept (shared), not counted.
func pruneSpan(n *span.Node, keep int) (*span.Node, bool) {
	left := keep
	cut := false
	var cp func(n *span.Node) *span.Node
	cp = func(n *span.Node) *span.Node {
		left--
		c := *n
		c.Kids = nil
		for _, k := range n.Kids {
			if left <= 0 {
				cut = true
				break
			}
			c.Kids = append(c.Kids, cp(k))
		}
		return &c
	}
	return cp(n), cut
}
