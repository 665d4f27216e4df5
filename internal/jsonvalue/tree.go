package jsonvalue

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/hexout"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// ErrTree is the cause of an [Error] from [AppendTree] when the tree does
// not hold the whole body: a field's row is missing (the decode stopped
// early), an array has fewer elements than its count, or a row carries
// the decode's error.
var ErrTree = errors.New("the tree does not hold the whole body")

// AppendTree appends the JSON of a message body read from the span tree
// the decoder built (with or without Values, codec.Options.NoValues):
// byte for byte what [AppendMarshalHex] writes from the body's Value.
// body is the body's row (the frame tree's [span.Tree.Body], or the root
// of [codec.Codec.DecodeBody]'s tree), m the message and v its version.
// hex, when not nil, is the hex of all of t.Bytes (2*len(t.Bytes) bytes):
// the hex of bytes and records values in t.Bytes is copied from it.
//
// Fields the decoder did not meet (tagged fields absent from the wire)
// take their defaults, as the decoder's Value does. A tree cut by a
// decode error gives an [*Error] wrapping [ErrTree] (dst unchanged).
func AppendTree(dst []byte, t *span.Tree, body span.ID, m *schema.Message, v int16, hex []byte) ([]byte, error) {
	if m.Body == nil {
		return dst, &Error{Path: m.Name, Err: fmt.Errorf("%s has no body", m.Name)}
	}
	if t == nil || body < 0 || int(body) >= t.Len() {
		return dst, &Error{Path: m.Name, Err: fmt.Errorf("%w: no body row", ErrTree)}
	}
	if len(hex) != 2*len(t.Bytes) {
		hex = nil
	}
	tw := treeWriterPool.Get().(*treeWriter)
	tw.writer = writer{b: dst, v: v, path: append(tw.path[:0], pathSeg{name: m.Name, index: -1}), hex: hexout.AppendEncode}
	tw.t, tw.hexOf, tw.flex = t, hex, m.Flexible.Contains(v)
	err := tw.structRow(m.Body, body, 0)
	b := tw.b
	tw.path = tw.writer.path
	tw.writer = writer{path: tw.path}
	tw.t, tw.hexOf = nil, nil
	treeWriterPool.Put(tw)
	if err != nil {
		return dst, err
	}
	return b, nil
}

// treeWriter writes a body from a tree. It reuses [writer]'s buffer,
// path and string escaping, so errors name the same paths.
type treeWriter struct {
	writer
	t     *span.Tree
	hexOf []byte // hex of t.Bytes, or nil
	flex  bool   // the message is flexible at the version
}

var treeWriterPool = sync.Pool{New: func() any { return new(treeWriter) }}

// treeErr is an ErrTree error at the current path.
func (w *treeWriter) treeErr(format string, args ...any) error {
	return &Error{Path: w.pathString(), Err: fmt.Errorf("%w: "+format, append([]any{ErrTree}, args...)...)}
}

// checkRow fails when the row carries the decode's error.
func (w *treeWriter) checkRow(id span.ID) error {
	if w.t.Err(id) != nil {
		return w.treeErr("the decode failed here: %v", w.t.Err(id))
	}
	return nil
}

