package hexin

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Byte strings as programs print them
//
// Besides hex, an input may be bytes as a program's debug output shows
// them, recognised by their shape only when the whole input (blank space
// aside) has it:
//
//   - quoted literals, one or more (on one or more lines): Python's repr
//     of bytes (b'\x00\x00\x00\x0cab'), Go's %q ("\x00\x00\x00\fab"),
//     Wireshark's "copy as escaped string" ("\x00\x00\x00\x0c"), C string
//     literals. Characters stand for their own bytes (UTF-8 as it is);
//     escapes are \xHH (two digits), octal \NNN (one to three digits),
//     \uXXXX and \UXXXXXXXX (as UTF-8), \a \b \f \n \r \t \v \\ \' \" \?.
//   - decimal lists in brackets: Java's Arrays.toString and Python's
//     list(b) ("[0, 0, 0, 12, 97]"), Go's %v ("[0 0 0 12 97]"); Java's
//     negative bytes (-128 to -1) are the bytes 128 to 255.
//
// Anything else in such an input is an [*Error] at its line and column.

// FormatLiteral and FormatDecimal are the shapes of byte strings as
// programs print them.
const (
	FormatLiteral Format = "literal" // quoted string literals with escapes
	FormatDecimal Format = "decimal" // a bracketed list of decimal bytes
)

// parseLiteral reads s, which starts with a quote (see quoted), as quoted
// literals.
func parseLiteral(s string) (*Dump, error) {
	p := pos{s: s, line: 1}
	var out []byte
	for {
		p.skipSpace()
		if p.i == len(s) {
			break
		}
		if s[p.i] == 'b' && p.i+1 < len(s) && (s[p.i+1] == '\'' || s[p.i+1] == '"') {
			p.next()
		}
		q := s[p.i]
		if q != '\'' && q != '"' {
			return nil, p.errorf("unexpected %s between quoted strings", quoteChar(s, p.i))
		}
		p.next()
		var err error
		if out, err = p.literal(out, q); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, &Error{Line: 1, Col: 1, Msg: "no bytes in the input (the quoted strings are empty)"}
	}
	return &Dump{Format: FormatLiteral, Packets: [][]byte{out}}, nil
}

// quoted reports whether s starts (after blank space) with a quote, b'
// or b" included.
func quoted(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	return strings.HasPrefix(t, `"`) || strings.HasPrefix(t, `'`) || strings.HasPrefix(t, `b'`) || strings.HasPrefix(t, `b"`)
}

// pos is a place in the input, for errors at a line and column.
type pos struct {
	s         string
	i         int
	line, col int // col: bytes since the line's start, 0-based
}

func (p *pos) next() {
	if p.s[p.i] == '\n' {
		p.line++
		p.col = -1
	}
	p.i++
	p.col++
}

func (p *pos) skipSpace() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.next()
	}
}

func (p *pos) errorf(format string, args ...any) error {
	return &Error{Line: p.line, Col: p.col + 1, Msg: fmt.Sprintf(format, args...)}
}

// literal appends the bytes of one quoted literal, after its opening quote
// q, up to and past its closing one.
func (p *pos) literal(out []byte, q byte) ([]byte, error) {
	for {
		if p.i == len(p.s) || p.s[p.i] == '\n' {
			return out, p.errorf("the string is not closed (no %c before the end of the line)", q)
		}
		c := p.s[p.i]
		switch {
		case c == q:
			p.next()
			return out, nil
		case c != '\\':
			out = append(out, c)
			p.next()
			continue
		}
		at := *p // the backslash, for errors
		p.next()
		if p.i == len(p.s) {
			return out, at.errorf("a backslash at the end of the input")
		}
		e := p.s[p.i]
		p.next()
		switch e {
		case 'x':
			v, n := digits(p.s[p.i:], 16, 2)
			if n != 2 {
				return out, at.errorf(`\x takes two hex digits`)
			}
			out = append(out, byte(v))
			p.advance(n)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, n := digits(p.s[p.i-1:], 8, 3)
			if v > 0xff {
				return out, at.errorf(`octal escape \%s is more than a byte`, p.s[p.i-1:p.i-1+n])
			}
			out = append(out, byte(v))
			p.advance(n - 1)
		case 'u', 'U':
			want := 4
			if e == 'U' {
				want = 8
			}
			v, n := digits(p.s[p.i:], 16, want)
			if n != want || !utf8.ValidRune(rune(v)) {
				return out, at.errorf(`\%c takes %d hex digits of a valid code point`, e, want)
			}
			out = utf8.AppendRune(out, rune(v))
			p.advance(n)
		default:
			b, ok := simpleEscapes[e]
			if !ok {
				if e > ' ' && e < 0x7f {
					return out, at.errorf(`unknown escape \%c`, e)
				}
				return out, at.errorf("a backslash before %q, which no escape starts with", rune(e))
			}
			out = append(out, b)
		}
	}
}

