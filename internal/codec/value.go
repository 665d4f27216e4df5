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
// and records keep their bytes in [Value.Bytes]; integers and bools are
// [Value.Int] ([Value.SetInt], [IntValue]); a float64 is kept as its IEEE
// 754 bits there (read it with [Value.Float], set it with [Value.SetFloat]
// or [FloatValue]). A value holds an integer, bytes or kids, one at a
// time: setting one ([Value.SetInt], [Value.SetBytes], [Value.SetKids])
// drops the others. Unknown tagged fields of a struct ([Value.Unknown],
// [Value.SetUnknown]) are rare and kept out of line; a null value
// ([NullValue], [Value.IsNull], [Value.SetNull]) is a flag. The zero Value
// is a non-null empty or zero value.
//
// The layout is kept small (16 bytes, one pointer): a decode makes one
// Value per field and per array element, so its size is most of a
// decode's memory and GC work.
//
// Decoded values point into the decoded buffer and may share default
// sub-values; treat them as read-only, or [Value.Clone] them first.
type Value struct {
	// ptr is nil for an integer, bool or float (or an empty value): n is
	// then its value. Otherwise ptr is the first byte of the bytes or the
	// first kid (the GC follows an unsafe.Pointer to either kind of
	// array), a *valueBox when the value has unknown tags, or &nullAnchor
	// for a null value that holds nothing; n then holds the flags below
	// and, above them, the count of bytes or kids (0 when boxed: the box
	// has them).
	ptr unsafe.Pointer
	n   int64
}

// The flags in the low bits of Value.n (when ptr is not nil).
const (
	kidsBit  = 1 << iota // the value holds kids, not bytes
	nullBit              // the value is null
	boxBit               // ptr is a *valueBox
	lenShift = iota      // the count is n >> lenShift
)

// nullAnchor is what a null value holding no bytes or kids points to, so
// that its flag is not taken for an integer.
var nullAnchor byte

// valueBox holds what a Value with unknown tagged fields would hold in
// ptr and n (without null and box flags: such a value is neither), and
// the tags.
type valueBox struct {
	ptr  unsafe.Pointer
	n    int64
	tags []RawTag
}

func (v *Value) box() *valueBox { return (*valueBox)(v.ptr) }

// inner returns v without its unknown tags and null flag.
func (v *Value) inner() Value {
	switch {
	case v.ptr == nil:
		return *v
	case v.n&boxBit != 0:
		b := v.box()
		if b.ptr == nil {
			return Value{}
		}
		return Value{ptr: b.ptr, n: b.n}
	case v.ptr == unsafe.Pointer(&nullAnchor):
		return Value{}
	}
	return Value{ptr: v.ptr, n: v.n &^ nullBit}
}

// IntValue returns an integer or bool value (a bool is 0 or 1).
func IntValue(i int64) Value { return Value{n: i} }

// Int returns the value of an integer or bool field (0 for a value
// holding bytes or kids).
func (v Value) Int() int64 {
	if v.ptr != nil {
		return 0
	}
	return v.n
}

// SetInt makes v the integer or bool i (dropping bytes, kids, tags and
// the null flag).
func (v *Value) SetInt(i int64) { v.ptr, v.n = nil, i }

// setInt is SetInt for the decoder's values, which are fresh (zeroed:
// their pointer is nil already) or scratch that nothing reads (whose
// stale pointer it leaves, so the decoder never reads a scratch value's
// flags: it sets null with setNull). It stores no pointer, so it needs no
// write barrier while the collector marks.
func (v *Value) setInt(i int64) { v.n = i }

// BytesValue returns a value holding b (a string, bytes, uuid or records).
func BytesValue(b []byte) Value {
	p := unsafe.Pointer(unsafe.SliceData(b))
	if p == nil {
		return Value{}
	}
	return Value{ptr: p, n: int64(len(b)) << lenShift}
}

// KidsValue returns a value holding kids (the fields of a struct or the
// elements of an array).
func KidsValue(kids []Value) Value {
	p := unsafe.Pointer(unsafe.SliceData(kids))
	if p == nil {
		return Value{}
	}
	return Value{ptr: p, n: int64(len(kids))<<lenShift | kidsBit}
}

// Bytes returns the bytes of a string, bytes, uuid or records value (nil
// for a value holding kids or an integer). Its capacity is its length.
func (v Value) Bytes() []byte {
	if v.ptr == nil || v.n&(kidsBit|boxBit|nullBit) != 0 {
		return v.otherBytes()
	}
	return unsafe.Slice((*byte)(v.ptr), v.n>>lenShift)
}

func (v Value) otherBytes() []byte {
	in := v.inner()
	if in.ptr == nil || in.n&kidsBit != 0 {
		return nil
	}
	return unsafe.Slice((*byte)(in.ptr), in.n>>lenShift)
}

// Kids returns the fields of a struct value or the elements of an array
// value (nil for a value holding bytes or an integer). Its capacity is
// its length.
func (v Value) Kids() []Value {
	if v.ptr == nil || v.n&(kidsBit|boxBit|nullBit) != kidsBit {
		return v.otherKids()
	}
	return unsafe.Slice((*Value)(v.ptr), v.n>>lenShift)
}

func (v Value) otherKids() []Value {
	in := v.inner()
	if in.ptr == nil || in.n&kidsBit == 0 {
		return nil
	}
	return unsafe.Slice((*Value)(in.ptr), in.n>>lenShift)
}

// SetBytes makes v hold b (and no kids or integer), keeping its null
// flag and unknown tags.
func (v *Value) SetBytes(b []byte) { v.set(BytesValue(b)) }

