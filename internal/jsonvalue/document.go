package jsonvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// ErrDuplicate is the cause of an [Error] for a key given twice in one
// JSON object (encoding/json would keep the last silently).
var ErrDuplicate = fmt.Errorf("%w: duplicate key", ErrSyntax)

// maxNesting bounds the nesting of objects and arrays, as encoding/json's
// decoder does.
const maxNesting = 10000

// parseDocument reads data, one JSON value, into the values encoding/json
// gives for an any (numbers as json.Number), in one pass that also refuses
// a key given twice in one object, naming its path from root (in the
// paths of [Error]) and its line and column. Its syntax errors are
// encoding/json's, at the same line and column.
func parseDocument(data []byte, root string) (any, error) {
	p := docParser{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	p.dec.UseNumber()
	doc, err := p.value(root)
	if err != nil {
		var je *Error
		if errors.As(err, &je) {
			return nil, err
		}
		return nil, syntaxAt(data)
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return nil, &Error{Err: fmt.Errorf("%w at %s: data after the JSON object", ErrSyntax, lineCol(data, p.dec.InputOffset()))}
	}
	return doc, nil
}

// syntaxAt is the error for data that is not one JSON value, as
// encoding/json's decoder places it (the token reader counts offsets
// otherwise); only a failed parse pays for this second read.
func syntaxAt(data []byte) error {
	var doc any
	err := json.NewDecoder(bytes.NewReader(data)).Decode(&doc)
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return syntaxError(data, err)
}

type docParser struct {
	data []byte
	dec  *json.Decoder
	path []pathPart // where the walk is, formatted only for an error
}

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
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // a string, json.Number, bool or nil
	}
	if len(p.path) >= maxNesting {
		return nil, &Error{Err: fmt.Errorf("%w at %s: nested more than %d deep", ErrSyntax, lineCol(p.data, p.dec.InputOffset()-1), maxNesting)}
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
		if _, dup := obj[k]; dup {
			return nil, &Error{Path: p.pathString(root), Err: fmt.Errorf("%w %q at %s (each key may be given once)", ErrDuplicate, k, lineCol(p.data, at))}
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

// keyStart returns the offset of the key that follows offset off (after
// the whitespace and the comma before it).
func (p *docParser) keyStart(off int64) int64 {
	for off < int64(len(p.data)) {
		switch p.data[off] {
		case ' ', '\t', '\r', '\n', ',':
			off++
			continue
		}
		break
	}
	return off
}