func (p *pos) advance(n int) {
	for range n {
		p.next()
	}
}

var simpleEscapes = map[byte]byte{
	'a': 7, 'b': 8, 'f': 12, 'n': 10, 'r': 13, 't': 9, 'v': 11,
	'\\': '\\', '\'': '\'', '"': '"', '?': '?',
}

// digits reads up to max digits of base from the start of s.
func digits(s string, base, max int) (v, n int) {
	for n < max && n < len(s) {
		d := -1
		switch c := s[n]; {
		case c >= '0' && c <= '7', base == 16 && (c == '8' || c == '9'):
			d = int(c - '0')
		case base == 16 && isHex(c):
			d = int(hexVal(c))
		}
		if d < 0 {
			break
		}
		v, n = v*base+d, n+1
	}
	return v, n
}

// parseDecimal reads s as a bracketed list of decimal bytes; ok is false
// when s does not start with '[' and then a digit, a minus sign, a space
// or ']', or when it holds a brace (Go's []byte{0x0, ...} is a C-like
// array of hex).
func parseDecimal(s string) (d *Dump, ok bool, err error) {
	t := strings.TrimLeft(s, " \t\r\n")
	if len(t) < 2 || t[0] != '[' || !(t[1] >= '0' && t[1] <= '9' || t[1] == '-' || t[1] == ']' || t[1] == ' ') || strings.Contains(t, "{") {
		return nil, false, nil
	}
	p := pos{s: s, line: 1}
	p.skipSpace()
	p.next() // '['
	var out []byte
	sep := true // a number may follow
	for {
		p.skipSpace()
		if p.i == len(s) {
			return nil, true, p.errorf("the list is not closed (no ']')")
		}
		switch c := s[p.i]; {
		case c == ']':
			p.next()
			if p.skipSpace(); p.i != len(s) {
				return nil, true, p.errorf("unexpected %s after the list", quoteChar(s, p.i))
			}
			if len(out) == 0 {
				return nil, true, &Error{Line: 1, Col: 1, Msg: "no bytes in the input (the list is empty)"}
			}
			return &Dump{Format: FormatDecimal, Packets: [][]byte{out}}, true, nil
		case c == ',':
			if sep {
				return nil, true, p.errorf("unexpected ','")
			}
			sep = true
			p.next()
		case c == '-' || c >= '0' && c <= '9':
			if !sep && s[p.i-1] != ' ' && s[p.i-1] != '\t' && s[p.i-1] != '\n' {
				return nil, true, p.errorf("unexpected %s", quoteChar(s, p.i))
			}
			at := p
			j := p.i
			if c == '-' {
				j++
			}
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			v, err := strconv.Atoi(s[p.i:j])
			if err != nil || v < -128 || v > 255 {
				return nil, true, at.errorf("%s is not a byte (-128 to 255)", excerpt(s[p.i:j]))
			}
			out = append(out, byte(v))
			p.advance(j - p.i)
			sep = false
			if p.i < len(s) && strings.IndexByte(" \t\r\n,]", s[p.i]) < 0 {
				return nil, true, p.errorf("unexpected %s after a number", quoteChar(s, p.i))
			}
		default:
			return nil, true, p.errorf("unexpected %s in a list of decimal bytes", quoteChar(s, p.i))
		}
	}
}

// quotedHex returns s, which starts with a quote (see quoted), with its
// quotes (and the b of b'...') blanked, every other byte where it is so
// that errors keep their columns; isHex reports whether that is hex in
// quotes rather than literals: no escape, and only hex digits and
// separators (a JSON string's value copied with its quotes). A literal
// always has an escape: a frame starts with its size, whose first byte,
// 0, every program prints as one.
func quotedHex(s string) (u string, isHex bool) {
	if strings.Contains(s, `\`) {
		return "", false
	}
	b := []byte(s)
	for i, c := range b {
		switch {
		case c == '"' || c == '\'':
			b[i] = ' '
		case c == 'b' && i+1 < len(b) && (b[i+1] == '"' || b[i+1] == '\'') && (i == 0 || strings.IndexByte(" \t\r\n", b[i-1]) >= 0):
			b[i] = ' '
		}
	}
	u = string(b)
	return u, onlyHex(u)
}

// onlyHex reports whether s holds at least one hex digit and nothing but
// hex digits and the separators of plain hex.
func onlyHex(s string) bool {
	seen := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isHex(c):
			seen = true
		case strings.IndexByte(" \t\r\n:,-", c) < 0:
			return false
		}
	}
	return seen
}
