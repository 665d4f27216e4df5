// Package hexin reads bytes written as hex in the shapes people paste:
// plain ("0000001c0021"), spaced ("00 00 00 1c"), colon-separated
// ("00:00:00:1c"), 0x-prefixed ("0x00, 0x1c" or "0x0000001c"), C arrays
// (xxd -i), and dumps
// with an offset column and an ASCII column: xxd, hexdump -C, Wireshark's
// "copy as hex dump", tcpdump -X / -XX (whose packet header lines are
// skipped), certutil -encodehex and PowerShell's Format-Hex (5 and 7); and bytes as programs print them, quoted literals with escapes
// and decimal lists (see literal.go).
//
// # Dumps
//
// A line is a dump line when it starts with an offset followed by a colon
// or by two or more spaces ("00000010: ", "\t0x0010:  ", "00000010  ").
// The hex bytes of a dump line end at the ASCII column, found as a gap of
// two or more spaces (a single two-space gap after the eighth byte, as
// hexdump -C and Wireshark write, does not count) or after the number of
// bytes the offsets say a line holds. Once an input has dump lines, lines
// without an offset (tcpdump's packet headers) are skipped, and an offset
// going back to zero starts a new packet: see [ParseDump]. A "*" line
// (hexdump, od and xxd -a squeeze repeated lines so) is expanded from the
// offsets around it, a line holding only an offset ends the dump at that
// length, a dump may start above offset zero (xxd -s), and tshark -x's
// "Reassembled TCP (N bytes):" blocks are kept apart as data sources
// ([Dump.Sources]). od -A x -t x1 and hexdump's default 16-bit words,
// whose offset is followed by a single space, are read too (see
// spaced.go). A UTF-8 byte order mark and CRLF line ends are ignored.
//
// Errors are [*Error] values naming the line and column.
package hexin

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/manifester/manifester/internal/textenc"
)

// ErrSyntax is the cause of every [Error].
var ErrSyntax = errors.New("not hex")

// Error says where the input stopped being hex.
type Error struct {
	Line, Col int // 1-based; Col counts bytes
	Msg       string
}

