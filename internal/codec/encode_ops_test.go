package codec

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
	"github.com/manifester/manifester/internal/wire"
)

// The encoder's program (encode_ops.go) must write exactly what the
// general, field-by-field encoder writes, and fail with the same error.
// refEncoder below is that general encoder as it was before the program:
// it walks the plan's fields and dispatches on kinds, never reading
// plan.enc. TestEncodeProgramMatchesReference encodes random values of
// every message and version of the 4.3 spec with both, valid and
// invalid ones (out-of-range integers at each kind's bounds, nulls where
// not nullable, bad uuids, strings too long for a one-byte size, wrong
// field counts, non-default absent fields, unknown tags), and compares
// the bytes and the error text.

type refEncoder struct{ encoder }

func (e *refEncoder) structBody(dst []byte, p *plan, v *Value) ([]byte, error) {
	if e.depth >= budget.Depth {
		return dst, e.fail(fmt.Errorf("%w: structs nested more than %d levels deep", budget.ErrDepth, budget.Depth))
	}
	e.depth++
	dst, err := e.structFields(dst, p, v)
	e.depth--
	return dst, err
}

func (e *refEncoder) structFields(dst []byte, p *plan, v *Value) ([]byte, error) {
	if len(v.Kids()) != len(p.all) {
		return dst, e.fail(fmt.Errorf("%w: struct %s has %d fields, value has %d", ErrShape, p.s.Name, len(p.all), len(v.Kids())))
	}
	for _, fp := range p.defaults {
		if !fp.present && !fp.f.Ignorable && !Equal(&v.Kids()[fp.index], &fp.def) {
			e.push(fp.f.Name, -1)
			err := e.fail(fmt.Errorf("%w: attempted to write a non-default %s at version %d", ErrNonDefault, fp.f.Name, p.version))
			e.pop()
			return dst, err
		}
	}
	var err error
	for _, fp := range p.wire {
		dst, err = e.value(dst, fp, fp.kind, fp.nullable, &v.Kids()[fp.index])
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
			if fp.present && !Equal(&v.Kids()[f.Index], &fp.def) {
				return dst, e.fail(fmt.Errorf("%w: %s (version %d)", ErrTagsNotFlex, f.Name, p.version))
			}
		}
		return dst, nil
	}
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
		val, err := e.value(nil, en.fp, en.fp.kind, en.fp.nullable, &v.Kids()[en.fp.index])
		if err != nil {
			return dst, withinEnc(err, en.fp.f.Name, -1)
		}
		dst = wire.AppendUvarint(dst, uint32(len(val)))
		dst = append(dst, val...)
	}
	return dst, nil
}

