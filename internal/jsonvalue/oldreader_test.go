package jsonvalue

import (
	"bytes"
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
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/wire"
)

// oldUnmarshalAt is the oldReader this package had before the streaming one:
// a generic tree first (oldParseDocument), then Values from it. It is
// kept here as the oracle the streaming oldReader is compared with, and as
// the "before" of the memory and speed measurements.
func oldUnmarshalAt(m *schema.Message, v int16, input []byte, start, end int) (codec.Value, error) {
	if m.Body == nil {
		return codec.Value{}, &Error{Path: m.Name, Err: fmt.Errorf("%s has no body", m.Name)}
	}
	doc, err := oldParseDocument(input, start, end, m.Name)
	if err != nil {
		return codec.Value{}, err
	}
	r := &oldReader{v: v, flex: m.Flexible}
	return r.structValue(m.Body, doc, m.Name, 0)
}

// oldParseDocument reads src[start:end], one JSON value, into the values
// encoding/json gives for an any (numbers as json.Number), in one pass
// that also refuses a key given twice in one object, naming its path from
// root (in the paths of [Error]) and its line and column in src. Its
// syntax errors are encoding/json's, at the same line and column.
func oldParseDocument(src []byte, start, end int, root string) (any, error) {
	data := src[start:end]
	p := oldDocParser{data: data, src: src, base: int64(start), dec: json.NewDecoder(bytes.NewReader(data))}
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
// encoding/json's decoder places it (the token oldReader counts offsets
// otherwise); only a failed parse pays for this second read.
func (p *oldDocParser) syntaxAt() error {
	var doc any
	err := json.NewDecoder(bytes.NewReader(p.data)).Decode(&doc)
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return syntaxError(p.src, p.base, err)
}

type oldDocParser struct {
	data []byte // src[base:], up to the end of the JSON value
	src  []byte // the input, where lines and columns are counted
	base int64
	dec  *json.Decoder
	path []oldPathPart // where the walk is, formatted only for an error
}

// lineCol is "line L, column C" of offset off of data, counted in src.
func (p *oldDocParser) lineCol(off int64) string { return lineCol(p.src, p.base+off) }

// oldPathPart is a key or, when not isKey, an array index. (The old
// reader took an empty key for an index, writing "[0]" in the path of
// a duplicate key or of text that is not UTF-8 under an empty key; the
// streaming reader writes the key, "." then nothing, as the errors about
// values always did. isKey makes the oracle do so too.)
type oldPathPart struct {
	key   string
	isKey bool
	index int
}

func (p *oldDocParser) pathString(root string) string {
	b := []byte(root)
	for _, e := range p.path {
		if e.isKey {
			b = append(append(b, '.'), e.key...)
		} else {
			b = strconv.AppendInt(append(b, '['), int64(e.index), 10)
			b = append(b, ']')
		}
	}
	return string(b)
}

func (p *oldDocParser) value(root string) (any, error) {
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
			p.path = append(p.path, oldPathPart{index: i})
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
		p.path = append(p.path, oldPathPart{key: k, isKey: true})
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
func (p *oldDocParser) closing() error {
	_, err := p.dec.Token()
	return err
}

// keyStart returns the offset of the key or value that follows offset
// off (after the whitespace, and the comma or colon, before it).
func (p *oldDocParser) keyStart(off int64) int64 {
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
func (p *oldDocParser) checkText(s string, at int64, root string) error {
	if !strings.ContainsRune(s, utf8.RuneError) || at >= int64(len(p.data)) || p.data[at] != '"' {
		return nil
	}
	off, why := notText(p.data[at:])
	if off < 0 {
		return nil
	}
	return &Error{Path: p.pathString(root), Err: fmt.Errorf("%w at %s: %s (bytes that are not UTF-8 are written {\"hex\": ...})", ErrNotUTF8, p.lineCol(at+int64(off)), why)}
}

type oldReader struct {
	v    int16
	flex schema.Versions
}

func oldJSONType(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case bool:
		return "a bool"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", x)
}

func oldTypeErr(path, want string, x any) error {
	return &Error{Path: path, Err: fmt.Errorf("%w: want %s, got %s", ErrType, want, oldJSONType(x))}
}

func (r *oldReader) structValue(s *schema.Struct, x any, path string, depth int) (codec.Value, error) {
	if depth > maxDepth {
		return codec.Value{}, &Error{Path: path, Err: errors.New("structs nested too deeply")}
	}
	obj, ok := x.(map[string]any)
	if !ok {
		return codec.Value{}, oldTypeErr(path, "an object", x)
	}
	out := codec.DefaultStruct(s, 0)
	byName := make(map[string]*schema.Field, len(s.Fields))
	for _, f := range s.Fields {
		byName[f.Name] = f
	}
	// Check keys in a stable order, so errors are reproducible.
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	oldSortStrings(keys)
	for _, k := range keys {
		if k == UnknownTagsKey {
			tags, err := r.unknownTags(obj[k], path+"."+k)
			if err != nil {
				return out, err
			}
			out.SetUnknown(tags)
			continue
		}
		f, ok := byName[k]
		if !ok {
			return out, &Error{Path: path + "." + k, Err: fmt.Errorf("%w: %s has no field %q%s", ErrUnknownField, s.Name, k, suggest(k, s))}
		}
		if !f.Versions.Contains(r.v) {
			return out, &Error{Path: path + "." + k, Err: fmt.Errorf("%w: %s exists in versions %s, not in %d", ErrNotInVersion, k, f.Versions, r.v)}
		}
		val, err := r.value(f, f.Type, obj[k], path+"."+k, depth)
		if err != nil {
			return out, err
		}
		out.Kids()[f.Index] = val
	}
	return out, nil
}

// oldSortStrings sorts s (an object's keys, as many as the input holds: in
// n log n steps, not an insertion sort's n²).
func oldSortStrings(s []string) { slices.Sort(s) }

func (r *oldReader) unknownTags(x any, path string) ([]codec.RawTag, error) {
	arr, ok := x.([]any)
	if !ok {
		return nil, oldTypeErr(path, "an array of {\"tag\", \"data\"} objects", x)
	}
	var out []codec.RawTag
	for i, e := range arr {
		p := path + "[" + strconv.Itoa(i) + "]"
		obj, ok := e.(map[string]any)
		if !ok {
			return nil, oldTypeErr(p, "an object", e)
		}
		for k := range obj {
			if k != "tag" && k != "data" {
				return nil, &Error{Path: p + "." + k, Err: fmt.Errorf("%w: an unknown tag has only \"tag\" and \"data\"", ErrUnknownField)}
			}
		}
		n, ok := obj["tag"].(json.Number)
		if !ok {
			return nil, oldTypeErr(p+".tag", "a number", obj["tag"])
		}
		tag, err := parseInteger(n.String())
		if err != nil {
			return nil, &Error{Path: p + ".tag", Err: fmt.Errorf("%w: %s is not a tag (%v)", ErrRange, n, err)}
		}
		if tag < 0 || tag > math.MaxInt32 {
			return nil, &Error{Path: p + ".tag", Err: fmt.Errorf("%w: %d is not a tag (0..%d)", ErrRange, tag, math.MaxInt32)}
		}
		s, ok := obj["data"].(string)
		if !ok {
			return nil, oldTypeErr(p+".data", "a hex string", obj["data"])
		}
		data, err := hex.DecodeString(s)
		if err != nil {
			return nil, &Error{Path: p + ".data", Err: fmt.Errorf("%w: %v", ErrType, err)}
		}
		out = append(out, codec.RawTag{Tag: uint32(tag), Data: data})
	}
	sortTags(out)
	return out, nil
}

func (r *oldReader) value(f *schema.Field, t *schema.Type, x any, path string, depth int) (codec.Value, error) {
	if x == nil {
		switch t.Kind {
		case schema.KindString, schema.KindBytes, schema.KindRecords, schema.KindArray, schema.KindStruct:
			// Array elements are never null; the field's own nullability
			// applies to the field value only.
			if t != f.Type {
				return codec.Value{}, &Error{Path: path, Err: fmt.Errorf("%w: an array element is never null", ErrNull)}
			}
			if f.Nullable.Contains(r.v) {
				return codec.NullValue(), nil
			}
			return codec.Value{}, &Error{Path: path, Err: fmt.Errorf("%w (nullable versions: %s)", ErrNull, f.Nullable)}
		}
		return codec.Value{}, &Error{Path: path, Err: fmt.Errorf("%w: %s cannot be null", ErrNull, t.Kind)}
	}
	switch t.Kind {
	case schema.KindBool:
		b, ok := x.(bool)
		if !ok {
			return codec.Value{}, oldTypeErr(path, "true or false", x)
		}
		if b {
			return codec.IntValue(1), nil
		}
		return codec.Value{}, nil
	case schema.KindInt8, schema.KindInt16, schema.KindUint16, schema.KindInt32, schema.KindUint32, schema.KindInt64:
		n, ok := x.(json.Number)
		if !ok {
			return codec.Value{}, oldTypeErr(path, "an integer", x)
		}
		lo, hi := intRange(t.Kind)
		i, err := parseInteger(n.String())
		if err != nil {
			return codec.Value{}, &Error{Path: path, Err: fmt.Errorf("%w: %s is not %s %s (%v)", ErrRange, n, article(t.Kind.String()), t.Kind, err)}
		}
		if i < lo || i > hi {
			return codec.Value{}, &Error{Path: path, Err: fmt.Errorf("%w: %d is not %s %s (%d..%d)", ErrRange, i, article(t.Kind.String()), t.Kind, lo, hi)}
		}
		return codec.IntValue(i), nil
	case schema.KindFloat64:
		switch y := x.(type) {
		case json.Number:
			fl, err := strconv.ParseFloat(y.String(), 64)
			if err != nil {
				return codec.Value{}, &Error{Path: path, Err: fmt.Errorf("%w: %s is not a float64", ErrRange, y)}
			}
			return codec.FloatValue(fl), nil
		case map[string]any:
			if h, ok := y["hex"].(string); ok && len(y) == 1 {
				b, err := hex.DecodeString(h)
				if err != nil || len(b) != 8 {
					return codec.Value{}, &Error{Path: path + ".hex", Err: fmt.Errorf("%w: want the 16 hex digits of a float64's 8 bytes", ErrType)}
				}
				return codec.FloatValue(math.Float64frombits(binary.BigEndian.Uint64(b))), nil
			}
		case string:
			switch y {
			case "NaN":
				return codec.FloatValue(math.Float64frombits(javaNaN)), nil
			case "Infinity":
				return codec.FloatValue(math.Inf(1)), nil
			case "-Infinity":
				return codec.FloatValue(math.Inf(-1)), nil
			}
		}
		return codec.Value{}, oldTypeErr(path, "a number, \"NaN\", \"Infinity\", \"-Infinity\" or {\"hex\": ...}", x)
	case schema.KindUUID:
		s, ok := x.(string)
		if !ok {
			return codec.Value{}, oldTypeErr(path, "a uuid string", x)
		}
		b, err := ParseUUID(s)
		if err != nil {
			return codec.Value{}, &Error{Path: path, Err: err}
		}
		return codec.BytesValue(b), nil
	case schema.KindString:
		switch y := x.(type) {
		case string:
			if len(y) > math.MaxInt16 {
				return codec.Value{}, &Error{Path: path, Err: fmt.Errorf("%w: string of %d bytes (max %d)", ErrRange, len(y), math.MaxInt16)}
			}
			return codec.BytesValue([]byte(y)), nil
		case map[string]any:
			if h, ok := y["hex"].(string); ok && len(y) == 1 {
				b, err := hex.DecodeString(h)
				if err != nil {
					return codec.Value{}, &Error{Path: path + ".hex", Err: fmt.Errorf("%w: %v", ErrType, err)}
				}
				return codec.BytesValue(b), nil
			}
		}
		return codec.Value{}, oldTypeErr(path, "a string (or {\"hex\": ...} for bytes that are not UTF-8)", x)
	case schema.KindBytes, schema.KindRecords:
		if t.Kind == schema.KindRecords {
			switch y := x.(type) {
			case map[string]any:
				b, err := oldBuildBatch(y, path)
				return codec.BytesValue(b), err
			case []any:
				out := []byte{}
				for i, e := range y {
					obj, ok := e.(map[string]any)
					if !ok {
						return codec.Value{}, oldTypeErr(path+"["+strconv.Itoa(i)+"]", "a batch object", e)
					}
					b, err := oldBuildBatch(obj, path+"["+strconv.Itoa(i)+"]")
					if err != nil {
						return codec.Value{}, err
					}
					out = append(out, b...)
				}
				return codec.BytesValue(out), nil
			}
		}
		s, ok := x.(string)
		if !ok {
			return codec.Value{}, oldTypeErr(path, "a hex string", x)
		}
		b, err := hex.DecodeString(s)
		if err != nil {
			return codec.Value{}, &Error{Path: path, Err: fmt.Errorf("%w: not hex: %v", ErrType, err)}
		}
		if b == nil {
			b = []byte{}
		}
		return codec.BytesValue(b), nil
	case schema.KindArray:
		arr, ok := x.([]any)
		if !ok {
			return codec.Value{}, oldTypeErr(path, "an array", x)
		}
		out := codec.KidsValue(make([]codec.Value, len(arr)))
		for i, e := range arr {
			val, err := r.value(f, t.Elem, e, path+"["+strconv.Itoa(i)+"]", depth)
			if err != nil {
				return out, err
			}
			out.Kids()[i] = val
		}
		return out, nil
	case schema.KindStruct:
		return r.structValue(t.Struct, x, path, depth+1)
	}
	return codec.Value{}, &Error{Path: path, Err: fmt.Errorf("%w: cannot read kind %s", ErrType, t.Kind)}
}

// oldBuildBatch builds one uncompressed RecordBatch v2 from the input-only
// object form of a records field:
//
//	{"baseOffset": 0, "partitionLeaderEpoch": -1, "baseTimestamp": 0,
//	 "producerId": -1, "producerEpoch": -1, "baseSequence": -1,
//	 "transactional": false,
//	 "records": [{"key": "k", "value": "v", "timestampDelta": 0,
//	              "headers": [{"key": "h", "value": "x"}]}]}
//
// Every key is optional (the defaults are shown). Keys and values are
// strings, {"hex": "..."} for other bytes, or null. The batch's
// lastOffsetDelta, maxTimestamp, recordsCount, batchLength and CRC are
// computed; record offsetDeltas are 0, 1, 2, ...
func oldBuildBatch(obj map[string]any, path string) ([]byte, error) {
	b := records.Batch{PartitionLeaderEpoch: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1}
	ints := map[string]*int64{}
	var base, ple, pid, pepoch, seq int64 = 0, -1, -1, -1, -1
	var baseTS int64
	ints["baseOffset"], ints["partitionLeaderEpoch"], ints["producerId"] = &base, &ple, &pid
	ints["producerEpoch"], ints["baseSequence"], ints["baseTimestamp"] = &pepoch, &seq, &baseTS
	kinds := map[string]schema.Kind{
		"baseOffset": schema.KindInt64, "partitionLeaderEpoch": schema.KindInt32,
		"producerId": schema.KindInt64, "producerEpoch": schema.KindInt16,
		"baseSequence": schema.KindInt32, "baseTimestamp": schema.KindInt64,
	}
	var recs []any
	for _, k := range oldSortedKeys(obj) {
		x := obj[k]
		p := path + "." + k
		switch {
		case ints[k] != nil:
			v, err := oldIntIn(x, p, kinds[k])
			if err != nil {
				return nil, err
			}
			*ints[k] = v
		case k == "transactional":
			t, ok := x.(bool)
			if !ok {
				return nil, oldTypeErr(p, "true or false", x)
			}
			if t {
				b.Attributes |= 16
			}
		case k == "records":
			arr, ok := x.([]any)
			if !ok {
				return nil, oldTypeErr(p, "an array of records", x)
			}
			recs = arr
		default:
			return nil, &Error{Path: p, Err: fmt.Errorf("%w: a records object has baseOffset, partitionLeaderEpoch, baseTimestamp, producerId, producerEpoch, baseSequence, transactional and records", ErrUnknownField)}
		}
	}
	b.BaseOffset, b.PartitionLeaderEpoch, b.ProducerID = base, int32(ple), pid
	b.ProducerEpoch, b.BaseSequence, b.BaseTimestamp, b.MaxTimestamp = int16(pepoch), int32(seq), baseTS, baseTS
	var area []byte
	for i, x := range recs {
		p := path + ".records[" + strconv.Itoa(i) + "]"
		rec, ok := x.(map[string]any)
		if !ok {
			return nil, oldTypeErr(p, "an object", x)
		}
		body, tsDelta, err := oldBuildRecord(rec, p, int32(i))
		if err != nil {
			return nil, err
		}
		if i == 0 || baseTS+tsDelta > b.MaxTimestamp {
			b.MaxTimestamp = baseTS + tsDelta // the latest record's, earlier than the base when every delta is negative
		}
		area = wire.AppendVarint(area, int32(len(body)))
		area = append(area, body...)
	}
	b.NumRecords = int32(len(recs))
	b.LastOffsetDelta = max(int32(len(recs))-1, 0)
	b.Records = area
	return records.AppendBatch(nil, &b), nil
}

// oldIntIn reads an integer of kind k, in any form a body's integers take
// (1e3, 1000.0), with a body's errors.
func oldIntIn(x any, path string, k schema.Kind) (int64, error) {
	n, ok := x.(json.Number)
	if !ok {
		return 0, oldTypeErr(path, "an integer", x)
	}
	v, err := parseInteger(n.String())
	if err != nil {
		return 0, &Error{Path: path, Err: fmt.Errorf("%w: %s is not %s %s (%v)", ErrRange, n, article(k.String()), k, err)}
	}
	if lo, hi := intRange(k); v < lo || v > hi {
		return 0, &Error{Path: path, Err: fmt.Errorf("%w: %d is not %s %s (%d..%d)", ErrRange, v, article(k.String()), k, lo, hi)}
	}
	return v, nil
}

// oldSortedKeys returns obj's keys in order, so that of two bad keys the
// same one is named every time.
func oldSortedKeys(obj map[string]any) []string {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	oldSortStrings(keys)
	return keys
}

// oldBuildRecord writes one Record v2 without its length prefix.
func oldBuildRecord(rec map[string]any, path string, offsetDelta int32) ([]byte, int64, error) {
	var key, value []byte
	keyNull, valueNull := true, true
	var tsDelta int64
	var headers []any
	for _, k := range oldSortedKeys(rec) {
		x := rec[k]
		p := path + "." + k
		var err error
		switch k {
		case "key":
			key, keyNull, err = oldBlobIn(x, p)
		case "value":
			value, valueNull, err = oldBlobIn(x, p)
		case "timestampDelta":
			tsDelta, err = oldIntIn(x, p, schema.KindInt64)
		case "headers":
			arr, ok := x.([]any)
			if !ok {
				return nil, 0, oldTypeErr(p, "an array of {\"key\", \"value\"} objects", x)
			}
			headers = arr
		default:
			return nil, 0, &Error{Path: p, Err: fmt.Errorf("%w: a record has key, value, timestampDelta and headers", ErrUnknownField)}
		}
		if err != nil {
			return nil, 0, err
		}
	}
	out := []byte{0} // attributes
	out = wire.AppendVarlong(out, tsDelta)
	out = wire.AppendVarint(out, offsetDelta)
	out = appendBlob(out, key, keyNull)
	out = appendBlob(out, value, valueNull)
	out = wire.AppendVarint(out, int32(len(headers)))
	for i, x := range headers {
		p := path + ".headers[" + strconv.Itoa(i) + "]"
		h, ok := x.(map[string]any)
		if !ok {
			return nil, 0, oldTypeErr(p, "an object", x)
		}
		var hk, hv []byte
		hkNull, hvNull := true, true
		for _, k := range oldSortedKeys(h) {
			y := h[k]
			var err error
			switch k {
			case "key":
				hk, hkNull, err = oldBlobIn(y, p+".key")
			case "value":
				hv, hvNull, err = oldBlobIn(y, p+".value")
			default:
				err = &Error{Path: p + "." + k, Err: fmt.Errorf("%w: a header has key and value", ErrUnknownField)}
			}
			if err != nil {
				return nil, 0, err
			}
		}
		if hkNull {
			return nil, 0, &Error{Path: p + ".key", Err: fmt.Errorf("%w: a header key is never null", ErrNull)}
		}
		out = appendBlob(out, hk, false)
		out = appendBlob(out, hv, hvNull)
	}
	return out, tsDelta, nil
}

// oldBlobIn reads a record key or value: a string, {"hex": ...} or null.
func oldBlobIn(x any, path string) ([]byte, bool, error) {
	switch y := x.(type) {
	case nil:
		return nil, true, nil
	case string:
		return []byte(y), false, nil
	case map[string]any:
		if h, ok := y["hex"].(string); ok && len(y) == 1 {
			b, err := decodeHex(h, path+".hex")
			return b, false, err
		}
	}
	return nil, false, oldTypeErr(path, "a string, {\"hex\": ...} or null", x)
}

func decodeHex(s, path string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, &Error{Path: path, Err: fmt.Errorf("%w: not hex: %v", ErrType, err)}
	}
	return b, nil
}
