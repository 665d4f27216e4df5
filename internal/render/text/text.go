// Package text renders for a terminal, from the one annotated tree
// (span.Tree): reference pages (the summary, a hex byte grid, and the
// object tree in the reference pages' exact column format), record pages,
// and decoded frames (package report's records of them), within the
// frame's output budget.
package text

import (
	"fmt"
	"io"
	"strings"

	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/span"
)

// maxAbout is the longest description shown in full; longer ones are cut
// to maxAbout-3 characters plus "...".
const maxAbout = 78

// Page writes the whole page. Every text that comes from the spec (names,
// abouts, the schema with its comments) is escaped for the terminal.
func Page(w io.Writer, p *page.Page) error {
	var b strings.Builder
	b.WriteString(Escape(p.API) + "\n\n")
	b.WriteString(Escape(p.Intro) + "\n\n")
	width := 0
	for _, it := range p.Summary {
		width = max(width, len(Escape(it.Label)))
	}
	for _, it := range p.Summary {
		fmt.Fprintf(&b, "%-*s  %s\n", width, Escape(it.Label), Escape(it.Value))
	}
	for _, s := range []*page.Section{p.Request, p.Response} {
		title := "Request"
		if s.Kind == "response" {
			title = "Response"
		}
		b.WriteString("\n" + title + "\n\n" + Escape(s.Title) + "\n\n")
		Grid(&b, s.Bytes)
		b.WriteString("\nobject tree\n\n")
		Tree(&b, s.Spans)
		b.WriteString("\nkafka message schema (.json)\n\n")
		b.WriteString(EscapeBlock(s.Schema))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Grid writes the byte layout: a heading, column heads 0-F, and one row of
// 16 bytes per line with a 0000-style offset and an ASCII gutter.
func Grid(b *strings.Builder, data []byte) {
	fmt.Fprintf(b, "byte layout (%d bytes, 16 bytes per row)\n\n", len(data))
	head := "     "
	for i := 0; i < 16; i++ {
		head += fmt.Sprintf(" %-2X", i)
	}
	b.WriteString(strings.TrimRight(head, " ") + "\n") // no trailing blank after "F"
	for row := 0; row < len(data); row += 16 {
		end := min(row+16, len(data))
		fmt.Fprintf(b, "%04x ", row)
		for i := row; i < row+16; i++ {
			if i < end {
				fmt.Fprintf(b, " %02x", data[i])
			} else {
				b.WriteString("   ")
			}
		}
		b.WriteString("  ")
		for _, c := range data[row:end] {
			if c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
			} else {
				b.WriteByte('.')
			}
		}
		b.WriteString("\n")
	}
}

// Tree writes the object tree of t: columns name, type, value, [offset,
// size] and description, each as wide as its longest cell plus two, with
// +-- and |   prefixes, right-trimmed.
// A reference page's tree (span.Tree.Sample) shows its zeros bare.
func Tree(b *strings.Builder, t *span.Tree) { tree(b, t, -1, "") }

// tree writes the first keep nodes of t in the reference format (keep <
// 0: all), a row "..." with the description cut standing for the rest.
func tree(b *strings.Builder, t *span.Tree, keep int, cut string) {
	if t == nil {
		return
	}
	rows := treeRows(t, keep, cut, Escape, rowOpts{short: true})
	var wn, wt, wv, ws int
	for _, r := range rows {
		wn, wt, wv, ws = max(wn, r.nameCells), max(wt, r.typCells), max(wv, r.valCells), max(ws, r.spanCells)
	}
	for _, r := range rows {
		line := pad(r.name, wn+2) + pad(r.typ, wt+2) + pad(r.value, wv+2) + pad(r.span, ws+2) + r.about
		b.WriteString(strings.TrimRight(line, " "))
		b.WriteString("\n")
	}
}

// pad pads s to w terminal cells (a CJK character takes two).
func pad(s string, w int) string { return padCells(s, w) }
