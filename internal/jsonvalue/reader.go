package jsonvalue

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
)

// reader reads a body from the tokens of its scanner, with the schema in
// hand. Each method reads one whole value, whatever it finds in it: an
// error about the values (a wrong type, a key that names no field) is
// returned and the rest of the value is only checked (skipped), so that
// a syntax error after it still comes first, as does, in an object, the
// error of the first key in key order (the order errors were found in
// when the whole document was parsed first).
type reader struct {
	scanner
	v int16

	arena []byte // where short strings are copied to, a chunk at a time

	// Records built from batch objects: room is what they may still
	// take, of limit.
	room, limit int64
	measure     bool // records only counts the bytes it would build, in size
	size        int
	lenBuf      []byte // a record's length
	hdr         []byte // a batch's header
	rec         []byte // the record being built
	hdrs        []byte // its headers
	blobs       [4][]byte
}

// maxBuiltRecords bounds the bytes of records built from batch objects in
// one body: no frame holds more (its size is an int32).
const maxBuiltRecords = math.MaxInt32

func unmarshalAt(m *schema.Message, v int16, input []byte, start, end int, limit int64) (codec.Value, error) {
	if m.Body == nil {
		return codec.Value{}, &Error{Path: m.Name, Err: fmt.Errorf("%s has no body", m.Name)}
	}
	r := &reader{scanner: *newScanner(input, start, end, m.Name), v: v, room: limit, limit: limit}
	val, err := r.structValue(m.Body, 0)
	r.trailing()
	if r.fail != nil {
		return codec.Value{}, r.fail
	}
	if err != nil {
		return codec.Value{}, err
	}
	return val, nil
}

// wrongType is the error for the value at pos, not of the type wanted,
// which it skips.
func (r *reader) wrongType(want string) error {
	err := r.typeErr(r.pathString(), want, r.peek())
	r.skip()
	return err
}

// typeErr is the error at path for a value starting with c, not of the
// type wanted.
func (r *reader) typeErr(path, want string, c byte) error {
	return &Error{Path: path, Err: fmt.Errorf("%w: want %s, got %s", ErrType, want, jsonTypeOf(c))}
}

// own copies b out of the input or a scratch buffer: short ones into the
// arena, a chunk of which holds many.
func (r *reader) own(b []byte) []byte {
	const chunk, short = 16 << 10, 256
	if len(b) > short {
		return append(make([]byte, 0, len(b)), b...)
	}
	if len(b) == 0 {
		return []byte{}
	}
	if cap(r.arena)-len(r.arena) < len(b) {
		r.arena = make([]byte, 0, chunk)
	}
	n := len(r.arena)
	r.arena = append(r.arena, b...)
	return r.arena[n:len(r.arena):len(r.arena)]
}

// fieldNamed is the field of s named k, nil when none is.
func (r *reader) fieldNamed(s *schema.Struct, k keyRef) *schema.Field {
	name := r.keyBytes(k)
	for _, f := range s.Fields {
		if f.Name == string(name) {
			return f
		}
	}
	return nil
}

// errUnknownKey stands for the error of a key that names no field until
// the struct is read: an object of many such keys words one.
var errUnknownKey = errors.New("unknown key")

func (r *reader) structValue(s *schema.Struct, depth int) (codec.Value, error) {
	if depth > maxDepth {
		err := r.errorAt(errors.New("structs nested too deeply"))
		r.skip()
		return codec.Value{}, err
	}
	if r.peek() != '{' {
		return codec.Value{}, r.wrongType("an object")
	}
	out := codec.DefaultStruct(s, 0)
	kids := out.Kids()
	var tags []codec.RawTag
	var seen uint64 // the fields given, by index, for the first 64
	var firstErr error
	var errKey keyRef
	ks := keySet{start: len(r.keys)}
	if !r.open() {
		return codec.Value{}, nil
	}
	for i := 0; ; i++ {
		k, ok := r.nextKey(i, &ks)
		if !ok {
			break
		}
		isTags := r.keyIs(k, UnknownTagsKey)
		var f *schema.Field
		if !isTags {
			f = r.fieldNamed(s, k)
		}
		if f != nil && f.Index < 64 {
			if seen&(1<<f.Index) != 0 {
				r.duplicate(k)
				break
			}
			seen |= 1 << f.Index
		} else if r.addKey(&ks, k) {
			r.duplicate(k)
			break
		}
		if !r.colon() {
			break
		}
		if firstErr != nil && !r.keyLess(k, errKey) {
			r.skip()
			continue
		}
		var err error
		switch {
		case isTags:
			tags, err = r.unknownTags()
		case f == nil:
			err = errUnknownKey // worded at the end, when it is the one
			r.skip()
		case !f.Versions.Contains(r.v):
			err = r.errorAt(fmt.Errorf("%w: %s exists in versions %s, not in %d", ErrNotInVersion, f.Name, f.Versions, r.v))
			r.skip()
		default:
			kids[f.Index], err = r.value(f, f.Type, depth)
		}
		if err != nil {
			firstErr, errKey = err, k
		}
	}
	if firstErr == errUnknownKey && r.fail == nil {
		name := string(r.keyText(errKey))
		firstErr = &Error{Path: r.pathString() + "." + name, Err: fmt.Errorf("%w: %s has no field %q%s", ErrUnknownField, s.Name, name, suggest(name, s))}
	}
	if r.fail != nil || firstErr != nil {
		return codec.Value{}, firstErr
	}
	out.SetUnknown(tags)
	return out, nil
}

