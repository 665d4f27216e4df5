package codec

import (
	"bytes"
	"math"
	"unsafe"

	"github.com/manifester/manifester/internal/schema"
)

// Value is a dynamic message value, shaped by the schema. [Value.Kids] holds
// the fields of a struct value (one per field of its struct, by Field.Index,
// in declaration order; fields absent at the version are included, holding
// their defaults) or the elements of an array value. Strings, bytes, uuids
// and records keep their bytes in [Value.Bytes]; integers and bools are in
// Int; a float64 is kept as its IEEE 754 bits in Int (read it with
// [Value.Float], set it with [Value.SetFloat] or [FloatValue]). A value
// holds bytes or kids, never both: setting one ([Value.SetBytes],
// [Value.SetKids]) drops the other. Unknown tagged fields of a struct sit
// behind one pointer ([Value.Unknown], [Value.SetUnknown]), as they are
// rare; a null value is marked in that same pointer ([NullValue],
// [Value.IsNull], [Value.SetNull]). The zero Value is a non-null empty or
// zero value.
//
// The layout is kept small: a decode makes one Value per field and per
// array element, so its size is most of a decode's memory and GC work.
//
// Decoded values point into the decoded buffer and may share default
// sub-values; treat them as read-only, or [Value.Clone] them first.
type Value struct {
	// ptr is the first byte of the bytes or the first kid, n says which
	// and how many: n >= 0 bytes, n < 0 ^n kids. One pointer and one
	// length serve both (a value never holds both), so a Value is four
	// words (32 bytes on 64-bit platforms) instead of eight. The GC
	// follows an unsafe.Pointer to either kind of array.
	ptr unsafe.Pointer
	// unknown holds the unknown tagged fields of a struct, in tag order, or
	// is nullMark for a null value (which has no tagged fields): so the
	// null flag costs no word of its own.
	unknown *[]RawTag
	n       int
	Int     int64 // after the pointers: the GC scans only the front
}

// BytesValue returns a value holding b (a string, bytes, uuid or records).
func BytesValue(b []byte) Value { return Value{ptr: unsafe.Pointer(unsafe.SliceData(b)), n: len(b)} }

// KidsValue returns a value holding kids (the fields of a struct or the
// elements of an array).
func KidsValue(kids []Value) Value {
	return Value{ptr: unsafe.Pointer(unsafe.SliceData(kids)), n: ^len(kids)}
}

// Bytes returns the bytes of a string, bytes, uuid or records value (nil
// for a value holding kids). Its capacity is its length.
func (v Value) Bytes() []byte {
	if v.n < 0 {
		return nil
	}
	return unsafe.Slice((*byte)(v.ptr), v.n)
}

// Kids returns the fields of a struct value or the elements of an array
// value (nil for a value holding bytes). Its capacity is its length.
func (v Value) Kids() []Value {
	if v.n >= 0 {
		return nil
	}
	return unsafe.Slice((*Value)(v.ptr), ^v.n)
}

// SetBytes makes v hold b (and no kids).
func (v *Value) SetBytes(b []byte) { v.ptr, v.n = unsafe.Pointer(unsafe.SliceData(b)), len(b) }

// SetKids makes v hold kids (and no bytes).
func (v *Value) SetKids(kids []Value) {
	v.ptr, v.n = unsafe.Pointer(unsafe.SliceData(kids)), ^len(kids)
}

// nullMark is the unknown pointer of null values.
var nullMark = new([]RawTag)

// NullValue returns a null value (null string, bytes, records, array or
// struct).
func NullValue() Value { return Value{unknown: nullMark} }

// IsNull reports whether v is null.
func (v *Value) IsNull() bool { return v.unknown == nullMark }

// SetNull makes v null (dropping any unknown tags) or not null.
func (v *Value) SetNull(null bool) {
	switch {
	case null:
		v.unknown = nullMark
	case v.unknown == nullMark:
		v.unknown = nil
	}
}

// FloatValue returns a float64 value.
func FloatValue(f float64) Value { return Value{Int: int64(math.Float64bits(f))} }

// Float returns the value of a float64 field (stored as bits in Int).
func (v *Value) Float() float64 { return math.Float64frombits(uint64(v.Int)) }

