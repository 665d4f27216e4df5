package text

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"

	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/span"
)

// Style is how output for a terminal looks. The zero Style is the
// reference pages' format exactly (what pipes and files get); a Width
// makes every line fit that many terminal cells, Color adds ANSI colours
// by category, and Wide prints one line per tree row with every
// description in full whatever the width.
type Style struct {
	Width int  // terminal columns; 0: no limit
	Color bool // ANSI colours: categories as on the site, errors red
	Wide  bool // one line per row, descriptions never cut or moved
	// GridMax bounds the bytes a grid shows (0: all); the heading says how
	// many were left out.
	GridMax int
}

// Reference reports whether s is the reference format.
func (s Style) Reference() bool { return s.Width == 0 && !s.Color && !s.Wide }

// ANSI colours of the categories (the hues of the site's legend) and of
// errors and headings.
var catColors = map[span.Category]string{
	span.CatFrame:        "38;5;245", // grey
	span.CatHeader:       "38;5;33",  // blue
	span.CatRequestBody:  "38;5;34",  // green
	span.CatRecordBatch:  "38;5;208", // orange
	span.CatRecord:       "38;5;178", // yellow
	span.CatResponseBody: "38;5;135", // purple
	span.CatTagged:       "38;5;205", // pink
}

const (
	colorError   = "1;31"
	colorHeading = "1"
	colorDim     = "2"
)

// paint wraps s in an ANSI colour when colouring.
func (s Style) paint(code, text string) string {
	if !s.Color || code == "" || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// Paint colours text as an error, when colouring ("error" is the only
// kind outside this package).
func (s Style) Error(text string) string { return s.paint(colorError, text) }

// cells is the display width of s in terminal cells.
func cells(s string) int {
	// ASCII, nearly every cell, is a cell a printable byte and none a
	// control byte, as runewidth counts it, without its grapheme walk.
	n := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf:
			return runewidth.StringWidth(s)
		case c >= 0x20 && c != 0x7f:
			n++
		}
	}
	return n
}

// padCells pads s with spaces to w cells.
func padCells(s string, w int) string {
	if n := cells(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// Safe replaces control characters (escape sequences from crafted specs or
// captures among them) by U+FFFD, so nothing but this package's own
// colours reaches the terminal.
func Safe(s string) string {
	clean := true
	for _, r := range s {
		if r != '\n' && r != '\t' && (unicode.IsControl(r) || r == utf8.RuneError) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			return utf8.RuneError
		}
		return r
	}, s)
}

// Wrap breaks prose into lines of at most width cells at spaces, the
// continuation lines indented like the first line plus two; a word wider
// than the line is broken. width 0 leaves s as it is.
func Wrap(s string, width int) string {
	if width <= 0 {
		return s
	}
	var b bytes.Buffer
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if cells(l) <= width {
			b.WriteString(l)
			continue
		}
		lead := l[:len(l)-len(strings.TrimLeft(l, " "))]
		b.WriteString(strings.Join(wrapCells(strings.TrimLeft(l, " "), width, lead, lead+"  "), "\n"))
	}
	return b.String()
}

// wrapCells wraps words into lines of at most width cells, the first
// starting with first and the others with rest (indents).
func wrapCells(s string, width int, first, rest string) []string {
	var out []string
	cur := first
	curW := cells(first)
	empty := true
	flush := func() {
		out = append(out, strings.TrimRight(cur, " "))
		cur, curW, empty = rest, cells(rest), true
	}
	for _, word := range strings.Fields(s) {
		ww := cells(word)
		if !empty && curW+1+ww > width {
			flush()
		}
		if !empty {
			cur += " "
			curW++
		}
		// A word wider than a whole line is broken by cells.
		for curW+ww > width && ww > 0 && curW < width {
			head, headW, tail := splitCells(word, width-curW)
			if head == "" {
				break
			}
			cur += head
			flush()
			// The rest's width by subtraction (measuring it again for
			// every piece was quadratic in the word's length), measured
			// exactly once it is short.
			word, ww = tail, ww-headW
			if ww <= 2*width {
				ww = cells(tail)
			}
		}
		cur += word
		curW += ww
		empty = false
	}
	if !empty || len(out) == 0 {
		out = append(out, strings.TrimRight(cur, " "))
	}
	return out
}

// splitCells splits s after at most w cells; n is the head's width.
func splitCells(s string, w int) (head string, n int, tail string) {
	for i, r := range s {
		rw := runewidth.RuneWidth(r)
		if n+rw > w {
			return s[:i], n, s[i:]
		}
		n += rw
	}
	return s, n, ""
}