// unknownTags reads the "_unknown_tags" of a struct.
func (r *reader) unknownTags() ([]codec.RawTag, error) {
	if r.peek() != '[' {
		return nil, r.wrongType("an array of {\"tag\", \"data\"} objects")
	}
	var out []codec.RawTag
	if n := r.countElements(); n > 0 {
		out = make([]codec.RawTag, 0, n)
	}
	var err error
	if !r.open() {
		return nil, nil
	}
	for i := 0; r.nextElem(i); i++ {
		if err != nil {
			r.skip()
			continue
		}
		var t codec.RawTag
		if t, err = r.unknownTag(); err == nil {
			out = append(out, t)
		}
	}
	if r.fail != nil || err != nil {
		return nil, err
	}
	sortTags(out)
	return out, nil
}

// unknownTag reads one {"tag": N, "data": "hex"}; of its errors, a key
// it does not have comes first, then the tag's, then the data's.
func (r *reader) unknownTag() (codec.RawTag, error) {
	if r.peek() != '{' {
		return codec.RawTag{}, r.wrongType("an object")
	}
	var tag []byte
	var data []byte
	var dataErr error
	tagType, dataType := byte('n'), byte('n') // missing: null
	var badKey keyRef
	bad := false
	ks := keySet{start: len(r.keys)}
	if !r.open() {
		return codec.RawTag{}, nil
	}
	for i := 0; ; i++ {
		k, ok := r.key(i, &ks)
		if !ok {
			break
		}
		switch c := r.peek(); {
		case r.keyIs(k, "tag"):
			tagType = c
			if c == '-' || '0' <= c && c <= '9' {
				tag = r.number()
			} else {
				r.skip()
			}
		case r.keyIs(k, "data"):
			dataType = c
			if c != '"' {
				r.skip()
			} else if r.text() {
				data, dataErr = hexDecode(r.str)
			}
		default:
			if !bad || r.keyLess(k, badKey) {
				badKey, bad = k, true
			}
			r.skip()
		}
	}
	if r.fail != nil {
		return codec.RawTag{}, nil
	}
	p := r.pathString()
	switch {
	case bad:
		return codec.RawTag{}, &Error{Path: p + "." + string(r.keyText(badKey)), Err: fmt.Errorf("%w: an unknown tag has only \"tag\" and \"data\"", ErrUnknownField)}
	case tag == nil:
		return codec.RawTag{}, r.typeErr(p+".tag", "a number", tagType)
	}
	n, err := parseIntegerBytes(tag)
	if err != nil {
		return codec.RawTag{}, &Error{Path: p + ".tag", Err: fmt.Errorf("%w: %s is not a tag (%v)", ErrRange, tag, err)}
	}
	if n < 0 || n > math.MaxInt32 {
		return codec.RawTag{}, &Error{Path: p + ".tag", Err: fmt.Errorf("%w: %d is not a tag (0..%d)", ErrRange, n, math.MaxInt32)}
	}
	switch {
	case dataType != '"':
		return codec.RawTag{}, r.typeErr(p+".data", "a hex string", dataType)
	case dataErr != nil:
		return codec.RawTag{}, &Error{Path: p + ".data", Err: fmt.Errorf("%w: %v", ErrType, dataErr)}
	}
	return codec.RawTag{Tag: uint32(n), Data: data}, nil
}

