package codec_test

import (
	"math"
	"testing"
	"unsafe"

	"github.com/manifester/manifester/internal/codec"
)

// The packed Value layout keeps floats in Int and the null flag and unknown
// tags in one pointer; these check that the accessors keep them apart.

func TestValueFloatBits(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1.5, -2.25e300, math.Inf(1), math.Inf(-1), math.NaN(), math.SmallestNonzeroFloat64} {
		v := codec.FloatValue(f)
		if got := v.Float(); math.Float64bits(got) != math.Float64bits(f) {
			t.Errorf("FloatValue(%g).Float() = %g", f, got)
		}
		var w codec.Value
		w.SetFloat(f)
		if !codec.Equal(&v, &w) {
			t.Errorf("FloatValue(%g) and SetFloat(%g) differ", f, f)
		}
	}
	z, nz := codec.FloatValue(0), codec.FloatValue(math.Copysign(0, -1))
	if codec.Equal(&z, &nz) {
		t.Error("0 and -0 compare equal; floats should compare by their bits")
	}
	n1, n2 := codec.FloatValue(math.NaN()), codec.FloatValue(math.NaN())
	if !codec.Equal(&n1, &n2) {
		t.Error("a NaN does not equal the same NaN")
	}
}

func TestValueNullAndUnknown(t *testing.T) {
	n := codec.NullValue()
	if !n.IsNull() || n.Unknown() != nil {
		t.Fatalf("NullValue: IsNull %v, Unknown %v", n.IsNull(), n.Unknown())
	}
	var empty codec.Value
	if empty.IsNull() || codec.Equal(&n, &empty) {
		t.Error("the zero Value is null, or equals a null value")
	}
	n.SetUnknown(nil)
	if !n.IsNull() {
		t.Error("SetUnknown(nil) cleared the null flag")
	}
	n.SetNull(false)
	if n.IsNull() {
		t.Error("SetNull(false) left the value null")
	}

	var s codec.Value
	tags := []codec.RawTag{{Tag: 3, Data: []byte{1, 2}}, {Tag: 9}}
	s.SetUnknown(tags)
	if s.IsNull() || len(s.Unknown()) != 2 || s.Unknown()[0].Tag != 3 || s.Unknown()[1].Tag != 9 {
		t.Fatalf("after SetUnknown: IsNull %v, Unknown %+v", s.IsNull(), s.Unknown())
	}
	s.SetNull(false) // not null already: the tags stay
	if len(s.Unknown()) != 2 {
		t.Errorf("SetNull(false) dropped the unknown tags: %+v", s.Unknown())
	}

	c := s.Clone()
	if !codec.Equal(&s, &c) {
		t.Fatal("Clone differs from the original")
	}
	c.Unknown()[0].Data[0] = 0xff
	if s.Unknown()[0].Data[0] != 1 {
		t.Error("Clone shares the unknown tag data with the original")
	}
	c.SetUnknown([]codec.RawTag{{Tag: 3, Data: []byte{1, 2}}})
	if codec.Equal(&s, &c) {
		t.Error("values with 2 and 1 unknown tags compare equal")
	}

	nc := codec.NullValue()
	if nc2 := nc.Clone(); !nc2.IsNull() {
		t.Error("Clone of a null value is not null")
	}
}

func TestValueKidsClone(t *testing.T) {
	v := codec.KidsValue([]codec.Value{codec.IntValue(1), codec.KidsValue([]codec.Value{codec.BytesValue([]byte("ab"))}), codec.NullValue()})
	c := v.Clone()
	if !codec.Equal(&v, &c) {
		t.Fatal("Clone differs from the original")
	}
	c.Kids()[1].Kids()[0].Bytes()[0] = 'x'
	c.Kids()[0].SetInt(2)
	if string(v.Kids()[1].Kids()[0].Bytes()) != "ab" || v.Kids()[0].Int() != 1 {
		t.Error("Clone shares memory with the original")
	}
	if codec.Equal(&v, &c) {
		t.Error("changed clone still compares equal")
	}
}

