package codec

import (
	"encoding/binary"

	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// decOpCode says how one step of a struct's decode program reads its
// field(s).
type decOpCode uint8

const (
	// decField reads one field on the general path.
	decField decOpCode = iota
	// decRun reads a run of fixed-width integer and bool fields with
	// one bounds check (intRun), or each on the general path when the
	// run's bytes are not all there.
	decRun
	// decArray reads an array field in one call when its prefix is
	// short (arrayField, with spans only), else on the general path.
	decArray
	// decBytes reads a string or bytes field in one call when it is not
	// null and its bytes are there (bytesField), else on the general
	// path.
	decBytes
	// decStruct reads a struct field that is not nullable, its row added
	// in one step.
	decStruct
	// decUUID reads a uuid in one step when its 16 bytes are there, else
	// on the general path.
	decUUID
)

// decOp is one step of a struct's decode program: the plan's wire fields
// grouped once, when the plan is built, into the steps structFields runs,
// so that the decode of a struct does not look again at each field's
// kind and run.
type decOp struct {
	code decOpCode
	size int          // decRun: the run's bytes
	fp   *fieldPlan   // the field (the run's first)
	run  []*fieldPlan // decRun: the run's fields
}

// decProgram returns the decode program of p's wire fields (p.runs must
// be set).
func decProgram(p *plan) []decOp {
	var ops []decOp
	for i := 0; i < len(p.wire); {
		fp := p.wire[i]
		op := decOp{code: decField, fp: fp}
		switch r := p.runs[i]; {
		case r.n != 0:
			op.code, op.size, op.run = decRun, r.size, p.wire[i:i+r.n:i+r.n]
			i += r.n
			ops = append(ops, op)
			continue
		case fp.kind == schema.KindArray:
			op.code = decArray
		case fp.kind == schema.KindString || fp.kind == schema.KindBytes:
			op.code = decBytes
		case fp.kind == schema.KindStruct && !fp.nullable && fp.sub != nil:
			op.code = decStruct
		case fp.kind == schema.KindUUID:
			op.code = decUUID
		}
		ops = append(ops, op)
		i++
	}
	return ops
}

// structElemsNoValues decodes the count struct elements of an array into
// rows only (under the array's row n): every element reads into the same
// scratch Value and fields, which nothing reads afterwards.
func (d *decoder) structElemsNoValues(fp *fieldPlan, count int, n span.ID) error {
	sp := d.sp
	fields := d.values(len(fp.sub.all))
	mark := d.sp
	t := d.t
	elemDesc := fp.elemDesc.ID()
	var slot Value
	for i := 0; i < count; i++ {
		es := d.r.Off
		if d.bud != nil {
			if err := d.checkBudget(n, es); err != nil {
				d.sp = sp
				return err
			}
		}
		en, _ := t.AddRows(1)
		t.Nodes[en].Set(n, span.None, elemDesc, int32(d.base+es), 0, int32(i), d.bodyCat, span.ValStruct, 0)
		t.LinkKids(n, en, en)
		slot = Value{}
		err := d.structInto(fp.sub, &slot, en, fields)
		d.sp = mark
		t.Nodes[en].Len = int32(d.r.Off - es)
		if err != nil {
			d.sp = sp
			return within(err, "", int32(i))
		}
	}
	d.sp = sp
	return nil
}

// structElems decodes the count struct elements of an array into
// out.Kids, without rows: the elements and all their fields come from one
// exact block (the elements first), and each element is read by its
// plan's program without the general element path's row steps.
func (d *decoder) structElems(fp *fieldPlan, count int, out *Value) error {
	nf := len(fp.sub.all)
	if count == 0 {
		out.setKids(d.values(0))
		return nil
	}
	var block []Value
	if total := count * (nf + 1); total <= blockLimit {
		block = d.slab(total)
	} else {
		block = make([]Value, total)
	}
	elems := block[:count:count]
	out.setKids(elems)
	fields := block[count:]
	for i := range elems {
		if d.bud != nil {
			if err := d.checkBudget(span.None, d.r.Off); err != nil {
				return err
			}
		}
		f := fields[i*nf : (i+1)*nf : (i+1)*nf]
		if err := d.structInto(fp.sub, &elems[i], span.None, f); err != nil {
			return within(err, "", int32(i))
		}
	}
	return nil
}

// arrayValue decodes an array field without rows when its length prefix
// is there in its short form (one-byte uvarint, or int32), not null, and
// its count plausible. Otherwise it returns false, having read nothing,
// and the caller takes the general path (which builds the error).
func (d *decoder) arrayValue(fp *fieldPlan, out *Value) (bool, error) {
	start := d.r.Off
	b := d.r.B[start:]
	var count int64
	hl := 4
	if fp.compact {
		if len(b) == 0 || b[0] >= 0x80 {
			return false, nil
		}
		count, hl = int64(b[0])-1, 1
	} else {
		if len(b) < 4 {
			return false, nil
		}
		count = int64(int32(binary.BigEndian.Uint32(b)))
	}
	if count < 0 || count*int64(fp.elemMin) > int64(len(b)-hl) {
		return false, nil
	}
	d.r.Off = start + hl
	return true, d.arrayElems(fp, count, out, span.None)
}

// descStructTaggedID is descStructTagged's number, for rows filled in one
// step.
var descStructTaggedID = descStructTagged.ID()

// structValue decodes a struct field that is not nullable into out, with
// its row under parent: what field, value and structField do.
func (d *decoder) structValue(fp *fieldPlan, out *Value, parent span.ID) error {
	start := d.r.Off
	n := span.None
	t := d.t
	if t != nil {
		n, _ = t.AddRows(1)
		t.Nodes[n].Set(parent, span.None, fp.descID, int32(d.base+start), 0, -1, d.bodyCat, span.ValStruct, 0)
		t.LinkKids(parent, n, n)
	}
	err := d.structBody(fp.sub, out, n)
	if n != span.None {
		t.Nodes[n].Len = int32(d.r.Off - start)
	}
	return err
}

// uuidValue reads a uuid field into out, with its row under parent, when
// its bytes are there; otherwise it returns false, having read nothing.
func (d *decoder) uuidValue(fp *fieldPlan, out *Value, parent span.ID) bool {
	start := d.r.Off
	b := d.r.B[start:]
	if len(b) < 16 {
		return false
	}
	out.setBytes(b[:16:16])
	d.r.Off = start + 16
	if t := d.t; t != nil {
		n, _ := t.AddRows(1)
		row := &t.Nodes[n]
		off := int32(d.base + start)
		row.Set(parent, span.None, fp.descID, off, 16, -1, d.bodyCat, span.ValUUID, 0)
		row.VOff, row.VLen = off, 16
		t.LinkKids(parent, n, n)
	}
	return true
}

// blockLimit is the most Values an array's block of struct elements and
// their fields takes from the decode's slab (larger blocks are allocated
// exactly).
const blockLimit = 64

// slab returns n (at most maxSlab) zeroed Values carved from the decode's
// slab, capped at their length.
func (d *decoder) slab(n int) []Value {
	if n > len(d.vals) {
		size := max(d.next, firstSlab, n)
		d.next = min(size*2, maxSlab)
		d.vals = make([]Value, size)
	}
	s := d.vals[:n:n]
	d.vals = d.vals[n:]
	return s
}