// SetKids makes v hold kids (and no bytes or integer), keeping its null
// flag and unknown tags.
func (v *Value) SetKids(kids []Value) { v.set(KidsValue(kids)) }

// set gives v the bytes or kids of in (a value from BytesValue or
// KidsValue), keeping v's null flag and unknown tags.
func (v *Value) set(in Value) {
	if v.ptr != nil && v.n&boxBit != 0 {
		v.rebox(in)
		return
	}
	null := v.IsNull()
	*v = in
	if null {
		v.SetNull(true)
	}
}

// setBytes and setKids are SetBytes and SetKids for the decoder's values,
// which are not null and have no unknown tags when their bytes or kids are
// set (a scratch value of a decode without values may hold anything: it
// is overwritten, not read).
func (v *Value) setBytes(b []byte) { *v = BytesValue(b) }

func (v *Value) setKids(kids []Value) { *v = KidsValue(kids) }

// rebox gives a boxed v the bytes or kids of in, in a new box (copies of
// v keep the old one). Out of line: the setters' common path stays small.
//
//go:noinline
func (v *Value) rebox(in Value) {
	v.ptr = unsafe.Pointer(&valueBox{ptr: in.ptr, n: in.n, tags: v.box().tags})
	v.n = boxBit | in.n&kidsBit
}

// setNull is SetNull(true) for the decoder's values, which hold nothing
// else when null: it reads nothing of v (a scratch value of a decode
// without values may hold a stale pointer beside an integer).
func (v *Value) setNull() { *v = NullValue() }

// NullValue returns a null value (null string, bytes, records, array or
// struct).
func NullValue() Value { return Value{ptr: unsafe.Pointer(&nullAnchor), n: nullBit} }

// IsNull reports whether v is null.
func (v *Value) IsNull() bool { return v.ptr != nil && v.n&nullBit != 0 }

// SetNull makes v null (dropping any unknown tags or integer) or not
// null.
func (v *Value) SetNull(null bool) {
	if null {
		in := v.inner()
		if in.ptr == nil {
			*v = NullValue()
			return
		}
		v.ptr, v.n = in.ptr, in.n|nullBit
		return
	}
	if !v.IsNull() {
		return
	}
	if v.ptr == unsafe.Pointer(&nullAnchor) {
		*v = Value{}
		return
	}
	v.n &^= nullBit
}

// FloatValue returns a float64 value.
func FloatValue(f float64) Value { return Value{n: int64(math.Float64bits(f))} }

// Float returns the value of a float64 field (stored as bits in Int).
func (v Value) Float() float64 { return math.Float64frombits(uint64(v.Int())) }

// SetFloat sets the value of a float64 field.
func (v *Value) SetFloat(f float64) { v.SetInt(int64(math.Float64bits(f))) }

// Unknown returns the unknown tagged fields of a struct value, in tag
// order (nil when there are none).
func (v *Value) Unknown() []RawTag {
	if v.ptr == nil || v.n&boxBit == 0 {
		return nil
	}
	return v.box().tags
}

// SetUnknown replaces the unknown tagged fields of a struct value (setting
// some makes a null value non-null).
func (v *Value) SetUnknown(tags []RawTag) {
	if len(tags) == 0 {
		if v.ptr != nil && v.n&boxBit != 0 {
			*v = v.inner()
		}
		return
	}
	in := v.inner()
	if in.ptr == nil {
		in = Value{} // a struct: no integer goes in the box
	}
	v.ptr = unsafe.Pointer(&valueBox{ptr: in.ptr, n: in.n, tags: tags})
	v.n = boxBit | in.n&kidsBit
}

// addUnknown appends one unknown tagged field (to the box of v, which
// copies of v share, as the decoder's fresh values have none).
func (v *Value) addUnknown(t RawTag) {
	if v.ptr == nil || v.n&boxBit == 0 {
		v.SetUnknown([]RawTag{t})
		return
	}
	b := v.box()
	b.tags = append(b.tags, t)
}

// bare reports whether v is not null and holds no bytes, kids or
// unknown tags (an integer aside).
func (v *Value) bare() bool { return v.ptr == nil || v.n&^kidsBit == 0 }

// sameEmpty reports whether x and y hold no bytes, kids or unknown tags
// and are both null or both not (their integers aside).
func sameEmpty(x, y *Value) bool {
	return x.bareOrNull() && y.bareOrNull() && x.IsNull() == y.IsNull()
}

// bareOrNull reports whether v holds no bytes, kids or unknown tags.
func (v *Value) bareOrNull() bool { return v.ptr == nil || v.n&^(kidsBit|nullBit) == 0 }

// RawTag is a tagged field the schema does not know, kept as raw bytes.
type RawTag struct {
	Tag  uint32
	Data []byte
}

// Clone returns a deep copy of v.
func (v Value) Clone() Value {
	if v.ptr == nil {
		return v
	}
	var out Value
	if b := v.Bytes(); b != nil {
		out.SetBytes(bytes.Clone(b)) // empty stays empty, not nil
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
		out.SetUnknown(tags)
	}
	if v.IsNull() {
		out.SetNull(true)
	}
	return out
}

// Equal reports whether two values are the same, treating nil and empty
// slices alike (but null and empty as different); floats compare by their bits.
func Equal(a, b *Value) bool {
	switch {
	case a.ptr == nil && b.ptr == nil:
		return a.n == b.n
	case a.ptr == b.ptr && a.n == b.n:
		return true // the same bytes, kids or box (a shared default)
	}
	if a.Int() != b.Int() || a.IsNull() != b.IsNull() || !bytes.Equal(a.Bytes(), b.Bytes()) {
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
		return IntValue(d.Int)
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