// hexDecode decodes hex digits into new bytes (empty, not nil, for none).
func hexDecode(h []byte) ([]byte, error) {
	b := make([]byte, len(h)/2)
	n, err := hex.Decode(b, h)
	return b[:n], err
}

// null is the value of null for a value of type t in field f.
func (r *reader) null(f *schema.Field, t *schema.Type) (codec.Value, error) {
	switch t.Kind {
	case schema.KindString, schema.KindBytes, schema.KindRecords, schema.KindArray, schema.KindStruct:
		// Array elements are never null; the field's own nullability
		// applies to the field value only.
		if t != f.Type {
			return codec.Value{}, r.errorAt(fmt.Errorf("%w: an array element is never null", ErrNull))
		}
		if f.Nullable.Contains(r.v) {
			return codec.NullValue(), nil
		}
		return codec.Value{}, r.errorAt(fmt.Errorf("%w (nullable versions: %s)", ErrNull, f.Nullable))
	}
	return codec.Value{}, r.errorAt(fmt.Errorf("%w: %s cannot be null", ErrNull, t.Kind))
}

// value reads the value at pos, of type t in field f.
func (r *reader) value(f *schema.Field, t *schema.Type, depth int) (codec.Value, error) {
	c := r.peek()
	if c == 'n' {
		if !r.literal("null") {
			return codec.Value{}, nil
		}
		return r.null(f, t)
	}
	switch t.Kind {
	case schema.KindBool:
		switch c {
		case 't':
			r.literal("true")
			return codec.IntValue(1), nil
		case 'f':
			r.literal("false")
			return codec.Value{}, nil
		}
		return codec.Value{}, r.wrongType("true or false")
	case schema.KindInt8, schema.KindInt16, schema.KindUint16, schema.KindInt32, schema.KindUint32, schema.KindInt64:
		i, err := r.integer(t.Kind)
		return codec.IntValue(i), err
	case schema.KindFloat64:
		return r.float()
	case schema.KindUUID:
		if c != '"' {
			return codec.Value{}, r.wrongType("a uuid string")
		}
		if !r.text() {
			return codec.Value{}, nil
		}
		b, err := ParseUUID(string(r.str))
		if err != nil {
			return codec.Value{}, r.errorAt(err)
		}
		return codec.BytesValue(b), nil
	case schema.KindString:
		return r.string()
	case schema.KindBytes, schema.KindRecords:
		if t.Kind == schema.KindRecords && (c == '{' || c == '[') {
			return r.records(c)
		}
		if c != '"' {
			return codec.Value{}, r.wrongType("a hex string")
		}
		if !r.text() {
			return codec.Value{}, nil
		}
		b, err := hexDecode(r.str)
		if err != nil {
			return codec.Value{}, r.errorAt(fmt.Errorf("%w: not hex: %v", ErrType, err))
		}
		return codec.BytesValue(b), nil
	case schema.KindArray:
		return r.array(f, t, depth)
	case schema.KindStruct:
		return r.structValue(t.Struct, depth+1)
	}
	err := r.errorAt(fmt.Errorf("%w: cannot read kind %s", ErrType, t.Kind))
	r.skip()
	return codec.Value{}, err
}

// integer reads an integer of kind k, in any form (1e3, 1000.0).
func (r *reader) integer(k schema.Kind) (int64, error) {
	if c := r.peek(); c != '-' && (c < '0' || c > '9') {
		return 0, r.wrongType("an integer")
	}
	n := r.number()
	if r.fail != nil {
		return 0, nil
	}
	i, err := parseIntegerBytes(n)
	if err != nil {
		return 0, r.errorAt(fmt.Errorf("%w: %s is not %s %s (%v)", ErrRange, n, article(k.String()), k, err))
	}
	if lo, hi := intRange(k); i < lo || i > hi {
		return 0, r.errorAt(fmt.Errorf("%w: %d is not %s %s (%d..%d)", ErrRange, i, article(k.String()), k, lo, hi))
	}
	return i, nil
}

// parseIntegerBytes is parseInteger, without a copy for the digits of an
// int64 written plainly.
func parseIntegerBytes(n []byte) (int64, error) {
	digits := n
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return parseInteger(string(n))
	}
	var i int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return parseInteger(string(n))
		}
		i = i*10 + int64(c-'0')
	}
	if len(digits) < len(n) {
		i = -i
	}
	return i, nil
}

