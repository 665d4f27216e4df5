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
	ErrRepeatedTag   = errors.New("unknown tag given twice")
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
	fp := c.framePlanOf(m, 0, f.Version)
	var hv int16
	var hp *plan
	if fp != nil {
		hv, hp = fp.hv, fp.hdr
	} else {
		hv = m.HeaderVersion(f.Version)
		hp = c.headerPlan(schema.TypeRequest, hv)
	}
	start := len(dst)
	dst = wire.AppendInt32(dst, 0)
	dst = wire.AppendInt16(dst, f.API.Key)
	dst = wire.AppendInt16(dst, f.Version)
	if hp != nil {
		var err error
		if fp != nil && fp.hdrOwn && len(f.HeaderTags) == 0 && (len(f.Header.Kids()) == 0 || len(f.Header.Kids()) == len(hp.all)) {
			// What appendSpecHeader writes for such a header, without
			// going through its plan.
			dst = wire.AppendInt32(dst, f.CorrelationID)
			if dst, err = appendClientID(dst, f); err != nil {
				return dst, err
			}
			if hp.flexible {
				dst = append(dst, 0)
			}
		} else if dst, err = appendSpecHeader(dst, hp, f, 2); err != nil {
			return dst, err
		}
		return c.finishFrame(dst, start, m, f, fp)
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
	return c.finishFrame(dst, start, m, f, fp)
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
	fp := c.framePlanOf(m, 1, f.Version)
	var hv int16
	var hp *plan
	if fp != nil {
		hv, hp = fp.hv, fp.hdr
	} else {
		hv = m.HeaderVersion(f.Version)
		hp = c.headerPlan(schema.TypeResponse, hv)
	}
	start := len(dst)
	dst = wire.AppendInt32(dst, 0)
	if hp != nil {
		var err error
		if fp != nil && fp.hdrOwn && len(f.HeaderTags) == 0 && (len(f.Header.Kids()) == 0 || len(f.Header.Kids()) == len(hp.all)) {
			dst = wire.AppendInt32(dst, f.CorrelationID)
			if hp.flexible {
				dst = append(dst, 0)
			}
		} else if dst, err = appendSpecHeader(dst, hp, f, 0); err != nil {
			return dst, err
		}
		return c.finishFrame(dst, start, m, f, fp)
	}
	dst = wire.AppendInt32(dst, f.CorrelationID)
	if hv >= 1 {
		dst = appendRawTags(wire.AppendUvarint(dst, uint32(len(f.HeaderTags))), f.HeaderTags)
	}
	return c.finishFrame(dst, start, m, f, fp)
}

// finishFrame appends the body (from the frame plan fp when there is one)
// and sets the size prefix.
func (c *Codec) finishFrame(dst []byte, start int, m *schema.Message, f *Frame, fp *framePlan) ([]byte, error) {
	var err error
	if fp != nil {
		e := encoder{}
		if dst, err = e.structBody(dst, fp.body, &f.Body); err != nil {
			err = withinEnc(err, m.Name, -1)
		}
	} else {
		dst, err = c.EncodeBody(dst, m, f.Version, &f.Body)
	}
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
	return e.structsFields(dst, p, nil, v)
}