// TestValueBytesOrKids checks the one pointer and length that hold either
// a value's bytes or its kids: each setter drops the other, nil and empty
// stay apart, the zero Value holds neither, and the layout is one pointer and one int64.
func TestValueBytesOrKids(t *testing.T) {
	if got, limit := unsafe.Sizeof(codec.Value{}), unsafe.Sizeof(uintptr(0))+8; got > limit {
		t.Errorf("a Value is %d bytes, want at most %d", got, limit)
	}
	var z codec.Value
	if z.Bytes() != nil || z.Kids() != nil || z.IsNull() || z.Int() != 0 {
		t.Errorf("zero Value: bytes %v, kids %v, null %v", z.Bytes(), z.Kids(), z.IsNull())
	}
	v := codec.BytesValue([]byte("abc"))
	if string(v.Bytes()) != "abc" || v.Kids() != nil || cap(v.Bytes()) != 3 {
		t.Errorf("BytesValue: bytes %q (cap %d), kids %v", v.Bytes(), cap(v.Bytes()), v.Kids())
	}
	kids := []codec.Value{codec.IntValue(7), codec.BytesValue([]byte("x"))}
	v.SetKids(kids)
	if v.Bytes() != nil || len(v.Kids()) != 2 || v.Kids()[0].Int() != 7 || string(v.Kids()[1].Bytes()) != "x" {
		t.Errorf("after SetKids: bytes %v, kids %+v", v.Bytes(), v.Kids())
	}
	v.Kids()[0].SetInt(8) // the kids are shared, not copied
	if kids[0].Int() != 8 {
		t.Error("Kids() returned a copy")
	}
	v.SetBytes([]byte{})
	if b := v.Bytes(); b == nil || len(b) != 0 || v.Kids() != nil {
		t.Errorf("after SetBytes(empty): bytes %#v, kids %v", b, v.Kids())
	}
	v.SetBytes(nil)
	if v.Bytes() != nil || v.Kids() != nil {
		t.Errorf("after SetBytes(nil): bytes %#v, kids %v", v.Bytes(), v.Kids())
	}
	v.SetKids([]codec.Value{})
	if k := v.Kids(); k == nil || len(k) != 0 || v.Bytes() != nil {
		t.Errorf("after SetKids(empty): kids %#v, bytes %v", k, v.Bytes())
	}
	v.SetKids(nil)
	if v.Kids() != nil || v.Bytes() != nil {
		t.Errorf("after SetKids(nil): kids %#v, bytes %v", v.Kids(), v.Bytes())
	}
	n := codec.NullValue()
	n.SetBytes([]byte("q"))
	if !n.IsNull() || string(n.Bytes()) != "q" {
		t.Error("SetBytes changed the null flag")
	}
	e1, e2 := codec.KidsValue(nil), codec.BytesValue(nil)
	if !codec.Equal(&e1, &z) || !codec.Equal(&e2, &z) {
		t.Error("empty kids or empty bytes differ from the zero Value")
	}
}

// TestValueUnknownOutOfLine checks the unknown tags kept beside a value's
// bytes or kids: the setters keep them, copies keep what they had, null
// drops them.
func TestValueUnknownOutOfLine(t *testing.T) {
	tags := []codec.RawTag{{Tag: 5, Data: []byte{9}}}
	kids := []codec.Value{codec.IntValue(1), codec.IntValue(2)}
	v := codec.KidsValue(kids)
	v.SetUnknown(tags)
	if len(v.Kids()) != 2 || v.Kids()[1].Int() != 2 || v.Bytes() != nil || v.Int() != 0 || len(v.Unknown()) != 1 || v.IsNull() {
		t.Fatalf("kids and tags: kids %+v, bytes %v, Int %d, tags %+v", v.Kids(), v.Bytes(), v.Int(), v.Unknown())
	}
	v.Kids()[0].SetInt(3) // still the same kids
	if kids[0].Int() != 3 {
		t.Error("SetUnknown copied the kids")
	}
	old := v
	v.SetKids([]codec.Value{codec.IntValue(7)})
	if len(v.Kids()) != 1 || v.Kids()[0].Int() != 7 || len(v.Unknown()) != 1 {
		t.Errorf("SetKids on a value with tags: kids %+v, tags %+v", v.Kids(), v.Unknown())
	}
	if len(old.Kids()) != 2 || len(old.Unknown()) != 1 {
		t.Errorf("a copy changed with the original: kids %+v, tags %+v", old.Kids(), old.Unknown())
	}
	v.SetBytes([]byte("hi"))
	if string(v.Bytes()) != "hi" || v.Kids() != nil || len(v.Unknown()) != 1 {
		t.Errorf("SetBytes on a value with tags: bytes %q, kids %v, tags %+v", v.Bytes(), v.Kids(), v.Unknown())
	}
	c := v.Clone()
	if !codec.Equal(&c, &v) || string(c.Bytes()) != "hi" || len(c.Unknown()) != 1 {
		t.Errorf("Clone of a value with tags: bytes %q, tags %+v", c.Bytes(), c.Unknown())
	}
	v.SetUnknown(nil)
	if v.Unknown() != nil || string(v.Bytes()) != "hi" || v.IsNull() {
		t.Errorf("SetUnknown(nil): tags %+v, bytes %q, null %v", v.Unknown(), v.Bytes(), v.IsNull())
	}
	old.SetNull(true)
	if !old.IsNull() || old.Unknown() != nil || len(old.Kids()) != 2 {
		t.Errorf("SetNull(true): null %v, tags %+v, kids %+v", old.IsNull(), old.Unknown(), old.Kids())
	}
	old.SetUnknown(tags)
	if old.IsNull() || len(old.Unknown()) != 1 || len(old.Kids()) != 2 {
		t.Errorf("SetUnknown on a null value: null %v, tags %+v, kids %+v", old.IsNull(), old.Unknown(), old.Kids())
	}
}

