package schema

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is the wire kind of a field's type.
type Kind uint8

// The kinds of the Kafka schema language.
const (
	KindInvalid Kind = iota
	KindBool
	KindInt8
	KindInt16
	KindUint16
	KindInt32
	KindUint32
	KindInt64
	KindFloat64
	KindUUID
	KindString
	KindBytes
	KindRecords
	KindStruct
	KindArray
)

var kindNames = [...]string{
	KindInvalid: "invalid", KindBool: "bool", KindInt8: "int8", KindInt16: "int16", KindUint16: "uint16",
	KindInt32: "int32", KindUint32: "uint32", KindInt64: "int64", KindFloat64: "float64", KindUUID: "uuid",
	KindString: "string", KindBytes: "bytes", KindRecords: "records", KindStruct: "struct", KindArray: "array",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// FixedSize returns the encoded width of fixed-size kinds and 0 for the rest.
func (k Kind) FixedSize() int {
	switch k {
	case KindBool, KindInt8:
		return 1
	case KindInt16, KindUint16:
		return 2
	case KindInt32, KindUint32:
		return 4
	case KindInt64, KindFloat64:
		return 8
	case KindUUID:
		return 16
	}
	return 0
}

// IsInteger reports whether the kind is one of the integer kinds.
func (k Kind) IsInteger() bool {
	switch k {
	case KindInt8, KindInt16, KindUint16, KindInt32, KindUint32, KindInt64:
		return true
	}
	return false
}

// primitiveKinds maps the spec's primitive type names to kinds.
var primitiveKinds = map[string]Kind{
	"bool": KindBool, "int8": KindInt8, "int16": KindInt16, "uint16": KindUint16, "int32": KindInt32,
	"uint32": KindUint32, "int64": KindInt64, "float64": KindFloat64, "uuid": KindUUID,
	"string": KindString, "bytes": KindBytes, "records": KindRecords,
}

// Type is a resolved field type.
type Type struct {
	Kind   Kind
	Name   string  // as written in the spec: "int32", "[]Topic", "Topic"
	Elem   *Type   // array element type
	Struct *Struct // struct type, or the element struct of a struct array
}

// ElemStruct returns the struct of a struct or struct-array type, else nil.
func (t *Type) ElemStruct() *Struct {
	if t.Kind == KindArray && t.Elem != nil {
		return t.Elem.Struct
	}
	return t.Struct
}

// canBeNullable lists the kinds that may carry nullableVersions.
func (k Kind) canBeNullable() bool {
	switch k {
	case KindString, KindBytes, KindRecords, KindStruct, KindArray:
		return true
	}
	return false
}

// Default is a field's parsed default value.
type Default struct {
	Text  string // as written, "" when implicit
	Null  bool
	Int   int64 // integers and bool (0/1)
	Float float64
	Str   string // string default
	UUID  [16]byte
}

var errDefault = errors.New("invalid default")

// parseDefault checks a default's text against the field type (§1.7 of the
// wire reference) and returns the parsed value.
func parseDefault(t *Type, text string, set, null bool) (Default, error) {
	d := Default{Text: text}
	if !set {
		return d, nil
	}
	if null || text == "null" {
		switch t.Kind {
		case KindString, KindBytes, KindRecords, KindStruct, KindArray:
			d.Null = true
			return d, nil
		}
		return d, fmt.Errorf("%w: null is not a %s", errDefault, t.Kind)
	}
	switch t.Kind {
	case KindBool:
		switch strings.ToLower(text) {
		case "true":
			d.Int = 1
		case "false":
		default:
			return d, fmt.Errorf("%w: %q is not a bool", errDefault, text)
		}
	case KindInt8, KindInt16, KindInt32, KindInt64, KindUint16, KindUint32:
		n, err := parseInt(text)
		if err != nil {
			return d, fmt.Errorf("%w: %q is not an integer", errDefault, text)
		}
		lo, hi, _ := t.Kind.IntRange()
		if n < lo || n > hi {
			return d, fmt.Errorf("%w: %s does not fit %s", errDefault, text, t.Kind)
		}
		d.Int = n
	case KindFloat64:
		f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSuffix(text, "d"), "D"), 64)
		if err != nil {
			return d, fmt.Errorf("%w: %q is not a float64", errDefault, text)
		}
		d.Float = f
	case KindUUID:
		b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(text, "="))
		if err != nil || len(b) != 16 {
			return d, fmt.Errorf("%w: %q is not a base64 uuid", errDefault, text)
		}
		copy(d.UUID[:], b)
	case KindString:
		d.Str = text
	case KindBytes, KindStruct, KindArray:
		if text != "" {
			return d, fmt.Errorf("%w: a %s default may only be empty or null", errDefault, t.Kind)
		}
	case KindRecords:
		// Ignored, as in Kafka.
	}
	return d, nil
}

func parseInt(s string) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimPrefix(s, "-")
	if h, ok := strings.CutPrefix(strings.ToLower(body), "0x"); ok {
		u, err := strconv.ParseUint(h, 16, 64)
		if err != nil || u > math.MaxInt64 {
			return 0, errDefault
		}
		if neg {
			return -int64(u), nil
		}
		return int64(u), nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// IntRange returns the values a bool or integer kind can hold on the wire
// (bool: 0..1); ok is false for the other kinds.
func (k Kind) IntRange() (lo, hi int64, ok bool) {
	switch k {
	case KindBool:
		return 0, 1, true
	case KindInt8:
		return math.MinInt8, math.MaxInt8, true
	case KindInt16:
		return math.MinInt16, math.MaxInt16, true
	case KindUint16:
		return 0, math.MaxUint16, true
	case KindInt32:
		return math.MinInt32, math.MaxInt32, true
	case KindUint32:
		return 0, math.MaxUint32, true
	case KindInt64:
		return math.MinInt64, math.MaxInt64, true
	}
	return 0, 0, false
}

// IsDefaultInt reports whether an integer or bool value equals the default.
func (d *Default) IsDefaultInt(v int64) bool { return !d.Null && d.Int == v }

// IsDefaultUUID reports whether a uuid equals the default.
func (d *Default) IsDefaultUUID(b []byte) bool { return bytes.Equal(d.UUID[:], b) }