// SetFloat sets the value of a float64 field.
func (v *Value) SetFloat(f float64) { v.Int = int64(math.Float64bits(f)) }

// Unknown returns the unknown tagged fields of a struct value, in tag
// order (nil when there are none).
func (v *Value) Unknown() []RawTag {
	if v.unknown == nil || v.unknown == nullMark {
		return nil
	}
	return *v.unknown
}

// SetUnknown replaces the unknown tagged fields of a struct value (setting
// some makes a null value non-null).
func (v *Value) SetUnknown(tags []RawTag) {
	if len(tags) == 0 {
		if v.unknown != nullMark {
			v.unknown = nil
		}
		return
	}
	v.unknown = &tags
}

// addUnknown appends one unknown tagged field.
func (v *Value) addUnknown(t RawTag) {
	if v.unknown == nil || v.unknown == nullMark {
		v.unknown = &[]RawTag{}
	}
	*v.unknown = append(*v.unknown, t)
}

// RawTag is a tagged field the schema does not know, kept as raw bytes.
type RawTag struct {
	Tag  uint32
	Data []byte
}

// Clone returns a deep copy of v.
func (v Value) Clone() Value {
	out := v
	if b := v.Bytes(); b != nil {
		out.SetBytes(append([]byte(nil), b...))
	}
	if kids := v.Kids(); kids != nil {
		c := make([]Value, len(kids))
		for i := range kids {
			c[i] = kids[i].Clone()
		}
		out.SetKids(c)
	}
	if u := v.Unknown(); u != nil {
		tags := make([]RawTag, len(u))
		for i, t := range u {
			tags[i] = RawTag{Tag: t.Tag, Data: append([]byte(nil), t.Data...)}
		}
		out.unknown = &tags
	}
	return out
}

// Equal reports whether two values are the same, treating nil and empty
// slices alike (but null and empty as different); floats compare by their bits.
func Equal(a, b *Value) bool {
	if a.Int != b.Int || a.IsNull() != b.IsNull() || !bytes.Equal(a.Bytes(), b.Bytes()) {
		return false
	}
	au, bu := a.Unknown(), b.Unknown()
	ak, bk := a.Kids(), b.Kids()
	if len(ak) != len(bk) || len(au) != len(bu) {
		return false
	}
	for i := range ak {
		if !Equal(&ak[i], &bk[i]) {
			return false
		}
	}
	for i := range au {
		if au[i].Tag != bu[i].Tag || !bytes.Equal(au[i].Data, bu[i].Data) {
			return false
		}
	}
	return true
}

// maxDefaultDepth bounds struct nesting when building default values, so a
// (malformed) self-referencing struct cannot recurse forever.
const maxDefaultDepth = 64

// DefaultValue returns a field's default: its spec default, or the
// implicit one (zero, empty, all-zero uuid, or an all-default struct).
func DefaultValue(f *schema.Field) Value { return defaultValue(f, 0) }

func defaultValue(f *schema.Field, depth int) Value {
	d := &f.Default
	if d.Null {
		return NullValue()
	}
	switch f.Type.Kind {
	case schema.KindBool, schema.KindInt8, schema.KindInt16, schema.KindUint16, schema.KindInt32, schema.KindUint32, schema.KindInt64:
		return Value{Int: d.Int}
	case schema.KindFloat64:
		return FloatValue(d.Float)
	case schema.KindUUID:
		return BytesValue(append([]byte(nil), d.UUID[:]...))
	case schema.KindString:
		return BytesValue([]byte(d.Str))
	case schema.KindRecords:
		if d.Text == "" {
			return NullValue() // records default to null, as in Kafka
		}
		return Value{}
	case schema.KindStruct:
		return DefaultStruct(f.Type.Struct, depth+1)
	}
	return Value{} // bytes and arrays: empty
}

// DefaultStruct returns a struct value with every field at its default.
func DefaultStruct(s *schema.Struct, depth int) Value {
	if s == nil || depth > maxDefaultDepth {
		return Value{}
	}
	kids := make([]Value, len(s.Fields))
	for i, f := range s.Fields {
		kids[i] = defaultValue(f, depth)
	}
	return KidsValue(kids)
}