func (e *Error) Error() string {
	return fmt.Sprintf("hex input line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// Unwrap returns [ErrSyntax].
func (e *Error) Unwrap() error { return ErrSyntax }

// Format names the shape of a parsed input.
type Format string

// The recognised shapes.
const (
	FormatPlain Format = "plain" // hex digits with optional separators and 0x prefixes
	FormatDump  Format = "dump"  // offset column + hex + optional ASCII column
)

// Dump is a parsed input.
type Dump struct {
	Format Format
	// Packets holds the bytes of each packet of a dump: a new packet starts
	// where the offset column returns to zero. Plain input is one packet.
	Packets [][]byte
	// Sources names the data source of each packet when the dump labels
	// it, as tshark -x does for a frame with more than one ("Frame",
	// "Reassembled TCP"); "" when unlabelled.
	Sources []string
	// Start is the offset of the first byte of a dump that starts above
	// zero (xxd -s).
	Start int64
	// Headers counts the skipped non-dump lines of a dump (tcpdump's
	// packet header lines).
	Headers int
}

// Bytes returns all packets concatenated.
func (d *Dump) Bytes() []byte {
	n := 0
	for _, p := range d.Packets {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range d.Packets {
		out = append(out, p...)
	}
	return out
}

// Parse reads hex in any of the package's shapes and returns the bytes
// (all packets of a dump, concatenated).
func Parse(s string) ([]byte, error) { return ParseMax(s, MaxSqueezed) }

// ParseMax is Parse with the "*" lines of a dump standing for at most
// maxSqueezed bytes in all (see [ParseDumpMax]).
func ParseMax(s string, maxSqueezed int64) ([]byte, error) {
	d, err := ParseDumpMax(s, maxSqueezed)
	if err != nil {
		return nil, err
	}
	return d.Bytes(), nil
}

// ParseDump reads hex in any of the package's shapes, keeping a dump's
// packets apart. The "*" lines of a dump stand for at most MaxSqueezed
// bytes in all.
func ParseDump(s string) (*Dump, error) { return ParseDumpMax(s, MaxSqueezed) }

// ParseDumpMax is ParseDump with the "*" lines of a dump standing for at
// most maxSqueezed bytes in all (a server reading hex from strangers
// takes less than a command line does).
func ParseDumpMax(s string, maxSqueezed int64) (*Dump, error) {
	sq := &squeeze{left: maxSqueezed, max: maxSqueezed}
	s = strings.TrimPrefix(s, "\uFEFF") // a UTF-8 byte order mark
	if quoted(s) {
		// Hex in quotes (a JSON string's value copied with them,
		// "0000000c0003..."), or a literal: see quotedHex.
		u, isHex := quotedHex(s)
		if !isHex {
			return parseLiteral(s)
		}
		s = u
	}
	if d, ok, err := parseDecimal(s); ok {
		return d, err
	}
	s = cArray(s)
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	dumpish := false
	for _, l := range lines {
		if _, _, ok := offsetPrefix(l); ok {
			dumpish = true
			break
		}
	}
	if !dumpish {
		if d, ok, err := parseSpacedDump(lines, sq); ok {
			return d, err
		}
		return parsePlain(lines)
	}
	return parseDumpLines(lines, sq)
}

// cArray reduces a C array initializer, as `xxd -i` writes it
// ("unsigned char f[] = { 0x00, 0x1c };\nunsigned int f_len = 2;"), to the
// text between its braces, replacing the rest by blank lines so that line
// numbers stay right.
func cArray(s string) string {
	open := strings.IndexByte(s, '{')
	end := strings.LastIndexByte(s, '}')
	if open < 0 || end < open || !strings.Contains(s[:open], "[") {
		return s
	}
	blank := func(t string) string { return strings.Repeat("\n", strings.Count(t, "\n")) }
	return blank(s[:open]) + " " + s[open+1:end] + blank(s[end:])
}

func parsePlain(lines []string) (*Dump, error) {
	var out []byte
	for i, l := range lines {
		var err error
		out, err = plainLine(out, l, i+1)
		if err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, &Error{Line: 1, Col: 1, Msg: "no hex digits in the input"}
	}
	return &Dump{Format: FormatPlain, Packets: [][]byte{out}}, nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// plainLine appends the bytes of one line of plain hex. Separators are
// whitespace, ':', ',', '-', and the prefixes "0x"/"\x" before a group.
// Every group must have an even number of digits, so "0x1c" and "1c" are
// one byte and "0x0000001c" four.
func plainLine(out []byte, l string, line int) ([]byte, error) {
	i := 0
	for i < len(l) {
		c := l[i]
		switch {
		case c == ' ' || c == '\t' || c == ':' || c == ',' || c == '-' || c == ';':
			i++
			continue
		case c == '#':
			return out, nil // a comment to the end of the line
		}
		prefix := byte(0) // '0' or '\\' before an x
		if (c == '0' || c == '\\') && i+1 < len(l) && (l[i+1] == 'x' || l[i+1] == 'X') && i+2 < len(l) && isHex(l[i+2]) {
			prefix = c
			i += 2
		}
		start := i
		for i < len(l) && isHex(l[i]) {
			i++
		}
		switch {
		case prefix == '\\' && i-start != 2:
			// Python and Go print bytes as escapes and characters; unquoted,
			// "\x02ab" would read as 02 ab where they meant 02 'a' 'b'.
			return out, &Error{Line: line, Col: start - 1, Msg: fmt.Sprintf(`\x is followed by %d hex digit%s, not two (escapes mixed with characters, as Python and Go print bytes, are read in quotes: "\x02ab")`, i-start, plural(i-start))}
		case prefix == '0' && i-start == 1:
			out = append(out, hexVal(l[start])) // Go's %#v writes 0x0, 0xc
			continue
		}
		if i == start {
			return out, &Error{Line: line, Col: i + 1, Msg: fmt.Sprintf("unexpected %s", quoteChar(l, i))}
		}
		if i < len(l) && !isSep(l[i]) && l[i] != '\\' {
			return out, &Error{Line: line, Col: i + 1, Msg: fmt.Sprintf("unexpected %s after hex digits", quoteChar(l, i))}
		}
		if (i-start)%2 != 0 {
			return out, &Error{Line: line, Col: start + 1, Msg: fmt.Sprintf("odd number of hex digits (%d) in %s", i-start, excerpt(l[start:i]))}
		}
		for j := start; j < i; j += 2 {
			out = append(out, hexVal(l[j])<<4|hexVal(l[j+1]))
		}
	}
	return out, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func isSep(c byte) bool {
	return c == ' ' || c == '\t' || c == ':' || c == ',' || c == '-' || c == ';' || c == '#'
}

// maxExcerpt is the most of the input an error quotes.
const maxExcerpt = 40

// excerpt quotes s for an error, cut after maxExcerpt bytes (a line of
// megabytes of hex digits is not repeated whole in its error).
func excerpt(s string) string {
	if len(s) <= maxExcerpt {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:maxExcerpt]) + fmt.Sprintf("... (%d bytes)", len(s))
}

func quoteChar(l string, i int) string {
	if i >= len(l) {
		return "end of line"
	}
	return strconv.QuoteRune(rune(l[i]))
}

// offsetPrefix recognises a dump line's offset column: optional
// whitespace, an optional "0x", at least four hex digits, then a colon,
// two or more spaces, or a tab before bytes apart (certutil -encodehex),
// or, after exactly 16 digits, one space before bytes apart (PowerShell
// 7's Format-Hex). It returns the offset and where the data starts.
func offsetPrefix(l string) (off int64, rest int, ok bool) {
	i := 0
	for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
		i++
	}
	if i+1 < len(l) && l[i] == '0' && (l[i+1] == 'x' || l[i+1] == 'X') {
		i += 2
	}
	start := i
	for i < len(l) && isHex(l[i]) {
		i++
	}
	if i-start < 4 || i-start > 16 {
		return 0, 0, false
	}
	v, err := strconv.ParseUint(l[start:i], 16, 63)
	if err != nil {
		return 0, 0, false
	}
	switch {
	case i < len(l) && l[i] == ':' && (i+1 == len(l) || l[i+1] == ' ' || l[i+1] == '\t'):
		i++
	case i+1 < len(l) && (l[i] == ' ' || l[i] == '\t') && (l[i+1] == ' ' || l[i+1] == '\t'):
	case i+3 < len(l) && l[i] == '\t' && isHex(l[i+1]) && isHex(l[i+2]) && l[i+3] == ' ':
		// certutil: one tab, then bytes apart ("0000\t00 1a ..."); plain
		// hex in tab-separated groups ("0000001a\t00120003") is no dump.
	case i-start == 16 && i+2 < len(l) && l[i] == ' ' && isHex(l[i+1]) && isHex(l[i+2]) && (i+3 == len(l) || l[i+3] == ' '):
		// PowerShell 7's Format-Hex: a 16-digit offset, one space, then
		// bytes apart ("0000000000000000 00 1a ..."); plain hex in
		// groups of 16 digits ("0000001a00120003 00000000000a6d61") is
		// no dump.
	default:
		return 0, 0, false
	}
	for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
		i++
	}
	return int64(v), i, true
}

// lineKind is what a line of a dump is.
type lineKind uint8

const (
	lineOther lineKind = iota // a header line (tcpdump's packet lines), skipped
	lineData                  // offset and hex bytes
	lineStar                  // "*": lines equal to the one before were squeezed out
	lineEnd                   // an offset alone: the total length (hexdump, od)
	lineLabel                 // tshark's "Reassembled TCP (34 bytes):" before a data source
)

type dumpLine struct {
	kind  lineKind
	no    int
	off   int64
	text  string
	col   int    // byte index where text starts in the line
	label string // the data source a lineLabel names ("Frame", "Reassembled TCP")
}

// bareOffset recognises a line that holds only an offset, as hexdump and
// od end a dump with its length.
func bareOffset(l string) (int64, bool) {
	t := strings.TrimSpace(l)
	t = strings.TrimPrefix(strings.TrimPrefix(t, "0x"), "0X")
	if len(t) < 4 || len(t) > 16 {
		return 0, false
	}
	for i := 0; i < len(t); i++ {
		if !isHex(t[i]) {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(t, 16, 63)
	return int64(v), err == nil
}

// sourceLabel recognises the line tshark -x writes before each data source
// of a frame that has more than one: "Frame (78 bytes):", "Reassembled TCP
// (34 bytes):", "Decompressed ... (N bytes):".
func sourceLabel(l string) (string, bool) {
	t := strings.TrimSpace(l)
	rest, ok := strings.CutSuffix(t, " bytes):")
	if !ok {
		return "", false
	}
	i := strings.LastIndex(rest, " (")
	if i <= 0 {
		return "", false
	}
	if _, err := strconv.Atoi(rest[i+2:]); err != nil {
		return "", false
	}
	return rest[:i], true
}

// classify returns the lines of a dump that say something (data, "*",
// an offset alone, a source label) and counts its header lines (neither
// those nor blank). Blank and header lines are not kept: a dump of
// millions of them costs no more than its text.
func classify(lines []string) (dl []dumpLine, headers int) {
	for i, l := range lines {
		if off, rest, ok := offsetPrefix(l); ok {
			dl = append(dl, dumpLine{kind: lineData, no: i + 1, off: off, text: l[rest:], col: rest})
			continue
		}
		x := dumpLine{kind: lineOther, no: i + 1, off: -1}
		if strings.TrimSpace(l) == "*" {
			if len(dl) > 0 && dl[len(dl)-1].kind == lineStar {
				continue // one "*" says what many do
			}
			x.kind = lineStar
		} else if off, ok := bareOffset(l); ok {
			x.kind, x.off = lineEnd, off
		} else if name, ok := sourceLabel(l); ok {
			x.kind, x.label = lineLabel, name
			headers++
		} else {
			if strings.TrimSpace(l) != "" {
				headers++
			}
			continue
		}
		dl = append(dl, x)
	}
	return dl, headers
}

// MaxSqueezed is what the "*" lines of one input may stand for in all
// with [Parse] and [ParseDump]: a dump of a few lines must not claim
// gigabytes (each "*" line of a few bytes may stand for any number of
// repeated lines). [ParseDumpMax] takes another bound.
const MaxSqueezed = 64 << 20

// squeeze is what the "*" lines of an input may still stand for.
type squeeze struct {
	left, max int64
}

// fillSqueezed repeats the bytes of the last line before a "*" up to the
// offset where the dump goes on, within what sq allows.
func fillSqueezed(cur, last []byte, from, to int64, no int, sq *squeeze) ([]byte, error) {
	if len(last) == 0 {
		return cur, &Error{Line: no, Col: 1, Msg: `"*" (squeezed lines) with no line before it to repeat`}
	}
	if to < from || (to-from)%int64(len(last)) != 0 {
		return cur, &Error{Line: no, Col: 1, Msg: fmt.Sprintf("offset 0x%x after \"*\" is not a whole number of %d-byte lines after 0x%x", to, len(last), from)}
	}
	if to-from > sq.left {
		return cur, &Error{Line: no, Col: 1, Msg: fmt.Sprintf("\"*\" stands for %d bytes, which with the input's other \"*\" lines is more than the %d this reader expands", to-from, sq.max)}
	}
	sq.left -= to - from
	for n := from; n < to; n += int64(len(last)) {
		cur = append(cur, last...)
	}
	return cur, nil
}

func parseDumpLines(lines []string, sq *squeeze) (*Dump, error) {
	dl, headers := classify(lines)
	d := &Dump{Format: FormatDump, Headers: headers}
	var cur, last []byte
	var base int64 // the offset of the packet's first byte (xxd -s starts above 0)
	curStart, star := false, false
	label := ""
	flush := func() {
		d.Packets = append(d.Packets, cur)
		d.Sources = append(d.Sources, label)
		cur, last, label = nil, nil, ""
	}
	width := 16
	for i, x := range dl {
		switch x.kind {
		case lineOther:
			continue
		case lineLabel:
			if curStart {
				flush()
				curStart = false
			}
			label = x.label
			continue
		case lineStar:
			if !curStart {
				return nil, &Error{Line: x.no, Col: 1, Msg: `"*" (squeezed lines) before the first line of the dump`}
			}
			star = true
			continue
		case lineEnd:
			if !curStart {
				continue
			}
			var err error
			if star {
				if cur, err = fillSqueezed(cur, last, base+int64(len(cur)), x.off, x.no, sq); err != nil {
					return nil, err
				}
				star = false
			}
			if x.off != base+int64(len(cur)) {
				return nil, &Error{Line: x.no, Col: 1, Msg: fmt.Sprintf("the dump ends at offset 0x%x, but %d bytes were read from 0x%x", x.off, len(cur), base)}
			}
			continue
		}
		if x.off == 0 && curStart && !star {
			flush()
			curStart = false
		}
		if !curStart {
			base = x.off
			curStart = true
		}
		if star {
			var err error
			if cur, err = fillSqueezed(cur, last, base+int64(len(cur)), x.off, x.no, sq); err != nil {
				return nil, err
			}
			star = false
		}
		if x.off != base+int64(len(cur)) {
			return nil, &Error{Line: x.no, Col: 1, Msg: fmt.Sprintf("offset 0x%x does not follow the %d bytes read from 0x%x", x.off, len(cur), base)}
		}
		if len(d.Packets) == 0 {
			d.Start = base
		}
		limit := width
		for j := i + 1; j < len(dl); j++ {
			if dl[j].kind == lineOther {
				continue
			}
			if (dl[j].kind == lineData || dl[j].kind == lineEnd) && dl[j].off > x.off {
				limit = int(min(dl[j].off-x.off, 1<<20))
				width = limit
			}
			break
		}
		n := len(cur)
		var err error
		cur, err = dumpData(cur, x, limit)
		if err != nil {
			return nil, err
		}
		last = cur[n:]
	}
	if star {
		return nil, &Error{Line: len(lines), Col: 1, Msg: `the dump ends with "*" and no offset saying how many bytes it stands for`}
	}
	if curStart {
		flush()
	}
	if len(d.Bytes()) == 0 {
		return nil, &Error{Line: 1, Col: 1, Msg: "no hex bytes in the dump"}
	}
	return d, nil
}

// dumpData appends the hex bytes of a dump line, at most limit of them,
// stopping at the ASCII column.
func dumpData(out []byte, x dumpLine, limit int) ([]byte, error) {
	t := x.text
	// hexdump -C: the ASCII column is between bars.
	if j := strings.IndexByte(t, '|'); j >= 0 && strings.HasSuffix(strings.TrimRight(t, " "), "|") {
		t = t[:j]
	}
	n := 0
	i := 0
	for i < len(t) && n < limit {
		start := i
		for i < len(t) && isHex(t[i]) {
			i++
		}
		if i == start {
			return out, &Error{Line: x.no, Col: x.col + i + 1, Msg: fmt.Sprintf("unexpected %s in the hex column", quoteChar(t, i))}
		}
		if i < len(t) && t[i] != ' ' && t[i] != '\t' {
			if n > 0 {
				break // an ASCII column glued on with one space
			}
			return out, &Error{Line: x.no, Col: x.col + i + 1, Msg: fmt.Sprintf("unexpected %s in the hex column", quoteChar(t, i))}
		}
		if (i-start)%2 != 0 {
			if n > 0 {
				break // the ASCII column, which happened to look like hex
			}
			return out, &Error{Line: x.no, Col: x.col + start + 1, Msg: fmt.Sprintf("odd number of hex digits in %s", excerpt(t[start:i]))}
		}
		if n+(i-start)/2 > limit {
			break
		}
		for j := start; j < i; j += 2 {
			out = append(out, hexVal(t[j])<<4|hexVal(t[j+1]))
		}
		n += (i - start) / 2
		gap := i
		for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
			i++
		}
		if i-gap >= 2 && !(n == 8 && i-gap == 2 && limit > 8 && i+2 < len(t) && isHex(t[i]) && isHex(t[i+1]) && t[i+2] == ' ') {
			break // the ASCII column
		}
	}
	return out, nil
}

// DecodeText returns raw as text when it reads as hex text: valid UTF-8
// with no control characters but whitespace, after a UTF-8 byte order
// mark or as UTF-16 with one (as Windows editors and PowerShell's ">"
// write). Characters beyond ASCII appear in dumps whose ASCII column shows
// the bytes above 0x7f as a code page's letters (a hex editor's copy
// saved as UTF-8), and in a program's print of bytes that starts with a
// quote (Go's %q writes "é" as it is). ok is false for anything else,
// which callers read as raw bytes: a Kafka frame starts with a size whose
// high byte is 0 below 16 MiB, and holds an API key or a correlation id
// whose high byte is 0 beside it, all control characters that text has
// not (and it never starts with a quote: that would be a size of over
// 570 MB).
func DecodeText(raw []byte) (string, bool) {
	raw, err := textenc.UTF8(raw)
	if err != nil {
		return "", false
	}
	for _, c := range raw {
		if (c < 0x20 || c == 0x7f) && c != '\n' && c != '\r' && c != '\t' {
			return "", false
		}
	}
	if !utf8.Valid(raw) {
		return "", false
	}
	return string(raw), true
}
