package text

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escape returns s fit for a terminal: every character strconv.Quote would
// escape — control characters (ESC, CR, backspace, tab), bidirectional and
// other format characters, invalid UTF-8 — is written as its Go escape
// (\x1b, \r, \u202e, \xff), the way decoded strings are shown; printable
// text, including non-ASCII letters, is kept. Spec text (names, abouts,
// comments) reaches the terminal only through Escape or [EscapeBlock].
func Escape(s string) string { return escape(s, false) }

// EscapeBlock is [Escape] for multi-line text such as a spec file's
// source: newlines and tabs stay as they are (they only move the cursor
// forward); everything else is escaped as by Escape.
func EscapeBlock(s string) string { return escape(s, true) }

func escape(s string, block bool) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f || block && (c == '\n' || c == '\t') {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || !strconv.IsPrint(r) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s // nothing to escape: no allocation
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte("0123456789abcdef"[s[i]>>4])
			b.WriteByte("0123456789abcdef"[s[i]&15])
		case block && (r == '\n' || r == '\t'), strconv.IsPrint(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r) // '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}