const floatForms = "a number, \"NaN\", \"Infinity\", \"-Infinity\" or {\"hex\": ...}"

// float reads a float64: a number, "NaN", "Infinity", "-Infinity" or
// {"hex": "..."}.
func (r *reader) float() (codec.Value, error) {
	switch c := r.peek(); {
	case c == '-' || '0' <= c && c <= '9':
		n := r.number()
		if r.fail != nil {
			return codec.Value{}, nil
		}
		fl, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return codec.Value{}, r.errorAt(fmt.Errorf("%w: %s is not a float64", ErrRange, n))
		}
		return codec.FloatValue(fl), nil
	case c == '{':
		h, ok := r.hexObject()
		if r.fail != nil {
			return codec.Value{}, nil
		}
		if !ok {
			return codec.Value{}, r.typeErr(r.pathString(), floatForms, c)
		}
		b, err := hexDecode(h)
		if err != nil || len(b) != 8 {
			return codec.Value{}, &Error{Path: r.pathString() + ".hex", Err: fmt.Errorf("%w: want the 16 hex digits of a float64's 8 bytes", ErrType)}
		}
		return codec.FloatValue(math.Float64frombits(binary.BigEndian.Uint64(b))), nil
	case c == '"':
		if !r.text() {
			return codec.Value{}, nil
		}
		switch string(r.str) {
		case "NaN":
			return codec.FloatValue(math.Float64frombits(javaNaN)), nil
		case "Infinity":
			return codec.FloatValue(math.Inf(1)), nil
		case "-Infinity":
			return codec.FloatValue(math.Inf(-1)), nil
		}
		return codec.Value{}, r.typeErr(r.pathString(), floatForms, c)
	}
	return codec.Value{}, r.wrongType(floatForms)
}

// string reads a string, or {"hex": "..."} for bytes that are not UTF-8.
func (r *reader) string() (codec.Value, error) {
	const want = "a string (or {\"hex\": ...} for bytes that are not UTF-8)"
	switch c := r.peek(); c {
	case '"':
		if !r.text() {
			return codec.Value{}, nil
		}
		if len(r.str) > math.MaxInt16 {
			return codec.Value{}, r.errorAt(fmt.Errorf("%w: string of %d bytes (max %d)", ErrRange, len(r.str), math.MaxInt16))
		}
		return codec.BytesValue(r.own(r.str)), nil
	case '{':
		h, ok := r.hexObject()
		if r.fail != nil {
			return codec.Value{}, nil
		}
		if !ok {
			return codec.Value{}, r.typeErr(r.pathString(), want, c)
		}
		b, err := hexDecode(h)
		if err != nil {
			return codec.Value{}, &Error{Path: r.pathString() + ".hex", Err: fmt.Errorf("%w: %v", ErrType, err)}
		}
		return codec.BytesValue(b), nil
	}
	return codec.Value{}, r.wrongType(want)
}

// hexObject reads the object at pos, returning the text of its "hex" key
// when that is its only key and a string (the text stays good until the
// next string is read).
func (r *reader) hexObject() ([]byte, bool) {
	var h []byte
	isText, n := false, 0
	ks := keySet{start: len(r.keys)}
	if !r.open() {
		return nil, false
	}
	for i := 0; ; i++ {
		k, ok := r.key(i, &ks)
		if !ok {
			break
		}
		n++
		if r.keyIs(k, "hex") && r.peek() == '"' {
			if r.text() {
				h, isText = r.str, true
			}
		} else {
			r.skip()
		}
	}
	return h, isText && n == 1
}

// array reads an array of t.Elem, into kids counted before.
func (r *reader) array(f *schema.Field, t *schema.Type, depth int) (codec.Value, error) {
	if r.peek() != '[' {
		return codec.Value{}, r.wrongType("an array")
	}
	kids := make([]codec.Value, 0, r.countElements())
	var err error
	if !r.open() {
		return codec.Value{}, nil
	}
	for i := 0; r.nextElem(i); i++ {
		if err != nil {
			r.skip()
			continue
		}
		var val codec.Value
		val, err = r.value(f, t.Elem, depth)
		kids = append(kids, val)
	}
	if r.fail != nil || err != nil {
		return codec.Value{}, err
	}
	return codec.KidsValue(kids), nil
}
