// Package jsonvalue converts message bodies between [codec.Value] and JSON,
// the form `manifester decode --format json` prints and `manifester encode`
// reads.
//
// # Shape
//
// A body is a JSON object whose keys are the spec's field names, in the
// spec's order, holding only the fields that exist at the version (tagged
// fields included). Values:
//
//   - bool: true/false; integers: JSON numbers (int64 too, written exactly;
//     on input an integral number in any form, 1e3 or 1000.0, is read
//     exactly, one with a fraction is refused);
//     float64: a number, or "NaN" (Java's, the bits Kafka writes),
//     "Infinity", "-Infinity", or {"hex": "..."} for a NaN of other bits;
//   - uuid: the usual 8-4-4-4-12 hex form; Kafka's 22-character URL-safe
//     base64 form is accepted on input;
//   - string: a JSON string; a string whose bytes are not valid UTF-8 is
//     written {"hex": "..."} so that it survives a round trip;
//   - bytes and records: lower-case hex strings (records are the raw record
//     batches, as the wire carries them). On input, a records field may
//     also be a batch object, or an array of them, from which uncompressed
//     RecordBatch v2 bytes are built (see reader.batch);
//   - arrays: JSON arrays; structs: objects; null where the version allows
//     it;
//   - tagged fields the spec does not know: "_unknown_tags":
//     [{"tag": N, "data": "hex"}] in the struct that carried them (no
//     spec field name starts with "_").
//
// On input, missing fields take their defaults; a key that names no field,
// a field that does not exist at the version, or a key given twice in one
// object, is an [*Error] naming the path.
package jsonvalue

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/hexout"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// UnknownTagsKey is the key holding a struct's unknown tagged fields.
const UnknownTagsKey = "_unknown_tags"

// Causes of [Error], for errors.Is.
var (
	ErrUnknownField = errors.New("unknown field")
	ErrNotInVersion = errors.New("field does not exist at this version")
	ErrType         = errors.New("wrong JSON type")
	ErrRange        = errors.New("out of range")
	ErrNull         = errors.New("null where this version does not allow null")
	ErrSyntax       = errors.New("JSON syntax error")
	ErrNotUTF8      = errors.New("text that is not UTF-8")
)

// Error names the JSON path (in the spec's field names, "Topics[0].Name")
// where a body could not be read or written.
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// maxDepth bounds struct nesting, for malformed specs.
const maxDepth = 64

// Marshal writes the body val of message m at version v as compact JSON.
func Marshal(m *schema.Message, v int16, val *codec.Value) ([]byte, error) {
	return AppendMarshal(nil, m, v, val)
}

// AppendMarshal appends [Marshal]'s JSON to dst (dst unchanged on error),
// for writers that put bodies straight into a larger buffer.
func AppendMarshal(dst []byte, m *schema.Message, v int16, val *codec.Value) ([]byte, error) {
	return AppendMarshalHex(dst, m, v, val, hexout.AppendEncode)
}

// AppendMarshalHex is [AppendMarshal] with the hex of bytes and records
// values appended by appendHex, which must append what
// [encoding/hex.AppendEncode] does: a writer that has the frame's hex
// already copies it from there.
func AppendMarshalHex(dst []byte, m *schema.Message, v int16, val *codec.Value, appendHex func(dst, b []byte) []byte) ([]byte, error) {
	if m.Body == nil {
		return dst, &Error{Path: m.Name, Err: fmt.Errorf("%s has no body", m.Name)}
	}
	w := &writer{b: dst, v: v, path: []pathSeg{{name: m.Name, index: -1}}, hex: appendHex}
	if err := w.structValue(m.Body, val, 0); err != nil {
		return dst, err
	}
	return w.b, nil
}

// writer appends JSON to b. path is the path of the value being written,
// kept as segments and made a string only for an error.
type writer struct {
	b    []byte
	v    int16
	path []pathSeg
	hex  func(dst, b []byte) []byte // appends the hex of bytes and records
}

// pathSeg is a field name (index < 0) or an array index.
type pathSeg struct {
	name  string
	index int
}

// pathString is the path as errors show it ("Msg.Topics[0].Name").
func (w *writer) pathString() string {
	var sb strings.Builder
	for i, p := range w.path {
		switch {
		case p.index >= 0:
			sb.WriteString("[" + strconv.Itoa(p.index) + "]")
		case i > 0:
			sb.WriteString("." + p.name)
		default:
			sb.WriteString(p.name)
		}
	}
	return sb.String()
}

