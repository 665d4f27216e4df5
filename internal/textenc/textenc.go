// Package textenc reads text files as editors and shells write them,
// Windows' included: UTF-8 after a byte order mark (Notepad, PowerShell's
// Out-File -Encoding utf8), or UTF-16 in either byte order after one
// (PowerShell 5's ">" and Out-File), and returns UTF-8.
package textenc

import (
	"bufio"
	"fmt"
	"io"
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

// NewReader returns r's text as UTF-8 as it is read, as [UTF8] does for a
// whole text: without a UTF-8 byte order mark, transcoded after a UTF-16
// one, or r itself otherwise. It reads no more of r than a read asks for,
// so a stream (standard input) is transcoded as it comes. Its errors are
// UTF8's, with the same byte offsets.
func NewReader(r *bufio.Reader) io.Reader {
	b, _ := r.Peek(3)
	switch {
	case len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf:
		r.Discard(3)
	case len(b) >= 2 && (b[0] == 0xff && b[1] == 0xfe || b[0] == 0xfe && b[1] == 0xff):
		r.Discard(2)
		return &utf16Reader{r: r, le: b[0] == 0xff, off: 2}
	}
	return r
}

// NewBufReader is [NewReader] for a caller that reads lines: r itself
// when it holds no UTF-16, else a bufio.Reader of size bytes over the
// transcoding.
func NewBufReader(r *bufio.Reader, size int) *bufio.Reader {
	if in := NewReader(r); in != io.Reader(r) {
		return bufio.NewReaderSize(in, size)
	}
	return r
}

// utf16Reader transcodes UTF-16 read from r to UTF-8.
type utf16Reader struct {
	r   *bufio.Reader
	le  bool
	off int64  // bytes read from r, the byte order mark included
	out []byte // UTF-8 not returned yet
	err error  // returned once out is empty
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	for len(u.out) == 0 && u.err == nil {
		u.fill()
	}
	if len(u.out) > 0 {
		n := copy(p, u.out)
		u.out = u.out[n:]
		return n, nil
	}
	return 0, u.err
}

// fill transcodes what r holds (at least one character, waiting for it).
func (u *utf16Reader) fill() {
	u.out = u.out[:0]
	for len(u.out) < 4096 {
		r, err := u.unit()
		if err != nil {
			u.err = err
			return
		}
		if utf16.IsSurrogate(r) {
			at := u.off - 2
			r2, err := u.unit()
			if r >= 0xdc00 || err == io.EOF {
				u.err = fmt.Errorf("UTF-16 text: a surrogate half not paired at byte %d", at)
				return
			}
			if err != nil {
				u.err = err
				return
			}
			if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
				u.err = fmt.Errorf("UTF-16 text: a surrogate half not paired at byte %d", at)
				return
			}
		}
		u.out = utf8.AppendRune(u.out, r)
		if u.r.Buffered() < 2 {
			return // what is here, before waiting for more
		}
	}
}

// unit reads one UTF-16 code unit.
func (u *utf16Reader) unit() (rune, error) {
	var b [2]byte
	n, err := io.ReadFull(u.r, b[:])
	u.off += int64(n)
	switch {
	case err == io.ErrUnexpectedEOF:
		return 0, fmt.Errorf("UTF-16 text (after a byte order mark) of an odd length: %d bytes", u.off)
	case err != nil:
		return 0, err
	case u.le:
		return rune(b[0]) | rune(b[1])<<8, nil
	}
	return rune(b[0])<<8 | rune(b[1]), nil
}
