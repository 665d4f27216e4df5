package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/wire"
)

// Encoding errors, for errors.Is.
var (
	ErrNonDefault    = errors.New("non-default value in a field this version does not have")
	ErrNotNullable   = errors.New("null in a field that is not nullable at this version")
	ErrTooLong       = errors.New("value too long")
	ErrShape         = errors.New("value does not match the schema")
	ErrTagsNotFlex   = errors.New("tagged fields set, but this version does not support them")
	ErrDuplicateTag  = errors.New("unknown tag equal to a known tag")
	ErrOutOfRange    = errors.New("integer out of range for its type")
	maxStringLen     = math.MaxInt16
	maxBytesOrArrLen = math.MaxInt32 - 1
)

type encoder struct {
	path  []pathElem
	depth int // struct nesting, bounded by budget.Depth
}

func (e *encoder) push(name string, idx int32) { e.path = append(e.path, pathElem{name, idx}) }
func (e *encoder) pop()                        { e.path = e.path[:len(e.path)-1] }

func (e *encoder) fail(err error) error {
	d := decoder{path: e.path}
	return &EncodeError{Path: d.pathString(), Err: err}
}

// withinEnc prefixes the path of an encode error returned from inside
// field name (or array element idx when idx >= 0). The hot path keeps no
// path stack: the path is built only when an error unwinds.
func withinEnc(err error, name string, idx int32) error {
	if ee, ok := err.(*EncodeError); ok {
		ee.Path = prependPath(ee.Path, name, idx)
	}
	return err
}

// EncodeBody appends the body of m at version v.
func (c *Codec) EncodeBody(dst []byte, m *schema.Message, v int16, val *Value) ([]byte, error) {
	p, err := c.plan(m, v)
	if err != nil {
		return dst, &EncodeError{Path: m.Name, Err: fmt.Errorf("%w: %v", wire.ErrVersion, err)}
	}
	e := &encoder{}
	dst, err = e.structBody(dst, p, val)
	if err != nil {
		err = withinEnc(err, m.Name, -1)
	}
	return dst, err
}

// EncodeRequest appends a whole request frame: size, header, body.
func (c *Codec) EncodeRequest(dst []byte, f *Frame) ([]byte, error) {
	if f.API == nil {
		return dst, &EncodeError{Err: fmt.Errorf("%w key", ErrUnknownAPI)}
	}
	m := f.API.Request
	if !m.Valid.Contains(f.Version) {
		return dst, &EncodeError{Path: m.Name, Err: fmt.Errorf("%w: %v", wire.ErrVersion, versionError(m, f.Version))}
	}
	hv := m.HeaderVersion(f.Version)
	start := len(dst)
	dst = wire.AppendInt32(dst, 0)
	dst = wire.AppendInt16(dst, f.API.Key)
	dst = wire.AppendInt16(dst, f.Version)
	if p := c.headerPlan(schema.TypeRequest, hv); p != nil {
		var err error
		if dst, err = appendSpecHeader(dst, p, f, 2); err != nil {
			return dst, err
		}
		return c.finishFrame(dst, start, m, f)
	}
	dst = wire.AppendInt32(dst, f.CorrelationID)
	if hv >= 1 {
		var err error
		if dst, err = appendClientID(dst, f); err != nil {
			return dst, err
		}
	}
	if hv >= 2 {
		dst = appendRawTags(wire.AppendUvarint(dst, uint32(len(f.HeaderTags))), f.HeaderTags)
	}
	return c.finishFrame(dst, start, m, f)
}

// EncodeResponse appends a whole response frame: size, header, body.
func (c *Codec) EncodeResponse(dst []byte, f *Frame) ([]byte, error) {
	if f.API == nil {
		return dst, &EncodeError{Err: fmt.Errorf("%w key", ErrUnknownAPI)}
	}
	m := f.API.Response
	if !m.Valid.Contains(f.Version) {
		return dst, &EncodeError{Path: m.Name, Err: fmt.Errorf("%w: %v", wire.ErrVersion, versionError(m, f.Version))}
	}
	start := len(dst)
	dst = wire.AppendInt32(dst, 0)
	if p := c.headerPlan(schema.TypeResponse, m.HeaderVersion(f.Version)); p != nil {
		var err error
		if dst, err = appendSpecHeader(dst, p, f, 0); err != nil {
			return dst, err
		}
		return c.finishFrame(dst, start, m, f)
	}
	dst = wire.AppendInt32(dst, f.CorrelationID)
	if m.HeaderVersion(f.Version) >= 1 {
		dst = appendRawTags(wire.AppendUvarint(dst, uint32(len(f.HeaderTags))), f.HeaderTags)
	}
	return c.finishFrame(dst, start, m, f)
}

