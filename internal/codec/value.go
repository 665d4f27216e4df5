package codec

import (
	"bytes"

	"github.com/manifester/manifester/internal/schema"
)

// Value is a dynamic message value, shaped by the schema: a struct value
// has one entry in Fields per field of its struct (declaration order, fields
// absent at the version included, holding their defaults); an array value
// has Elems. Strings, bytes, uuids and records keep their bytes in Bytes;
// integers and bools are in Int, float64 in Float.
//
// Decoded values point into the decoded buffer and may share default
// sub-values; treat them as read-only, or [Value.Clone] them first.
type Value struct {
	Int     int64
	Float   float64
	Bytes   []byte
	Null    bool
	Fields  []Value
	Elems   []Value
	Unknown []RawTag // unknown tagged fields of a struct, in tag order
}

// RawTag is a tagged field the schema does not know, kept as raw bytes.
type RawTag struct {
	Tag  uint32
	Data []byte
}

// Clone returns a deep copy of v.
func (v Value) Clone() Value {
	out := v
	if v.Bytes != nil {
		out.Bytes = append([]byte(nil), v.Bytes...)
	}
	if v.Fields != nil {
		out.Fields = make([]Value, len(v.Fields))
		for i := range v.Fields {
			out.Fields[i] = v.Fields[i].Clone()
		}
	}
	if v.Elems != nil {
		out.Elems = make([]Value, len(v.Elems))
		for i := range v.Elems {
			out.Elems[i] = v.Elems[i].Clone()
		}
	}
	if v.Unknown != nil {
		out.Unknown = make([]RawTag, len(v.Unknown))
		for i, t := range v.Unknown {
			out.Unknown[i] = RawTag{Tag: t.Tag, Data: append([]byte(nil), t.Data...)}
		}
	}
	return out
}

// Equal reports whether two values are the same, treating nil and empty
// slices alike (but null and empty as different).
func Equal(a, b *Value) bool {
	if a.Int != b.Int || a.Float != b.Float || a.Null != b.Null || !bytes.Equal(a.Bytes, b.Bytes) {
		return false
	}
	if len(a.Fields) != len(b.Fields) || len(a.Elems) != len(b.Elems) || len(a.Unknown) != len(b.Unknown) {
		return false
	}
	for i := range a.Fields {
		if !Equal(&a.Fields[i], &b.Fields[i]) {
			return false
		}
	}
	for i := range a.Elems {
		if !Equal(&a.Elems[i], &b.Elems[i]) {
			return false
		}
	}
	for i := range a.Unknown {
		if a.Unknown[i].Tag != b.Unknown[i].Tag || !bytes.Equal(a.Unknown[i].Data, b.Unknown[i].Data) {
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
		return Value{Null: true}
	}
	switch f.Type.Kind {
	case schema.KindBool, schema.KindInt8, schema.KindInt16, schema.KindUint16, schema.KindInt32, schema.KindUint32, schema.KindInt64:
		return Value{Int: d.Int}
	case schema.KindFloat64:
		return Value{Float: d.Float}
	case schema.KindUUID:
		return Value{Bytes: append([]byte(nil), d.UUID[:]...)}
	case schema.KindString:
		return Value{Bytes: []byte(d.Str)}
	case schema.KindRecords:
		if d.Text == "" {
			return Value{Null: true} // records default to null, as in Kafka
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
	v := Value{Fields: make([]Value, len(s.Fields))}
	for i, f := range s.Fields {
		v.Fields[i] = defaultValue(f, depth)
	}
	return v
}