func (w *writer) structValue(s *schema.Struct, val *codec.Value, depth int) error {
	if depth > maxDepth {
		return &Error{Path: w.pathString(), Err: errors.New("structs nested too deeply")}
	}
	if len(val.Kids()) != len(s.Fields) {
		return &Error{Path: w.pathString(), Err: fmt.Errorf("%w: struct %s has %d fields, value has %d", ErrType, s.Name, len(s.Fields), len(val.Kids()))}
	}
	w.b = append(w.b, '{')
	first := true
	for _, f := range s.Fields {
		if !f.Versions.Contains(w.v) {
			continue
		}
		if !first {
			w.b = append(w.b, ',')
		}
		first = false
		w.str(f.Name)
		w.b = append(w.b, ':')
		w.path = append(w.path, pathSeg{name: f.Name, index: -1})
		if err := w.value(f, f.Type, &val.Kids()[f.Index], depth); err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
	}
	if len(val.Unknown()) > 0 {
		if !first {
			w.b = append(w.b, ',')
		}
		w.str(UnknownTagsKey)
		w.b = append(w.b, ":["...)
		for i, t := range val.Unknown() {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = strconv.AppendUint(append(w.b, `{"tag":`...), uint64(t.Tag), 10)
			w.b = append(hex.AppendEncode(append(w.b, `,"data":"`...), t.Data), `"}`...)
		}
		w.b = append(w.b, ']')
	}
	w.b = append(w.b, '}')
	return nil
}

// javaNaN is the bits of Java's Double.NaN, the NaN Kafka writes: "NaN"
// reads as it. A NaN of other bits is written {"hex": "..."}, its 8 bytes
// as on the wire, so that it survives a round trip.
const javaNaN = 0x7ff8000000000000

// appendFloat appends the JSON of a float64: a number, "NaN" (Java's),
// "Infinity", "-Infinity", or {"hex": "..."} for another NaN.
func appendFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f) && math.Float64bits(f) == javaNaN:
		return append(dst, `"NaN"`...)
	case math.IsNaN(f):
		dst = hex.AppendEncode(append(dst, `{"hex":"`...), binary.BigEndian.AppendUint64(nil, math.Float64bits(f)))
		return append(dst, `"}`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// plainByte marks the bytes encoding/json writes in a string as they
// are: printable ASCII but for the quote, the backslash and <, > and &.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// str appends s as encoding/json writes it: plain ASCII as is, anything
// else through encoding/json (which escapes HTML characters too).
func (w *writer) str(s string) {
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			b, _ := json.Marshal(s) // strings always marshal
			w.b = append(w.b, b...)
			return
		}
	}
	w.b = append(append(append(w.b, '"'), s...), '"')
}

func (w *writer) value(f *schema.Field, t *schema.Type, val *codec.Value, depth int) error {
	switch t.Kind {
	case schema.KindBool:
		w.b = strconv.AppendBool(w.b, val.Int() != 0)
	case schema.KindInt8, schema.KindInt16, schema.KindUint16, schema.KindInt32, schema.KindUint32, schema.KindInt64:
		w.b = strconv.AppendInt(w.b, val.Int(), 10)
	case schema.KindFloat64:
		w.b = appendFloat(w.b, val.Float())
	case schema.KindUUID:
		if len(val.Bytes()) != 16 {
			return &Error{Path: w.pathString(), Err: fmt.Errorf("%w: uuid of %d bytes", ErrType, len(val.Bytes()))}
		}
		w.str(span.FormatUUID(val.Bytes()))
	case schema.KindString:
		switch {
		case val.IsNull():
			w.b = append(w.b, "null"...)
		case utf8.Valid(val.Bytes()):
			w.str(string(val.Bytes()))
		default:
			w.b = append(hex.AppendEncode(append(w.b, `{"hex":"`...), val.Bytes()), `"}`...)
		}
	case schema.KindBytes, schema.KindRecords:
		if val.IsNull() {
			w.b = append(w.b, "null"...)
		} else {
			w.b = append(w.hex(append(w.b, '"'), val.Bytes()), '"')
		}
	case schema.KindArray:
		if val.IsNull() {
			w.b = append(w.b, "null"...)
			return nil
		}
		w.b = append(w.b, '[')
		w.path = append(w.path, pathSeg{})
		for i := range val.Kids() {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.path[len(w.path)-1].index = i
			if err := w.value(f, t.Elem, &val.Kids()[i], depth); err != nil {
				return err
			}
		}
		w.path = w.path[:len(w.path)-1]
		w.b = append(w.b, ']')
	case schema.KindStruct:
		if val.IsNull() {
			w.b = append(w.b, "null"...)
			return nil
		}
		return w.structValue(t.Struct, val, depth+1)
	default:
		return &Error{Path: w.pathString(), Err: fmt.Errorf("%w: cannot write kind %s", ErrType, t.Kind)}
	}
	return nil
}

// Unmarshal reads the body of message m at version v from JSON. Missing
// fields take their defaults (fields absent at v too); the result can be
// encoded with [codec.Codec.EncodeBody].
func Unmarshal(m *schema.Message, v int16, data []byte) (codec.Value, error) {
	return UnmarshalAt(m, v, data, 0, len(data))
}

