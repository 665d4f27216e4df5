// Package textenc reads text files as editors and shells write them,
// Windows' included: UTF-8 after a byte order mark (Notepad, PowerShell's
// Out-File -Encoding utf8), or UTF-16 in either byte order after one
// (PowerShell 5's ">" and Out-File), and returns UTF-8.
package textenc

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// UTF8 returns b as UTF-8: without its UTF-8 byte order mark, transcoded
// when it starts with a UTF-16 one (FF FE little-endian, FE FF big-endian),
// or as it is otherwise (the same slice). UTF-16 of an odd length, or with
// a surrogate half not paired, is an error naming the byte offset: text is
// never changed silently (no U+FFFD stands in for what was there).
func UTF8(b []byte) ([]byte, error) {
	switch {
	case len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf:
		return b[3:], nil
	case len(b) >= 2 && (b[0] == 0xff && b[1] == 0xfe || b[0] == 0xfe && b[1] == 0xff):
		return fromUTF16(b[2:], b[0] == 0xff)
	}
	return b, nil
}

// fromUTF16 transcodes b (after the byte order mark, which is 2 bytes:
// offsets in errors count it) to UTF-8.
func fromUTF16(b []byte, le bool) ([]byte, error) {
	if len(b)%2 != 0 {
		return nil, fmt.Errorf("UTF-16 text (after a byte order mark) of an odd length: %d bytes", len(b)+2)
	}
	unit := func(i int) rune {
		if le {
			return rune(b[i]) | rune(b[i+1])<<8
		}
		return rune(b[i])<<8 | rune(b[i+1])
	}
	out := make([]byte, 0, len(b)/2)
	for i := 0; i < len(b); i += 2 {
		r := unit(i)
		if utf16.IsSurrogate(r) {
			if r >= 0xdc00 || i+2 >= len(b) {
				return nil, fmt.Errorf("UTF-16 text: a surrogate half not paired at byte %d", i+2)
			}
			r = utf16.DecodeRune(r, unit(i+2))
			if r == utf8.RuneError {
				return nil, fmt.Errorf("UTF-16 text: a surrogate half not paired at byte %d", i+2)
			}
			i += 2
		}
		out = utf8.AppendRune(out, r)
	}
	return out, nil
}
