// Package text renders for a terminal, from the one annotated tree
// (span.Tree): reference pages (the summary, a hex byte grid, and the
// object tree in the reference pages' exact column format), record pages,
// and decoded frames (package report's records of them), within the
// frame's output budget.
package text

import (
	"bytes"
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
	var b bytes.Buffer
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
	_, err := w.Write(b.Bytes())
	return err
}

// Grid writes the byte layout: a heading, column heads 0-F, and one row of
// 16 bytes per line with a 0000-style offset and an ASCII gutter.
func Grid(b *bytes.Buffer, data []byte) {
	fmt.Fprintf(b, "byte layout (%d bytes, 16 bytes per row)\n\n", len(data))
	b.WriteString(strings.TrimRight(gridHead(4), " ") + "\n") // no trailing blank after "F"
	gridRows(b, data, 4, nil, Style{})
}

// gridHead is the grid's column heads after an offset column of digits.
func gridHead(digits int) string {
	head := strings.Repeat(" ", digits+1)
	for i := 0; i < 16; i++ {
		head += fmt.Sprintf(" %-2X", i)
	}
	return head
}

// gridRows writes the grid's rows of data: each a zero-padded hex offset
// of at least digits digits, 16 bytes in hex (each painted with the
// colour of its category in cats when st colours and cats is not nil),
// and the ASCII gutter. A row is made in a buffer and written at once.
func gridRows(b *bytes.Buffer, data []byte, digits int, cats []span.Category, st Style) {
	if !st.Color {
		plainGridRows(b, data, digits)
		return
	}
	styledGridRows(b, data, digits, cats, st)
}

// styledGridRows is gridRows for any style, a byte at a time.
func styledGridRows(b *bytes.Buffer, data []byte, digits int, cats []span.Category, st Style) {
	const hexChars = "0123456789abcdef"
	var line []byte
	dim := st.Color
	for row := 0; row < len(data); row += 16 {
		end := min(row+16, len(data))
		line = line[:0]
		if dim {
			line = append(line, "\x1b["+colorDim+"m"...)
		}
		for n := max(digits, hexDigits(int64(row))) - 1; n >= 0; n-- {
			line = append(line, hexChars[(row>>(4*n))&0xf])
		}
		if dim {
			line = append(line, "\x1b[0m"...)
		}
		line = append(line, ' ')
		for i := row; i < row+16; i++ {
			if i >= end {
				line = append(line, "   "...)
				continue
			}
			line = append(line, ' ')
			code := ""
			if st.Color && cats != nil {
				code = catColors[cats[i]]
			}
			if code != "" {
				line = append(line, "\x1b["...)
				line = append(line, code...)
				line = append(line, 'm')
			}
			line = append(line, hexChars[data[i]>>4], hexChars[data[i]&0xf])
			if code != "" {
				line = append(line, "\x1b[0m"...)
			}
		}
		line = append(line, "  "...)
		for _, c := range data[row:end] {
			if c >= 0x20 && c < 0x7f {
				line = append(line, c)
			} else {
				line = append(line, '.')
			}
		}
		line = append(line, '\n')
		b.Write(line)
	}
}

// plainGridRows is gridRows without colours: the rows of a decoded
// capture's inflated batches are most of what `decode -v` writes, so each
// is laid out at fixed places in one array, not appended byte by byte.
func plainGridRows(b *bytes.Buffer, data []byte, digits int) {
	const hexChars = "0123456789abcdef"
	// The widest row: an offset of up to 16 hex digits, a blank, 16 bytes
	// of " xx", two blanks, 16 characters and the newline.
	var line [16 + 1 + 48 + 2 + 16 + 1]byte
	digits = min(digits, 16) // an int's offsets have no more
	for row := 0; row < len(data); row += 16 {
		chunk := data[row:min(row+16, len(data))]
		d := max(digits, hexDigits(int64(row)))
		for n, v := d-1, row; n >= 0; n, v = n-1, v>>4 {
			line[n] = hexChars[v&0xf]
		}
		line[d] = ' '
		hex := line[d+1 : d+1+48]
		for i := range 16 {
			if i < len(chunk) {
				c := chunk[i]
				hex[3*i], hex[3*i+1], hex[3*i+2] = ' ', hexChars[c>>4], hexChars[c&0xf]
			} else {
				hex[3*i], hex[3*i+1], hex[3*i+2] = ' ', ' ', ' '
			}
		}
		n := d + 1 + 48
		line[n], line[n+1] = ' ', ' '
		n += 2
		for _, c := range chunk {
			if c < 0x20 || c >= 0x7f {
				c = '.'
			}
			line[n] = c
			n++
		}
		line[n] = '\n'
		b.Write(line[:n+1])
	}
}

// Tree writes the object tree of t: columns name, type, value, [offset,
// size] and description, each as wide as its longest cell plus two, with
// +-- and |   prefixes, right-trimmed.
// A reference page's tree (span.Tree.Sample) shows its zeros bare.
func Tree(b *bytes.Buffer, t *span.Tree) { tree(b, t, -1, "") }

// tree writes the first keep nodes of t in the reference format (keep <
// 0: all), a row "..." with the description cut standing for the rest.
func tree(b *bytes.Buffer, t *span.Tree, keep int, cut string) {
	if t == nil {
		return
	}
	s := getRowScratch()
	defer s.release()
	rows := treeRows(s, t, keep, cut, Escape, rowOpts{short: true})
	var wn, wt, wv, ws int
	for _, r := range rows {
		wn, wt, wv, ws = max(wn, r.nameCells), max(wt, r.typCells), max(wv, r.valCells), max(ws, r.spanCells)
	}
	var line []byte
	for _, r := range rows {
		line = appendPadded(line[:0], r.name, r.nameCells, wn+2)
		line = appendPadded(line, r.typ, r.typCells, wt+2)
		line = appendPadded(line, r.value, r.valCells, wv+2)
		line = appendPadded(line, r.span, r.spanCells, ws+2)
		line = append(line, r.about...)
		line = append(bytes.TrimRight(line, " "), '\n')
		b.Write(line)
	}
}

// appendPadded appends s, which takes n terminal cells, and spaces to w
// cells.
func appendPadded(dst []byte, s string, n, w int) []byte {
	dst = append(dst, s...)
	for ; n < w; n++ {
		dst = append(dst, ' ')
	}
	return dst
}