// structRow writes struct s from row n, whose children are its wire
// fields' rows (in the spec's order, after a nullable struct's presence
// marker), then its tagged-field section.
func (w *treeWriter) structRow(s *schema.Struct, n span.ID, depth int) error {
	if depth > maxDepth {
		return &Error{Path: w.pathString(), Err: errors.New("structs nested too deeply")}
	}
	t := w.t
	row := t.N(n)
	if row.Aux != 0 {
		if err := w.checkRow(n); err != nil {
			return err
		}
	}
	keys := keysOf(t, n, s)
	section := span.None
	if l := row.Last; l != span.None && t.N(l).Cat == span.CatTagged && t.Desc(l).Field == nil {
		section = l
		if t.N(l).Aux != 0 {
			if err := w.checkRow(l); err != nil {
				return err
			}
		}
	}
	k := row.First // the next wire field's row
	w.b = append(w.b, '{')
	first := true
	for i, f := range s.Fields {
		if !f.Versions.Contains(w.v) {
			continue
		}
		if !first {
			w.b = append(w.b, ',')
		}
		first = false
		w.b = append(w.b, keys[i]...)
		w.path = append(w.path, pathSeg{name: f.Name, index: -1})
		r := span.None
		tagged := w.flex && f.Tagged.Contains(w.v)
		if tagged {
			r = w.taggedRow(section, f)
		} else {
			for k != span.None && k != section && t.Desc(k).Field == nil {
				k = t.N(k).Next // a presence marker
			}
			if k != span.None && k != section && t.Desc(k).Field == f {
				r, k = k, t.N(k).Next
			}
		}
		var err error
		switch {
		case r != span.None:
			err = w.row(f, f.Type, r, depth)
		case tagged:
			err = w.fieldDefault(f, depth)
		default:
			err = w.treeErr("no row for %s", f.Name)
		}
		if err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
	}
	if section != span.None && t.N(section).First != span.None {
		// Unknown tags, in wire order (which is tag order).
		open := false
		for e := t.N(section).First; e != span.None; e = t.N(e).Next {
			en := t.N(e)
			if en.First == span.None || t.Desc(e).Field != nil {
				continue // the count, or a known tag
			}
			num, data := en.First, en.Last
			if num == data {
				return w.treeErr("unknown tag without its data")
			}
			if !open {
				if !first {
					w.b = append(w.b, ',')
				}
				w.str(UnknownTagsKey)
				w.b = append(w.b, ":["...)
				open = true
			} else {
				w.b = append(w.b, ',')
			}
			w.b = strconv.AppendUint(append(w.b, `{"tag":`...), uint64(t.N(num).Int), 10)
			w.b = append(w.hexRow(append(w.b, `,"data":"`...), data), `"}`...)
		}
		if open {
			w.b = append(w.b, ']')
		}
	}
	w.b = append(w.b, '}')
	return nil
}

// taggedRow returns the row of tagged field f in the tagged-field
// section (None when f is not on the wire): the last child of f's entry
// (after its tag number and size).
func (w *treeWriter) taggedRow(section span.ID, f *schema.Field) span.ID {
	if section == span.None {
		return span.None
	}
	t := w.t
	for e := t.N(section).First; e != span.None; e = t.N(e).Next {
		en := t.N(e)
		if en.First == span.None || t.Desc(e).Field != f {
			continue
		}
		if en.Aux != 0 && t.Err(e) != nil {
			return e // checkRow reports it
		}
		if fr := en.Last; t.Desc(fr).Field == f && t.N(fr).Cat != span.CatTagged {
			return fr
		}
	}
	return span.None
}

// structKeys holds the JSON keys (`"Name":`) of each registered struct
// Desc's fields, by Field.Index.
var structKeys span.DescMemo[[]string]

// keysOf returns the JSON keys of s's fields, by Field.Index, for row n.
func keysOf(t *span.Tree, n span.ID, s *schema.Struct) []string {
	if d := t.Desc(n); d.Struct == s { // a row that is s's own
		if k := structKeys.Get(d, func(d *span.Desc) *[]string { k := fieldKeys(d.Struct); return &k }); k != nil {
			return *k
		}
	}
	return fieldKeys(s)
}

// fieldKeys makes the JSON keys of s's fields, by Field.Index.
func fieldKeys(s *schema.Struct) []string {
	out := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		out[i] = string(span.AppendJSONString(nil, []byte(f.Name))) + ":"
	}
	return out
}

// hexRow appends the hex of row id's value bytes.
func (w *treeWriter) hexRow(dst []byte, id span.ID) []byte {
	n := w.t.N(id)
	if w.hexOf != nil && n.VLen > 0 && (n.Aux == 0 || !w.t.Extra(id, false).HasValue) {
		if end := int(n.VOff) + int(n.VLen); end <= len(w.t.Bytes) {
			return append(dst, w.hexOf[2*int(n.VOff):2*end]...)
		}
	}
	return hexout.AppendEncode(dst, w.t.ValueBytes(id))
}