// PageStyle writes the whole page in a style (Page is PageStyle with the
// zero Style).
func PageStyle(w io.Writer, p *page.Page, st Style) error {
	if st.Reference() {
		return Page(w, p)
	}
	var b bytes.Buffer
	b.WriteString(st.paint(colorHeading, Safe(p.API)) + "\n\n")
	b.WriteString(Wrap(Safe(p.Intro), st.Width) + "\n\n")
	width := 0
	for _, it := range p.Summary {
		width = max(width, cells(it.Label))
	}
	for _, it := range p.Summary {
		label := padCells(Safe(it.Label), width) + "  "
		line := label + Safe(it.Value)
		if st.Width > 0 && cells(line) > st.Width {
			line = strings.Join(wrapCells(Safe(it.Value), st.Width, label, strings.Repeat(" ", width+2)), "\n")
		}
		b.WriteString(line + "\n")
	}
	for _, s := range []*page.Section{p.Request, p.Response} {
		title := "Request"
		if s.Kind == "response" {
			title = "Response"
		}
		b.WriteString("\n" + st.paint(colorHeading, title) + "\n\n" + Wrap(Safe(s.Title), st.Width) + "\n\n")
		GridStyle(&b, s.Bytes, s.Spans, st)
		b.WriteString("\n" + st.paint(colorHeading, "object tree") + "\n\n")
		TreeStyle(&b, s.Spans, st)
		b.WriteString("\n" + st.paint(colorHeading, "kafka message schema (.json)") + "\n\n")
		schema := Safe(s.Schema)
		if st.Width > 0 && !st.Wide {
			schema = wrapLong(schema, st.Width)
		}
		b.WriteString(schema)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// wrapLong wraps only the lines wider than width, keeping the others (and
// their spacing) as they are.
func wrapLong(s string, width int) string {
	lines := strings.SplitAfter(s, "\n")
	var b bytes.Buffer
	for _, l := range lines {
		body := strings.TrimSuffix(l, "\n")
		if cells(body) <= width {
			b.WriteString(l)
			continue
		}
		b.WriteString(Wrap(body, width))
		if strings.HasSuffix(l, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// GridStyle writes the byte layout like Grid, 16 bytes a row whatever the
// width, each byte coloured by the category of its leaf in t when
// colouring. Offsets widen past 0xffff so that the columns stay aligned.
func GridStyle(b *bytes.Buffer, data []byte, t *span.Tree, st Style) {
	shown := data
	if st.GridMax > 0 && len(data) > st.GridMax {
		shown = data[:st.GridMax]
	}
	var cats []span.Category
	if st.Color {
		cats = leafCats(len(shown), t)
	}
	digits := offsetDigits(len(shown))
	if len(shown) < len(data) {
		fmt.Fprintf(b, "byte layout (%d bytes, 16 bytes per row; the first %d shown, %d left out: --grid-max N shows more)\n\n", len(data), len(shown), len(data)-len(shown))
	} else {
		fmt.Fprintf(b, "byte layout (%d bytes, 16 bytes per row)\n\n", len(data))
	}
	b.WriteString(st.paint(colorDim, strings.TrimRight(gridHead(digits), " ")) + "\n")
	gridRows(b, shown, digits, cats, st)
}

// offsetDigits is the width of the grid's offset column: four hex digits,
// more when the last row's offset needs them.
func offsetDigits(n int) int {
	d := 4
	for last := max(n-1, 0) >> 16; last > 0; last >>= 4 {
		d++
	}
	return d
}

// TreeStyle writes the object tree of t in a style (Tree is TreeStyle
// with the zero Style). With a Width the tree fits it: when the rows are
// wider, descriptions move to their own indented lines under their rows
// (in full, wrapped), and when even that is too wide, the value and
// [offset, size] go on a line under the name.
func TreeStyle(b *bytes.Buffer, t *span.Tree, st Style) { treeStyle(b, t, -1, "", st) }

// treeStyle is TreeStyle of the first keep nodes of t (keep < 0: all), a
// row "..." with the description cut standing for the rest.
func treeStyle(b *bytes.Buffer, t *span.Tree, keep int, cut string, st Style) {
	if st.Reference() {
		tree(b, t, keep, cut)
		return
	}
	if t == nil {
		return
	}
	s := getRowScratch()
	defer s.release()
	rows := treeRows(s, t, keep, cut, Safe, rowOpts{short: st.Width == 0 && !st.Wide})
	var wn, wt, wv, ws, full int
	for _, r := range rows {
		wn, wt, wv, ws = max(wn, r.nameCells), max(wt, r.typCells), max(wv, r.valCells), max(ws, r.spanCells)
	}
	cols := wn + 2 + wt + 2 + wv + 2 + ws + 2
	for _, r := range rows {
		full = max(full, cols+cells(r.about))
	}
	oneLine := st.Wide || st.Width == 0 || full <= st.Width
	underName := !oneLine && cols-2 > st.Width
	var line []byte
	for _, r := range rows {
		name := st.paint(catColors[r.cat], r.name)
		about := r.about
		if r.err {
			about = st.Error(about)
		}
		if oneLine {
			line = appendPadded(line[:0], name, r.nameCells, wn+2)
			line = appendPadded(line, r.typ, r.typCells, wt+2)
			line = appendPadded(line, r.value, r.valCells, wv+2)
			line = appendPadded(line, r.span, r.spanCells, ws+2)
			line = append(line, about...)
			line = append(bytes.TrimRight(line, " "), '\n')
			b.Write(line)
			continue
		}
		indent := r.cont + "    "
		if !underName {
			line := name + strings.Repeat(" ", wn+2-r.nameCells) + padCells(r.typ, wt+2) + padCells(r.value, wv+2) + r.span
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		} else {
			head := name
			if r.typ != "" && r.nameCells+2+r.typCells <= st.Width {
				head += "  " + r.typ
			} else if r.typ != "" {
				head += "\n" + strings.Join(wrapCells(r.typ, st.Width, indent, indent), "\n")
			}
			b.WriteString(head + "\n")
			detail := strings.TrimSpace(strings.TrimSpace(r.value) + "  " + r.span)
			if cells(indent)+cells(detail) <= st.Width {
				b.WriteString(indent + detail + "\n")
			} else {
				b.WriteString(strings.Join(wrapCells(detail, st.Width, indent, indent+"  "), "\n") + "\n")
			}
		}
		if r.about != "" {
			lines := wrapCells(r.about, st.Width, indent, indent)
			for _, l := range lines {
				text := strings.TrimPrefix(l, indent)
				if r.err {
					text = st.Error(text)
				}
				b.WriteString(indent + text + "\n")
			}
		}
	}
}