// structsFields appends the fields of the struct value one, or else of
// each element of vals, all of plan p, in one loop (the elements of an
// array of structs cost no call each; their errors name their index).
func (e *encoder) structsFields(dst []byte, p *plan, vals []Value, one *Value) ([]byte, error) {
	var err error
	prog := &p.enc
	ops := prog.ops
	n, indexed := len(vals), one == nil
	if !indexed {
		n = 1
	}
	for vi := 0; vi < n; vi++ {
		v := one
		if indexed {
			v = &vals[vi]
		}
		kids := v.Kids()
		if len(kids) != prog.nKids {
			return dst, elemErr(e.shapeError(p, len(kids)), indexed, vi)
		}
		for j := range prog.mustDefault {
			if d := &prog.mustDefault[j]; !d.isDefault(&kids[d.index]) {
				return dst, elemErr(e.nonDefaultError(p, d.fp), indexed, vi)
			}
		}
		for i := range ops {
			op := &ops[i]
			x := &kids[op.index]
			// Each case writes the common valid value and continues; the rest
			// (breaking out of the switch) goes to the general path below,
			// which writes the same bytes or reports the error. The most
			// common codes with their common values come first, as
			// conditional branches, which the processor predicts from the
			// fields before better than it does the jump table of a switch
			// on the code (an indirect jump every field took); the switch
			// has every code, the others and theirs.
			switch c := op.code; {
			case c == encInt32 && x.ptr == nil && x.n == int64(int32(x.n)):
				dst = binary.BigEndian.AppendUint32(dst, uint32(x.n))
				continue
			case c == encInt16 && x.ptr == nil && x.n == int64(int16(x.n)):
				dst = binary.BigEndian.AppendUint16(dst, uint16(x.n))
				continue
			case c == encInt64 && x.ptr == nil:
				dst = binary.BigEndian.AppendUint64(dst, uint64(x.n))
				continue
			case c == encCompactString && !x.IsNull() && len(x.Bytes()) <= maxStringLen:
				s := x.Bytes()
				dst = wire.AppendUvarint(dst, uint32(len(s)+1))
				dst = append(dst, s...)
				continue
			default:
				xi := x.Int()
				switch op.code {
				case encBool:
					if uint64(xi) <= 1 {
						dst = append(dst, byte(xi))
						continue
					}
				case encInt16:
					if xi == int64(int16(xi)) {
						dst = binary.BigEndian.AppendUint16(dst, uint16(xi))
						continue
					}
				case encInt8:
					if xi == int64(int8(xi)) {
						dst = append(dst, byte(xi))
						continue
					}
				case encUint16:
					if uint64(xi) <= math.MaxUint16 {
						dst = binary.BigEndian.AppendUint16(dst, uint16(xi))
						continue
					}
				case encInt32:
					if xi == int64(int32(xi)) {
						dst = binary.BigEndian.AppendUint32(dst, uint32(xi))
						continue
					}
				case encUint32:
					if uint64(xi) <= math.MaxUint32 {
						dst = binary.BigEndian.AppendUint32(dst, uint32(xi))
						continue
					}
				case encInt64, encFloat64:
					dst = binary.BigEndian.AppendUint64(dst, uint64(xi))
					continue
				case encUUID:
					if u := x.Bytes(); len(u) == 16 {
						dst = append(dst, u...)
						continue
					}
				case encString:
					if s := x.Bytes(); x.IsNull() {
						if op.nullable {
							dst = binary.BigEndian.AppendUint16(dst, math.MaxUint16)
							continue
						}
					} else if len(s) <= maxStringLen {
						dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
						dst = append(dst, s...)
						continue
					}
				case encCompactString:
					if s := x.Bytes(); x.IsNull() {
						if op.nullable {
							dst = append(dst, 0)
							continue
						}
					} else if len(s) <= maxStringLen {
						dst = wire.AppendUvarint(dst, uint32(len(s)+1))
						dst = append(dst, s...)
						continue
					}
				case encBytes:
					if s := x.Bytes(); x.IsNull() {
						if op.nullable {
							dst = binary.BigEndian.AppendUint32(dst, math.MaxUint32)
							continue
						}
					} else if len(s) <= maxBytesOrArrLen {
						dst = binary.BigEndian.AppendUint32(dst, uint32(len(s)))
						dst = append(dst, s...)
						continue
					}
				case encCompactBytes:
					if s := x.Bytes(); x.IsNull() {
						if op.nullable {
							dst = append(dst, 0)
							continue
						}
					} else if len(s) <= maxBytesOrArrLen {
						dst = wire.AppendUvarint(dst, uint32(len(s)+1))
						dst = append(dst, s...)
						continue
					}
				case encIntArray:
					if !x.IsNull() {
						mark := len(dst)
						elems := x.Kids()
						if op.elem == encInt32 { // the common case, inline
							dst = appendCount(dst, op.compact, len(elems))
							j := 0
							for ; j < len(elems) && elems[j].ptr == nil && elems[j].n == int64(int32(elems[j].n)); j++ {
								dst = binary.BigEndian.AppendUint32(dst, uint32(elems[j].n))
							}
							if j == len(elems) {
								continue
							}
						} else {
							var ok bool
							if dst, ok = appendInts(appendCount(dst, op.compact, len(elems)), op.elem, elems); ok {
								continue
							}
						}
						dst = dst[:mark]
					}
				case encStringArray:
					if !x.IsNull() {
						mark := len(dst)
						var ok bool
						if dst, ok = appendStrings(appendCount(dst, op.compact, len(x.Kids())), op.compact, x.Kids()); ok {
							continue
						}
						dst = dst[:mark]
					}
				case encStructArray:
					if !x.IsNull() {
						sub, elems := op.sub, x.Kids()
						if dst, err = e.structElems(appendCount(dst, op.compact, len(elems)), sub, elems); err != nil {
							return dst, elemErr(withinEnc(err, ops[i].fp.f.Name, -1), indexed, vi)
						}
						continue
					}
				case encStruct:
					if !x.IsNull() {
						if dst, err = e.structBody(dst, op.fp.sub, x); err != nil {
							return dst, elemErr(withinEnc(err, ops[i].fp.f.Name, -1), indexed, vi)
						}
						continue
					}
				}
			}
			// The general path reads the op and the value again, so that
			// they need not be kept across the calls above.
			fp := ops[i].fp
			if dst, err = e.value(dst, fp, fp.kind, fp.nullable, &kids[fp.index]); err != nil {
				return dst, elemErr(withinEnc(err, fp.f.Name, -1), indexed, vi)
			}
		}
		switch {
		case prog.tail == tailNotFlex:
			if len(v.Unknown()) > 0 {
				return dst, elemErr(e.tagsNotFlexError(p, nil), indexed, vi)
			}
			for _, fp := range prog.notFlexTagged {
				if !sameScalar(&kids[fp.index], &fp.def) && !Equal(&kids[fp.index], &fp.def) {
					return dst, elemErr(e.tagsNotFlexError(p, fp), indexed, vi)
				}
			}
		case prog.tail == tailNoTags && len(v.Unknown()) == 0:
			dst = append(dst, 0)
		default:
			if dst, err = e.tags(dst, p, v); err != nil {
				return dst, elemErr(err, indexed, vi)
			}
		}
	}
	return dst, nil
}

