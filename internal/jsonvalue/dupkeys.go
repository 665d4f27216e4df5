package jsonvalue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// ErrDuplicate is the cause of an [Error] for a key given twice in one
// JSON object (encoding/json would keep the last silently).
var ErrDuplicate = fmt.Errorf("%w: duplicate key", ErrSyntax)

// checkDuplicates reports the first key that appears twice in one object
// of data, a JSON value that has already parsed, with its path from root
// (in the paths of [Error]) and its line and column.
func checkDuplicates(data []byte, root string) error {
	c := dupChecker{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	c.dec.UseNumber()
	return c.value(root)
}

type dupChecker struct {
	data []byte
	dec  *json.Decoder
	path []pathPart // where the walk is, formatted only for an error
}

// pathPart is a key or, when key is "", an array index.
type pathPart struct {
	key   string
	index int
}

func (c *dupChecker) pathString(root string) string {
	b := []byte(root)
	for _, p := range c.path {
		if p.key != "" {
			b = append(append(b, '.'), p.key...)
		} else {
			b = strconv.AppendInt(append(b, '['), int64(p.index), 10)
			b = append(b, ']')
		}
	}
	return string(b)
}

func (c *dupChecker) value(root string) error {
	tok, err := c.dec.Token()
	if err != nil {
		return syntaxError(c.data, err)
	}
	switch tok {
	case json.Delim('{'):
		var seen map[string]struct{}
		for c.dec.More() {
			at := c.keyStart(c.dec.InputOffset())
			kt, err := c.dec.Token()
			if err != nil {
				return syntaxError(c.data, err)
			}
			k, _ := kt.(string)
			if seen == nil {
				seen = make(map[string]struct{})
			}
			c.path = append(c.path, pathPart{key: k})
			if _, dup := seen[k]; dup {
				return &Error{Path: c.pathString(root), Err: fmt.Errorf("%w %q at %s (each key may be given once)", ErrDuplicate, k, lineCol(c.data, at))}
			}
			seen[k] = struct{}{}
			if err := c.value(root); err != nil {
				return err
			}
			c.path = c.path[:len(c.path)-1]
		}
	case json.Delim('['):
		for i := 0; c.dec.More(); i++ {
			c.path = append(c.path, pathPart{index: i})
			if err := c.value(root); err != nil {
				return err
			}
			c.path = c.path[:len(c.path)-1]
		}
	default:
		return nil
	}
	if _, err := c.dec.Token(); err != nil { // the closing delimiter
		return syntaxError(c.data, err)
	}
	return nil
}

// keyStart returns the offset of the key that follows offset off (after
// the whitespace and the comma before it).
func (c *dupChecker) keyStart(off int64) int64 {
	for off < int64(len(c.data)) {
		switch c.data[off] {
		case ' ', '\t', '\r', '\n', ',':
			off++
			continue
		}
		break
	}
	return off
}
