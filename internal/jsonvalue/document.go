package jsonvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrDuplicate is the cause of an [Error] for a key given twice in one
// JSON object (encoding/json would keep the last silently).
var ErrDuplicate = fmt.Errorf("%w: duplicate key", ErrSyntax)

// maxNesting bounds the nesting of objects and arrays, as encoding/json's
// decoder does.
const maxNesting = 10000

// parseDocument reads src[start:end], one JSON value, into the values
// encoding/json gives for an any (numbers as json.Number), in one pass
// that also refuses a key given twice in one object, naming its path from
// root (in the paths of [Error]) and its line and column in src. Its
// syntax errors are encoding/json's, at the same line and column.
func parseDocument(src []byte, start, end int, root string) (any, error) {
	data := src[start:end]
	p := docParser{data: data, src: src, base: int64(start), dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	doc, err := p.value(root)
	if err != nil {
		var je *Error
		if errors.As(err, &je) {
			return nil, err
		}
		return nil, p.syntaxAt()
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return nil, &Error{Err: fmt.Errorf("%w at %s: data after the JSON object", ErrSyntax, p.lineCol(p.dec.InputOffset()))}
	}
	return doc, nil
}

// syntaxAt is the error for data that is not one JSON value, as
// encoding/json's decoder places it (the token reader counts offsets
// otherwise); only a failed parse pays for this second read.
func (p *docParser) syntaxAt() error {
	var doc any
	err := json.NewDecoder(bytes.NewReader(p.data)).Decode(&doc)
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return syntaxError(p.src, p.base, err)
}

type docParser struct {
	data []byte // src[base:], up to the end of the JSON value
	src  []byte // the input, where lines and columns are counted
	base int64
	dec  *json.Decoder
	path []pathPart // where the walk is, formatted only for an error
}

// lineCol is "line L, column C" of offset off of data, counted in src.
func (p *docParser) lineCol(off int64) string { return lineCol(p.src, p.base+off) }

// pathPart is a key or, when key is "", an array index.
type pathPart struct {
	key   string
	index int
}

func (p *docParser) pathString(root string) string {
	b := []byte(root)
	for _, e := range p.path {
		if e.key != "" {
			b = append(append(b, '.'), e.key...)
		} else {
			b = strconv.AppendInt(append(b, '['), int64(e.index), 10)
			b = append(b, ']')
		}
	}
	return string(b)
}

func (p *docParser) value(root string) (any, error) {
	at := p.keyStart(p.dec.InputOffset())
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		if s, ok := tok.(string); ok {
			if err := p.checkText(s, at, root); err != nil {
				return nil, err
			}
		}
		return tok, nil // a string, json.Number, bool or nil
	}
	if len(p.path) >= maxNesting {
		return nil, &Error{Err: fmt.Errorf("%w at %s: nested more than %d deep", ErrSyntax, p.lineCol(p.dec.InputOffset()-1), maxNesting)}
	}
	if d == '[' {
		arr := []any{}
		for i := 0; p.dec.More(); i++ {
			p.path = append(p.path, pathPart{index: i})
			x, err := p.value(root)
			if err != nil {
				return nil, err
			}
			arr = append(arr, x)
			p.path = p.path[:len(p.path)-1]
		}
		return arr, p.closing()
	}
	obj := map[string]any{}
	for p.dec.More() {
		at := p.keyStart(p.dec.InputOffset())
		kt, err := p.dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := kt.(string)
		p.path = append(p.path, pathPart{key: k})
		if err := p.checkText(k, at, root); err != nil {
			return nil, err
		}
		if _, dup := obj[k]; dup {
			return nil, &Error{Path: p.pathString(root), Err: fmt.Errorf("%w %q at %s (each key may be given once)", ErrDuplicate, k, p.lineCol(at))}
		}
		x, err := p.value(root)
		if err != nil {
			return nil, err
		}
		obj[k] = x
		p.path = p.path[:len(p.path)-1]
	}
	return obj, p.closing()
}

// closing reads the delimiter that closes an object or array.
func (p *docParser) closing() error {
	_, err := p.dec.Token()
	return err
}

// keyStart returns the offset of the key or value that follows offset
// off (after the whitespace, and the comma or colon, before it).
func (p *docParser) keyStart(off int64) int64 {
	for off < int64(len(p.data)) {
		switch p.data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}

// checkText refuses string s, read from the JSON string at offset at, when
// encoding/json put U+FFFD in it for what was not text: a byte that is not
// UTF-8, or a \u escape of half a surrogate pair. Only a string holding
// U+FFFD is looked at again, in its JSON form.
func (p *docParser) checkText(s string, at int64, root string) error {
	if !strings.ContainsRune(s, utf8.RuneError) || at >= int64(len(p.data)) || p.data[at] != '"' {
		return nil
	}
	off, why := notText(p.data[at:])
	if off < 0 {
		return nil
	}
	return &Error{Path: p.pathString(root), Err: fmt.Errorf("%w at %s: %s (bytes that are not UTF-8 are written {\"hex\": ...})", ErrNotUTF8, p.lineCol(at+int64(off)), why)}
}

// notText scans the JSON string at the start of b (from its opening
// quote) and returns the offset of its first byte that is not UTF-8, or
// of its first \u escape of half a surrogate pair, and what it is; -1 when
// there is none.
func notText(b []byte) (int, string) {
	for i := 1; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			return -1, ""
		case c == '\\' && i+1 < len(b) && b[i+1] == 'u':
			r := hex4(b[i+2:])
			if !utf16.IsSurrogate(r) {
				i += 6
				continue
			}
			if r < 0xdc00 && i+11 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
				if lo := hex4(b[i+8:]); lo >= 0xdc00 && lo <= 0xdfff {
					i += 12
					continue
				}
			}
			return i, fmt.Sprintf("%s is half a surrogate pair", b[i:i+6])
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return i, fmt.Sprintf("byte 0x%02x", c)
			}
			i += n
		}
	}
	return -1, ""
}

// hex4 reads the 4 hex digits of a \u escape (-1 when they are not).
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	n, err := strconv.ParseUint(string(b[:4]), 16, 16)
	if err != nil {
		return -1
	}
	return rune(n)
}