// elemErr prefixes the index of array element i to err when indexed.
func elemErr(err error, indexed bool, i int) error {
	if indexed {
		return withinEnc(err, "", int32(i))
	}
	return err
}

// sameScalar reports whether x and d are the same integer with no bytes,
// elements or tags: a sufficient condition for Equal, decided inline for
// the common case of an integer at its default.
func sameScalar(x, d *Value) bool {
	return x.Int() == d.Int() && sameEmpty(x, d)
}

// The errors of structFields, out of line to keep its frame small.

//go:noinline
func (e *encoder) shapeError(p *plan, n int) error {
	return e.fail(fmt.Errorf("%w: struct %s has %d fields, value has %d", ErrShape, p.s.Name, len(p.all), n))
}

//go:noinline
func (e *encoder) nonDefaultError(p *plan, fp *fieldPlan) error {
	e.push(fp.f.Name, -1)
	err := e.fail(fmt.Errorf("%w: attempted to write a non-default %s at version %d", ErrNonDefault, fp.f.Name, p.version))
	e.pop()
	return err
}

//go:noinline
func (e *encoder) tagsNotFlexError(p *plan, fp *fieldPlan) error {
	if fp == nil {
		return e.fail(fmt.Errorf("%w (version %d)", ErrTagsNotFlex, p.version))
	}
	return e.fail(fmt.Errorf("%w: %s (version %d)", ErrTagsNotFlex, fp.f.Name, p.version))
}

// structElems appends the elements of an array of structs of plan p (all
// one level deeper, so the depth is checked once).
func (e *encoder) structElems(dst []byte, p *plan, elems []Value) ([]byte, error) {
	if len(elems) == 0 {
		return dst, nil
	}
	if e.depth >= budget.Depth {
		_, err := e.structBody(dst, p, &elems[0])
		return dst, withinEnc(err, "", 0)
	}
	e.depth++
	dst, err := e.structsFields(dst, p, elems, nil)
	e.depth--
	return dst, err
}

// appendCount appends an array count (or -1 for null), compact or not.
func appendCount(dst []byte, compact bool, n int) []byte {
	if compact && n < 0x7f {
		return append(dst, byte(n+1))
	}
	return appendLongCount(dst, compact, n)
}