// TestValueIntOrOthers checks the integer that shares a Value's length
// word: no integer, whatever its low bits, reads as a flag (null, kids,
// unknown tags), and setting an integer, bytes or kids drops the others.
func TestValueIntOrOthers(t *testing.T) {
	for _, i := range []int64{0, 1, 2, 3, 4, 5, 7, -1, -8, math.MaxInt64, math.MinInt64, 1 << 40} {
		v := codec.IntValue(i)
		if v.Int() != i || v.IsNull() || v.Bytes() != nil || v.Kids() != nil || v.Unknown() != nil {
			t.Errorf("IntValue(%d): Int %d, null %v, bytes %v, kids %v, tags %v", i, v.Int(), v.IsNull(), v.Bytes(), v.Kids(), v.Unknown())
		}
		v.SetNull(false)
		if c := v.Clone(); v.Int() != i || !codec.Equal(&c, &v) {
			t.Errorf("IntValue(%d): SetNull(false) or Clone changed it: %d, clone %d", i, v.Int(), c.Int())
		}
		v.SetNull(true)
		if !v.IsNull() || v.Int() != 0 {
			t.Errorf("IntValue(%d).SetNull(true): null %v, Int %d", i, v.IsNull(), v.Int())
		}
		v.SetInt(i)
		v.SetBytes([]byte("ab"))
		if v.Int() != 0 || string(v.Bytes()) != "ab" {
			t.Errorf("SetBytes after SetInt(%d): Int %d, bytes %q", i, v.Int(), v.Bytes())
		}
		v.SetInt(i)
		if v.Int() != i || v.Bytes() != nil {
			t.Errorf("SetInt(%d) after SetBytes: Int %d, bytes %q", i, v.Int(), v.Bytes())
		}
		v.SetKids([]codec.Value{codec.IntValue(i)})
		if v.Int() != 0 || len(v.Kids()) != 1 || v.Kids()[0].Int() != i {
			t.Errorf("SetKids after SetInt(%d): Int %d, kids %v", i, v.Int(), v.Kids())
		}
		w := codec.IntValue(i ^ 1)
		if x := codec.IntValue(i); codec.Equal(&x, &w) {
			t.Errorf("IntValue(%d) equals IntValue(%d)", i, i^1)
		}
	}
	n := codec.NullValue()
	n.SetBytes(nil)
	if !n.IsNull() || n.Bytes() != nil || n.Int() != 0 {
		t.Errorf("null after SetBytes(nil): null %v, bytes %v, Int %d", n.IsNull(), n.Bytes(), n.Int())
	}
	n.SetNull(false)
	if var0 := (codec.Value{}); n.IsNull() || !codec.Equal(&n, &var0) {
		t.Errorf("null made not null: null %v, Int %d", n.IsNull(), n.Int())
	}
	if f := codec.FloatValue(-0.5); f.Float() != -0.5 || f.IsNull() {
		t.Errorf("FloatValue(-0.5): %v, null %v", f.Float(), f.IsNull())
	}
}

// TestEqualCases: Equal by content, whatever the pointers: integers by
// value (every low bit too), the same bytes or kids at one address or
// two, nil and empty alike, null and empty apart, kids compared deeply.
func TestEqualCases(t *testing.T) {
	b1, b2 := []byte("abc"), []byte("abc")
	kids := func(vs ...codec.Value) codec.Value { return codec.KidsValue(vs) }
	shared := kids(codec.IntValue(1), codec.BytesValue(b1))
	cases := []struct {
		a, b codec.Value
		want bool
	}{
		{codec.IntValue(7), codec.IntValue(7), true},
		{codec.IntValue(-1), codec.IntValue(-1), true},
		{codec.IntValue(-1), codec.IntValue(-2), false},
		{codec.IntValue(0), codec.Value{}, true},
		{codec.IntValue(1), codec.BytesValue(b1), false},
		{codec.BytesValue(b1), codec.BytesValue(b1), true},
		{codec.BytesValue(b1), codec.BytesValue(b2), true},
		{codec.BytesValue(b1), codec.BytesValue(b1[:2]), false},
		{codec.BytesValue([]byte{}), codec.Value{}, true},
		{codec.NullValue(), codec.Value{}, false},
		{codec.NullValue(), codec.NullValue(), true},
		{shared, shared, true},
		{shared, kids(codec.IntValue(1), codec.BytesValue(b2)), true},
		{shared, kids(codec.IntValue(2), codec.BytesValue(b2)), false},
		{shared, kids(codec.IntValue(1)), false},
	}
	for i, c := range cases {
		if got := codec.Equal(&c.a, &c.b); got != c.want {
			t.Errorf("case %d: Equal = %v, want %v", i, got, c.want)
		}
		if got := codec.Equal(&c.b, &c.a); got != c.want {
			t.Errorf("case %d reversed: Equal = %v, want %v", i, got, c.want)
		}
	}
}