func (c *Codec) finishFrame(dst []byte, start int, m *schema.Message, f *Frame) ([]byte, error) {
	dst, err := c.EncodeBody(dst, m, f.Version, &f.Body)
	if err != nil {
		return dst, err
	}
	if len(dst)-start-4 > math.MaxInt32 {
		return dst, &EncodeError{Err: ErrTooLong}
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst, nil
}

func appendRawTags(dst []byte, tags []RawTag) []byte {
	for _, t := range tags {
		dst = wire.AppendUvarint(dst, t.Tag)
		dst = wire.AppendUvarint(dst, uint32(len(t.Data)))
		dst = append(dst, t.Data...)
	}
	return dst
}

func (e *encoder) structBody(dst []byte, p *plan, v *Value) ([]byte, error) {
	if e.depth >= budget.Depth {
		return dst, e.fail(fmt.Errorf("%w: structs nested more than %d levels deep", budget.ErrDepth, budget.Depth))
	}
	e.depth++
	dst, err := e.structFields(dst, p, v)
	e.depth--
	return dst, err
}

func (e *encoder) structFields(dst []byte, p *plan, v *Value) ([]byte, error) {
	if len(v.Kids) != len(p.all) {
		return dst, e.fail(fmt.Errorf("%w: struct %s has %d fields, value has %d", ErrShape, p.s.Name, len(p.all), len(v.Kids)))
	}
	for _, fp := range p.defaults {
		if !fp.present && !fp.f.Ignorable && !Equal(&v.Kids[fp.index], &fp.def) {
			e.push(fp.f.Name, -1)
			err := e.fail(fmt.Errorf("%w: attempted to write a non-default %s at version %d", ErrNonDefault, fp.f.Name, p.version))
			e.pop()
			return dst, err
		}
	}
	var err error
	kids := v.Kids
	for _, fp := range p.wire {
		x := &kids[fp.index]
		if fp.intSize != 0 && x.Int >= fp.lo && x.Int <= fp.hi {
			// Fixed-width integers and bools in range: the common case,
			// written inline (e.value also reports out-of-range values).
			switch fp.intSize {
			case 1:
				dst = append(dst, byte(x.Int))
			case 2:
				dst = binary.BigEndian.AppendUint16(dst, uint16(x.Int))
			case 4:
				dst = binary.BigEndian.AppendUint32(dst, uint32(x.Int))
			default:
				dst = binary.BigEndian.AppendUint64(dst, uint64(x.Int))
			}
			continue
		}
		dst, err = e.value(dst, fp, fp.kind, fp.nullable, x)
		if err != nil {
			return dst, withinEnc(err, fp.f.Name, -1)
		}
	}
	if !p.flexible {
		if len(v.Unknown()) > 0 {
			return dst, e.fail(fmt.Errorf("%w (version %d)", ErrTagsNotFlex, p.version))
		}
		for _, f := range p.s.Tagged {
			fp := p.all[f.Index]
			if fp.present && !Equal(&v.Kids[f.Index], &fp.def) {
				return dst, e.fail(fmt.Errorf("%w: %s (version %d)", ErrTagsNotFlex, f.Name, p.version))
			}
		}
		return dst, nil
	}
	return e.tags(dst, p, v)
}

func (e *encoder) tags(dst []byte, p *plan, v *Value) ([]byte, error) {
	type entry struct {
		tag uint32
		fp  *fieldPlan
		raw []byte
	}
	var entries []entry
	for _, fp := range p.tagged {
		if !Equal(&v.Kids[fp.index], &fp.def) {
			entries = append(entries, entry{tag: uint32(fp.f.Tag), fp: fp})
		}
	}
	for _, u := range v.Unknown() {
		if _, known := p.byTag[u.Tag]; known {
			return dst, e.fail(fmt.Errorf("%w: %d", ErrDuplicateTag, u.Tag))
		}
		entries = append(entries, entry{tag: u.Tag, raw: u.Data})
	}
	if len(v.Unknown()) > 0 {
		sort.SliceStable(entries, func(i, j int) bool { return entries[i].tag < entries[j].tag })
	}
	dst = wire.AppendUvarint(dst, uint32(len(entries)))
	for _, en := range entries {
		dst = wire.AppendUvarint(dst, en.tag)
		if en.fp == nil {
			dst = wire.AppendUvarint(dst, uint32(len(en.raw)))
			dst = append(dst, en.raw...)
			continue
		}
		val, err := e.value(nil, en.fp, en.fp.kind, en.fp.nullable, &v.Kids[en.fp.index])
		if err != nil {
			return dst, withinEnc(err, en.fp.f.Name, -1)
		}
		dst = wire.AppendUvarint(dst, uint32(len(val)))
		dst = append(dst, val...)
	}
	return dst, nil
}

func (e *encoder) checkInt(v int64, k schema.Kind) error {
	lo, hi, ok := k.IntRange()
	if !ok {
		return nil
	}
	if v < lo || v > hi {
		return e.fail(fmt.Errorf("%w: %d is not a %s", ErrOutOfRange, v, k))
	}
	return nil
}

func (e *encoder) value(dst []byte, fp *fieldPlan, k schema.Kind, nullable bool, v *Value) ([]byte, error) {
	if k.IsInteger() || k == schema.KindBool {
		if err := e.checkInt(v.Int, k); err != nil {
			return dst, err
		}
	}
	switch k {
	case schema.KindBool:
		return wire.AppendBool(dst, v.Int != 0), nil
	case schema.KindInt8:
		return wire.AppendInt8(dst, int8(v.Int)), nil
	case schema.KindInt16:
		return wire.AppendInt16(dst, int16(v.Int)), nil
	case schema.KindUint16:
		return wire.AppendUint16(dst, uint16(v.Int)), nil
	case schema.KindInt32:
		return wire.AppendInt32(dst, int32(v.Int)), nil
	case schema.KindUint32:
		return wire.AppendUint32(dst, uint32(v.Int)), nil
	case schema.KindInt64:
		return wire.AppendInt64(dst, v.Int), nil
	case schema.KindFloat64:
		return wire.AppendFloat64(dst, v.Float()), nil
	case schema.KindUUID:
		if len(v.Bytes) != 16 {
			return dst, e.fail(fmt.Errorf("%w: uuid has %d bytes, want 16", ErrShape, len(v.Bytes)))
		}
		return append(dst, v.Bytes...), nil
	case schema.KindString, schema.KindBytes, schema.KindRecords:
		if v.IsNull() {
			if !nullable {
				return dst, e.fail(ErrNotNullable)
			}
			return e.appendLen(dst, fp.compact, k == schema.KindString, -1), nil
		}
		limit := maxBytesOrArrLen
		if k == schema.KindString {
			limit = maxStringLen
		}
		if len(v.Bytes) > limit {
			return dst, e.fail(fmt.Errorf("%w: %s of %d bytes (max %d)", ErrTooLong, k, len(v.Bytes), limit))
		}
		dst = e.appendLen(dst, fp.compact, k == schema.KindString, len(v.Bytes))
		return append(dst, v.Bytes...), nil
	case schema.KindArray:
		if v.IsNull() {
			if !nullable {
				return dst, e.fail(ErrNotNullable)
			}
			return e.appendLen(dst, fp.compact, false, -1), nil
		}
		dst = e.appendLen(dst, fp.compact, false, len(v.Kids))
		if out, ok := appendIntElems(dst, fp.elemKind, v.Kids); ok {
			return out, nil
		}
		var err error
		for i := range v.Kids {
			if fp.elemKind == schema.KindStruct {
				dst, err = e.structBody(dst, fp.sub, &v.Kids[i])
			} else {
				dst, err = e.value(dst, fp, fp.elemKind, false, &v.Kids[i])
			}
			if err != nil {
				return dst, withinEnc(err, "", int32(i))
			}
		}
		return dst, nil
	case schema.KindStruct:
		if fp.nullable {
			switch {
			case v.IsNull() && fp.tagged:
				return wire.AppendUvarint(dst, 0), nil
			case v.IsNull():
				return wire.AppendInt8(dst, -1), nil
			case fp.tagged:
				dst = wire.AppendUvarint(dst, 1)
			default:
				dst = wire.AppendInt8(dst, 1)
			}
		} else if v.IsNull() {
			return dst, e.fail(ErrNotNullable)
		}
		return e.structBody(dst, fp.sub, v)
	}
	return dst, e.fail(fmt.Errorf("%w: cannot encode kind %s", ErrShape, k))
}

// appendIntElems appends an array of fixed-width integers in one loop. It
// returns false, having appended nothing, for other kinds or when a value
// is out of range (the general path then reports which).
func appendIntElems(dst []byte, k schema.Kind, elems []Value) ([]byte, bool) {
	lo, hi, ok := k.IntRange()
	if !ok || k == schema.KindBool {
		return dst, false
	}
	for i := range elems {
		if x := elems[i].Int; x < lo || x > hi {
			return dst, false
		}
	}
	for i := range elems {
		x := elems[i].Int
		switch k {
		case schema.KindInt8:
			dst = append(dst, byte(x))
		case schema.KindInt16, schema.KindUint16:
			dst = binary.BigEndian.AppendUint16(dst, uint16(x))
		case schema.KindInt32, schema.KindUint32:
			dst = binary.BigEndian.AppendUint32(dst, uint32(x))
		default:
			dst = binary.BigEndian.AppendUint64(dst, uint64(x))
		}
	}
	return dst, true
}

func (e *encoder) appendLen(dst []byte, compact, int16Len bool, n int) []byte {
	switch {
	case compact:
		return wire.AppendUvarint(dst, uint32(n+1))
	case int16Len:
		return wire.AppendInt16(dst, int16(n))
	}
	return wire.AppendInt32(dst, int32(n))
}