// appendLongCount is appendCount for the other cases.
func appendLongCount(dst []byte, compact bool, n int) []byte {
	if compact {
		return wire.AppendUvarint(dst, uint32(n+1))
	}
	return binary.BigEndian.AppendUint32(dst, uint32(n))
}

// appendStrings appends the elements of an array of strings (not
// nullable). It returns false at the first null or over-long one (the
// general path then reports it); what it appended must then be dropped.
func appendStrings(dst []byte, compact bool, elems []Value) ([]byte, bool) {
	for i := range elems {
		x := &elems[i]
		if x.IsNull() || len(x.Bytes()) > maxStringLen {
			return dst, false
		}
		if compact {
			dst = wire.AppendUvarint(dst, uint32(len(x.Bytes())+1))
		} else {
			dst = binary.BigEndian.AppendUint16(dst, uint16(len(x.Bytes())))
		}
		dst = append(dst, x.Bytes()...)
	}
	return dst, true
}

// appendInts appends fixed-width integers of op code c in one loop. It
// returns false at the first value out of range (the general path then
// reports it); what it appended must then be dropped.
func appendInts(dst []byte, c encCode, elems []Value) ([]byte, bool) {
	switch c {
	case encInt8:
		for i := range elems {
			x := elems[i].Int()
			if x != int64(int8(x)) {
				return dst, false
			}
			dst = append(dst, byte(x))
		}
	case encInt16:
		for i := range elems {
			x := elems[i].Int()
			if x != int64(int16(x)) {
				return dst, false
			}
			dst = binary.BigEndian.AppendUint16(dst, uint16(x))
		}
	case encUint16:
		for i := range elems {
			x := elems[i].Int()
			if uint64(x) > math.MaxUint16 {
				return dst, false
			}
			dst = binary.BigEndian.AppendUint16(dst, uint16(x))
		}
	case encInt32:
		for i := range elems {
			x := elems[i].Int()
			if x != int64(int32(x)) {
				return dst, false
			}
			dst = binary.BigEndian.AppendUint32(dst, uint32(x))
		}
	case encUint32:
		for i := range elems {
			x := elems[i].Int()
			if uint64(x) > math.MaxUint32 {
				return dst, false
			}
			dst = binary.BigEndian.AppendUint32(dst, uint32(x))
		}
	case encInt64:
		for i := range elems {
			dst = binary.BigEndian.AppendUint64(dst, uint64(elems[i].Int()))
		}
	default:
		return dst, false
	}
	return dst, true
}