// row writes the value of type typ (field f's type, or its element type)
// from row id.
func (w *treeWriter) row(f *schema.Field, typ *schema.Type, id span.ID, depth int) error {
	t := w.t
	n := t.N(id)
	if n.Aux != 0 {
		if err := w.checkRow(id); err != nil {
			return err
		}
	}
	switch typ.Kind {
	case schema.KindBool:
		w.b = strconv.AppendBool(w.b, n.Int != 0)
	case schema.KindInt8, schema.KindInt16, schema.KindUint16, schema.KindInt32, schema.KindUint32, schema.KindInt64:
		w.b = strconv.AppendInt(w.b, n.Int, 10)
	case schema.KindFloat64:
		w.float(n.Float())
	case schema.KindUUID:
		b := t.ValueBytes(id)
		if len(b) != 16 {
			return &Error{Path: w.pathString(), Err: fmt.Errorf("%w: uuid of %d bytes", ErrType, len(b))}
		}
		w.str(span.FormatUUID(b))
	case schema.KindString:
		b := t.ValueBytes(id)
		switch {
		case n.Null:
			w.b = append(w.b, "null"...)
		case utf8.Valid(b):
			w.b = span.AppendJSONString(w.b, b)
		default:
			w.b = append(w.hexRow(append(w.b, `{"hex":"`...), id), `"}`...)
		}
	case schema.KindBytes, schema.KindRecords:
		if n.Null {
			w.b = append(w.b, "null"...)
		} else {
			w.b = append(w.hexRow(append(w.b, '"'), id), '"')
		}
	case schema.KindArray:
		if n.Null {
			w.b = append(w.b, "null"...)
			return nil
		}
		w.b = append(w.b, '[')
		w.path = append(w.path, pathSeg{})
		i := 0
		for k := n.First; k != span.None; k = t.N(k).Next {
			if t.N(k).Index < 0 {
				continue // the count
			}
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.path[len(w.path)-1].index = i
			if err := w.row(f, typ.Elem, k, depth); err != nil {
				return err
			}
			i++
		}
		w.path = w.path[:len(w.path)-1]
		if int64(i) != t.N(id).Int {
			return w.treeErr("%d of %d elements", i, t.N(id).Int)
		}
		w.b = append(w.b, ']')
	case schema.KindStruct:
		if n.Null {
			w.b = append(w.b, "null"...)
			return nil
		}
		return w.structRow(typ.Struct, id, depth+1)
	default:
		return &Error{Path: w.pathString(), Err: fmt.Errorf("%w: cannot write kind %s", ErrType, typ.Kind)}
	}
	return nil
}

// float appends a float64 as [writer.value] does.
func (w *treeWriter) float(f float64) { w.b = appendFloat(w.b, f) }

// defaultKey names the JSON of a field's default at a version and depth.
type defaultKey struct {
	f     *schema.Field
	v     int16
	depth int
}

// defaults caches the JSON of fields' defaults (defaultKey to []byte):
// a tagged field absent from the wire takes its default, which is the
// same every time.
var defaults sync.Map

// fieldDefault writes field f's default, as the decoder's Value holds it
// for a tagged field absent from the wire.
func (w *treeWriter) fieldDefault(f *schema.Field, depth int) error {
	k := defaultKey{f, w.v, depth}
	if js, ok := defaults.Load(k); ok {
		w.b = append(w.b, js.([]byte)...)
		return nil
	}
	def := codec.DefaultValue(f)
	start := len(w.b)
	if err := w.writer.value(f, f.Type, &def, depth); err != nil {
		w.b = w.b[:start]
		return err
	}
	defaults.Store(k, append([]byte(nil), w.b[start:]...))
	return nil
}