func (e *refEncoder) value(dst []byte, fp *fieldPlan, k schema.Kind, nullable bool, v *Value) ([]byte, error) {
	if lo, hi, ok := k.IntRange(); ok && (v.Int() < lo || v.Int() > hi) {
		return dst, e.fail(fmt.Errorf("%w: %d is not a %s", ErrOutOfRange, v.Int(), k))
	}
	switch k {
	case schema.KindBool:
		return wire.AppendBool(dst, v.Int() != 0), nil
	case schema.KindInt8:
		return wire.AppendInt8(dst, int8(v.Int())), nil
	case schema.KindInt16:
		return wire.AppendInt16(dst, int16(v.Int())), nil
	case schema.KindUint16:
		return wire.AppendUint16(dst, uint16(v.Int())), nil
	case schema.KindInt32:
		return wire.AppendInt32(dst, int32(v.Int())), nil
	case schema.KindUint32:
		return wire.AppendUint32(dst, uint32(v.Int())), nil
	case schema.KindInt64:
		return wire.AppendInt64(dst, v.Int()), nil
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

// valueGen makes random struct values for a plan; bad is the chance
// (per mille) of each kind of invalid value.
type valueGen struct {
	rng *rand.Rand
	bad int
}

func (g *valueGen) chance(perMille int) bool { return g.rng.Intn(1000) < perMille }

// edgeInt returns a value at or next to the bounds of k, or small, or
// (rarely, with bad) just outside.
func (g *valueGen) edgeInt(k schema.Kind) int64 {
	lo, hi, _ := k.IntRange()
	if g.chance(g.bad) {
		if g.rng.Intn(2) == 0 && lo > math.MinInt64 {
			return lo - 1 - g.rng.Int63n(3)
		}
		if hi < math.MaxInt64 {
			return hi + 1 + g.rng.Int63n(3)
		}
	}
	switch g.rng.Intn(4) {
	case 0:
		return lo
	case 1:
		return hi
	case 2:
		return lo + g.rng.Int63n(2)
	}
	return int64(g.rng.Intn(5)) - 1
}

func (g *valueGen) bytes(n int) []byte {
	b := make([]byte, n)
	g.rng.Read(b)
	return b
}

func (g *valueGen) structValue(p *plan, depth int) Value {
	n := len(p.all)
	if g.chance(g.bad / 4) {
		n += g.rng.Intn(3) - 1 // a wrong field count
	}
	v := KidsValue(make([]Value, max(n, 0)))
	for i := range v.Kids() {
		if i >= len(p.all) {
			continue
		}
		fp := p.all[i]
		switch {
		case !fp.present:
			v.Kids()[i] = fp.def
			if g.chance(g.bad) {
				v.Kids()[i].SetInt(v.Kids()[i].Int() ^ (1)) // not the default
			}
		case fp.tagged && g.rng.Intn(3) == 0:
			v.Kids()[i] = fp.def
		default:
			v.Kids()[i] = g.fieldValue(fp, fp.kind, fp.nullable, depth)
		}
	}
	if g.chance(100) {
		tags := []RawTag{{Tag: uint32(g.rng.Intn(40)), Data: g.bytes(g.rng.Intn(3))}}
		if g.rng.Intn(2) == 0 {
			tags = append(tags, RawTag{Tag: uint32(g.rng.Intn(40)), Data: g.bytes(200)})
		}
		v.SetUnknown(tags)
	}
	return v
}

func (g *valueGen) fieldValue(fp *fieldPlan, k schema.Kind, nullable bool, depth int) Value {
	if (nullable || g.chance(g.bad)) && g.rng.Intn(6) == 0 {
		if k == schema.KindString || k == schema.KindBytes || k == schema.KindRecords || k == schema.KindArray || k == schema.KindStruct {
			return NullValue()
		}
	}
	switch k {
	case schema.KindBool, schema.KindInt8, schema.KindInt16, schema.KindUint16, schema.KindInt32, schema.KindUint32, schema.KindInt64:
		return IntValue(g.edgeInt(k))
	case schema.KindFloat64:
		return FloatValue([]float64{0, -0.5, math.Inf(1), math.NaN(), 1e300}[g.rng.Intn(5)])
	case schema.KindUUID:
		n := 16
		if g.chance(g.bad) {
			n = g.rng.Intn(20)
		}
		return BytesValue(g.bytes(n))
	case schema.KindString, schema.KindBytes, schema.KindRecords:
		n := g.rng.Intn(6)
		switch {
		case g.rng.Intn(8) == 0:
			n = 120 + g.rng.Intn(20) // around a one-byte compact size
		case g.chance(g.bad / 4):
			n = maxStringLen + 1
		}
		return BytesValue(g.bytes(n))
	case schema.KindArray:
		n := g.rng.Intn(4)
		if depth > 3 {
			n = 0
		}
		v := KidsValue(make([]Value, n))
		for i := range v.Kids() {
			if fp.elemKind == schema.KindStruct {
				v.Kids()[i] = g.structValue(fp.sub, depth+1)
			} else {
				v.Kids()[i] = g.fieldValue(fp, fp.elemKind, false, depth+1)
			}
		}
		return v
	case schema.KindStruct:
		return g.structValue(fp.sub, depth+1)
	}
	return Value{}
}

func TestEncodeProgramMatchesReference(t *testing.T) {
	testshared.Dir(t)
	reg, err := schema.Load(testshared.SpecPath("4.3"))
	if err != nil {
		t.Fatal(err)
	}
	c := New(reg)
	rng := rand.New(rand.NewSource(13))
	var encoded, failed int
	errs := map[string]bool{}
	for _, m := range reg.Messages {
		mp := c.plans[m]
		for i, p := range mp.plans {
			for round := 0; round < 12; round++ {
				g := &valueGen{rng: rng, bad: []int{0, 5, 40}[round%3]}
				v := g.structValue(p, 0)
				ref := &refEncoder{}
				want, wantErr := ref.structBody([]byte{0xAA}, p, &v)
				e := &encoder{}
				got, gotErr := e.structBody([]byte{0xAA}, p, &v)
				what := fmt.Sprintf("%s v%d round %d", m.Name, int(mp.lo)+i, round)
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Fatalf("%s: error %v, reference %v", what, gotErr, wantErr)
				}
				if wantErr != nil {
					failed++
					errs[fmt.Sprint(unwrapAll(wantErr))] = true
					continue
				}
				encoded++
				if !bytes.Equal(got, want) {
					t.Fatalf("%s: bytes differ from the reference\n got %x\nwant %x", what, got, want)
				}
			}
		}
	}
	t.Logf("%d values encoded alike, %d failed alike; errors seen: %v", encoded, failed, errs)
	if encoded < 1000 || failed < 300 {
		t.Errorf("too few cases: %d encoded, %d failed", encoded, failed)
	}
	for _, want := range []error{ErrOutOfRange, ErrNotNullable, ErrShape, ErrTooLong, ErrNonDefault, ErrTagsNotFlex} {
		if !errs[want.Error()] {
			t.Errorf("no case failed with %v", want)
		}
	}
}

// unwrapAll returns the innermost error of a chain of single wraps.
func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok || u.Unwrap() == nil {
			return err
		}
		err = u.Unwrap()
	}
}