// UnmarshalAt is [Unmarshal] of the body input[start:end] (one of several
// JSON values in a file, or the body inside a decode report line): the
// lines and columns its errors give count in input.
//
// It reads the JSON in one pass, straight into the Value, with no tree
// of the document in between: beyond the Value, it holds the path, the
// keys of the objects open and the string or record being read.
func UnmarshalAt(m *schema.Message, v int16, input []byte, start, end int) (codec.Value, error) {
	return unmarshalAt(m, v, input, start, end, maxBuiltRecords)
}

// syntaxError is the error for err, encoding/json's reading the JSON at
// offset base of src.
func syntaxError(src []byte, base int64, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &Error{Err: fmt.Errorf("%w at %s: %v", ErrSyntax, lineCol(src, base+max(se.Offset-1, 0)), se)}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{Err: fmt.Errorf("%w: unexpected end of the JSON input", ErrSyntax)}
	}
	return &Error{Err: fmt.Errorf("%w: %v", ErrSyntax, err)}
}

// lineCol turns a byte offset into "line L, column C" (1-based).
func lineCol(data []byte, off int64) string {
	off = min(off, int64(len(data)))
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return fmt.Sprintf("line %d, column %d", line, col)
}

func suggest(k string, s *schema.Struct) string {
	for _, f := range s.Fields {
		if strings.EqualFold(f.Name, k) {
			return fmt.Sprintf(" (did you mean %q?)", f.Name)
		}
	}
	return ""
}

// sortTags sorts t by tag, keeping the order of equal tags (which the
// encoder refuses, naming the tag).
func sortTags(t []codec.RawTag) {
	slices.SortStableFunc(t, func(a, b codec.RawTag) int { return cmp.Compare(a.Tag, b.Tag) })
}

func intRange(k schema.Kind) (int64, int64) {
	switch k {
	case schema.KindInt8:
		return math.MinInt8, math.MaxInt8
	case schema.KindInt16:
		return math.MinInt16, math.MaxInt16
	case schema.KindUint16:
		return 0, math.MaxUint16
	case schema.KindInt32:
		return math.MinInt32, math.MaxInt32
	case schema.KindUint32:
		return 0, math.MaxUint32
	}
	return math.MinInt64, math.MaxInt64
}

// ParseUUID reads a uuid in the 8-4-4-4-12 hex form, as 32 hex digits, or
// in Kafka's 22-character URL-safe base64 form.
func ParseUUID(s string) ([]byte, error) {
	h := strings.ReplaceAll(s, "-", "")
	if len(h) == 32 {
		if b, err := hex.DecodeString(h); err == nil {
			return b, nil
		}
	}
	if len(s) == 22 {
		if b, err := base64.RawURLEncoding.DecodeString(s); err == nil && len(b) == 16 {
			return b, nil
		}
	}
	return nil, fmt.Errorf("%w: %q is not a uuid (want 8-4-4-4-12 hex or 22-character base64)", ErrType, s)
}

// parseInteger reads a JSON number that is an integer, in whatever form
// it is written: 1000, 1e3, 1000.0, 1.5e3 (JSON has one number type, and
// Python writes an integral float as 1000.0, JavaScript a large one with
// an exponent). The value is worked out in decimal digits, exactly: a
// number with a fraction (1.5, 1.0000000000000000001e3) is refused, not
// rounded, and so is one beyond int64, without expanding a huge exponent.
func parseInteger(s string) (int64, error) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	} else if !strings.ContainsAny(s, ".eE") {
		return 0, errors.New("beyond int64")
	}
	mant, exp := s, int64(0)
	if k := strings.IndexAny(s, "eE"); k >= 0 {
		mant = s[:k]
		// An exponent beyond int64 is clamped: with it, a mantissa
		// (shorter than the input) is 0, a fraction or too big, as
		// with the true exponent.
		e, err := strconv.ParseInt(s[k+1:], 10, 64)
		if err != nil {
			e = 1 << 40
			if s[k+1] == '-' {
				e = -e
			}
		}
		exp = max(min(e, 1<<40), -1<<40)
	}
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	if k := strings.IndexByte(mant, '.'); k >= 0 {
		exp -= int64(len(mant) - k - 1)
		mant = mant[:k] + mant[k+1:]
	}
	// Leading zeros say nothing; trailing ones move into the exponent.
	mant = strings.TrimLeft(mant, "0")
	for len(mant) > 0 && mant[len(mant)-1] == '0' {
		mant, exp = mant[:len(mant)-1], exp+1
	}
	switch {
	case mant == "":
		return 0, nil
	case exp < 0:
		return 0, errors.New("it has a fraction")
	case int64(len(mant))+exp > 19:
		return 0, errors.New("beyond int64")
	}
	digits := mant + strings.Repeat("0", int(exp))
	if neg {
		digits = "-" + digits
	}
	i, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, errors.New("beyond int64")
	}
	return i, nil
}

// article is "an" before a kind said with a vowel (int32) and "a" before
// the others (uint16 is said "you-int").
func article(kind string) string {
	if strings.HasPrefix(kind, "int") {
		return "an"
	}
	return "a"
}