// tags appends the tagged fields of a flexible struct: the count, then
// each field that is not at its default and each unknown tag, in tag order,
// as tag, size, value.
func (e *encoder) tags(dst []byte, p *plan, v *Value) ([]byte, error) {
	if len(v.Unknown()) > 0 {
		return e.tagsWithUnknown(dst, p, v)
	}
	// One comparison with the default per field: which are set is kept
	// in a bit set for the first 64 tagged fields (Kafka's structs have a
	// handful), compared again for any after those.
	var set uint64
	n := 0
	for i, fp := range p.tagged {
		x := &v.Kids()[fp.index]
		if !sameScalar(x, &fp.def) && !Equal(x, &fp.def) {
			n++
			if i < 64 {
				set |= 1 << i
			}
		}
	}
	dst = wire.AppendUvarint(dst, uint32(n))
	for i, fp := range p.tagged {
		x := &v.Kids()[fp.index]
		if i < 64 {
			if set&(1<<i) == 0 {
				continue
			}
		} else if sameScalar(x, &fp.def) || Equal(x, &fp.def) {
			continue
		}
		var err error
		dst = wire.AppendUvarint(dst, uint32(fp.f.Tag))
		if dst, err = e.taggedValue(dst, fp, x); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// taggedValue appends the size and value of a tagged field. The value is
// written in place after one byte kept for its size, and moved up in the
// rare case the size takes more than one byte. On an error dst is
// returned as it was.
func (e *encoder) taggedValue(dst []byte, fp *fieldPlan, x *Value) ([]byte, error) {
	mark := len(dst)
	dst = append(dst, 0)
	out, err := e.value(dst, fp, fp.kind, fp.nullable, x)
	if err != nil {
		return dst[:mark], withinEnc(err, fp.f.Name, -1)
	}
	dst = out
	n := len(dst) - mark - 1
	if n < 0x80 {
		dst[mark] = byte(n)
		return dst, nil
	}
	w := wire.UvarintLen(uint32(n))
	dst = append(dst, make([]byte, w-1)...)
	copy(dst[mark+w:], dst[mark+1:mark+1+n])
	wire.AppendUvarint(dst[:mark], uint32(n))
	return dst, nil
}

// tagsWithUnknown is tags for a struct that carries unknown tagged fields,
// merged with the known ones in tag order.
func (e *encoder) tagsWithUnknown(dst []byte, p *plan, v *Value) ([]byte, error) {
	type entry struct {
		tag uint32
		fp  *fieldPlan
		raw []byte
	}
	var entries []entry
	for _, fp := range p.tagged {
		if !Equal(&v.Kids()[fp.index], &fp.def) {
			entries = append(entries, entry{tag: uint32(fp.f.Tag), fp: fp})
		}
	}
	for _, u := range v.Unknown() {
		if _, known := p.byTag[u.Tag]; known {
			return dst, e.fail(fmt.Errorf("%w: %d", ErrDuplicateTag, u.Tag))
		}
		entries = append(entries, entry{tag: u.Tag, raw: u.Data})
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].tag < entries[j].tag })
	for i := 1; i < len(entries); i++ {
		if entries[i].tag == entries[i-1].tag {
			return dst, e.fail(fmt.Errorf("%w: %d", ErrRepeatedTag, entries[i].tag))
		}
	}
	dst = wire.AppendUvarint(dst, uint32(len(entries)))
	for _, en := range entries {
		dst = wire.AppendUvarint(dst, en.tag)
		if en.fp == nil {
			dst = wire.AppendUvarint(dst, uint32(len(en.raw)))
			dst = append(dst, en.raw...)
			continue
		}
		var err error
		if dst, err = e.taggedValue(dst, en.fp, &v.Kids()[en.fp.index]); err != nil {
			return dst, err
		}
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
	iv := v.Int()
	if k.IsInteger() || k == schema.KindBool {
		if err := e.checkInt(iv, k); err != nil {
			return dst, err
		}
	}
	switch k {
	case schema.KindBool:
		return wire.AppendBool(dst, iv != 0), nil
	case schema.KindInt8:
		return wire.AppendInt8(dst, int8(iv)), nil
	case schema.KindInt16:
		return wire.AppendInt16(dst, int16(iv)), nil
	case schema.KindUint16:
		return wire.AppendUint16(dst, uint16(iv)), nil
	case schema.KindInt32:
		return wire.AppendInt32(dst, int32(iv)), nil
	case schema.KindUint32:
		return wire.AppendUint32(dst, uint32(iv)), nil
	case schema.KindInt64:
		return wire.AppendInt64(dst, iv), nil
	case schema.KindFloat64:
		return wire.AppendFloat64(dst, v.Float()), nil
	case schema.KindUUID:
		if len(v.Bytes()) != 16 {
			return dst, e.fail(fmt.Errorf("%w: uuid has %d bytes, want 16", ErrShape, len(v.Bytes())))
		}
		return append(dst, v.Bytes()...), nil
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
		if len(v.Bytes()) > limit {
			return dst, e.fail(fmt.Errorf("%w: %s of %d bytes (max %d)", ErrTooLong, k, len(v.Bytes()), limit))
		}
		dst = e.appendLen(dst, fp.compact, k == schema.KindString, len(v.Bytes()))
		return append(dst, v.Bytes()...), nil
	case schema.KindArray:
		if v.IsNull() {
			if !nullable {
				return dst, e.fail(ErrNotNullable)
			}
			return e.appendLen(dst, fp.compact, false, -1), nil
		}
		dst = e.appendLen(dst, fp.compact, false, len(v.Kids()))
		if out, ok := appendIntElems(dst, fp.elemKind, v.Kids()); ok {
			return out, nil
		}
		var err error
		for i := range v.Kids() {
			if fp.elemKind == schema.KindStruct {
				dst, err = e.structBody(dst, fp.sub, &v.Kids()[i])
			} else {
				dst, err = e.value(dst, fp, fp.elemKind, false, &v.Kids()[i])
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
		if x := elems[i].Int(); x < lo || x > hi {
			return dst, false
		}
	}
	for i := range elems {
		x := elems[i].Int()
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
