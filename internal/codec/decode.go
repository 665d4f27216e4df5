package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

type pathElem struct {
	name string
	idx  int32
}

// placed is a decode error and the row it is set on.
type placed struct {
	de  *wire.DecodeError
	row span.ID
}

type decoder struct {
	c *Codec
	r wire.Reader
	// t gets the rows (nil when spans are off); base is added to the
	// reader's offsets to make row offsets (a record key or value read
	// from its own bytes).
	t       *span.Tree
	base    int
	sample  bool
	bodyCat span.Category
	path    []pathElem
	pathBuf [2]pathElem // only the frame's size prefix pushes a path element
	// vals is the unused rest of the current Value slab; next is the size
	// of the slab after it.
	vals []Value
	next int
	// bud bounds the decode; depth is the current struct nesting and
	// maxDepth its limit.
	bud      *budget.Budget
	depth    int
	maxDepth int
	// topic is the last topic name read, for the records that follow.
	topic []byte
	// errs are the errors set on rows, so that an error is set once and
	// its path can be the row's.
	errs []placed
	// noValues is set when only the span tree is wanted: Values then
	// come from scratch, a stack reused as structs and arrays end (sp is
	// its top), and nothing is kept.
	noValues bool
	// opaqueRecords leaves record batches undecoded (Options.OpaqueRecords).
	opaqueRecords bool
	scratch       []Value
	sp            int
	// body is the body's plan, when the header found it in the frame
	// plans.
	body *plan
	// shared holds this decode's integer arrays by their bytes
	// (decode_shared.go); a pooled decoder keeps it, emptied.
	shared *sharedCache
}

func (c *Codec) newDecoder(b []byte, opts Options, cat span.Category) *decoder {
	d, _ := decoderPool.Get().(*decoder)
	if d == nil {
		d = &decoder{}
	}
	// A pooled decoder has been reset by free (which keeps its scratch,
	// nothing of which is read, the unused rest of its Value slab, zeroed
	// and never handed out, and its emptied integer-array cache), and a
	// new one is zero: only what this decode sets is set.
	d.c, d.r, d.sample, d.bodyCat, d.bud, d.maxDepth = c, wire.Reader{B: b}, opts.Sample, cat, opts.Budget, opts.Budget.Depth()
	d.path = d.pathBuf[:0]
	d.noValues = opts.NoValues && opts.Spans
	d.opaqueRecords = opts.OpaqueRecords
	if opts.Spans {
		d.t = opts.Tree
		if d.t == nil {
			d.t = &span.Tree{}
		}
		d.t.Reset(b)
		d.t.Reg, d.t.Sample = c.Reg, opts.Sample
	}
	return d
}

// generalOnly makes the decoder take the general path for every field
// (tests set it, to check that the fast paths build the same trees and
// values).
var generalOnly bool

// decoderPool keeps decoders (and their scratch Values) for the next
// decode, so that a loop over many small frames does not allocate one
// each.
var decoderPool sync.Pool

// free gives d back to the pool. Values it handed out (in a decode with
// values) stay with the caller; d no longer refers to them, only to the
// rest of their slab that it did not hand out, which the next decode
// carves from (so that a loop over many small frames does not start a
// slab for each).
func (d *decoder) free() {
	clear(d.errs)
	if d.shared != nil {
		d.shared.reset()
	}
	*d = decoder{scratch: d.scratch, errs: d.errs[:0], vals: d.vals, next: d.next, shared: d.shared}
	decoderPool.Put(d)
}

// treeNodes returns the nodes of this frame's own tree so far (inflated
// records are trees of their own).
func (d *decoder) treeNodes() int64 { return int64(d.t.Len()) }

// done adds this decode's tree nodes to the budget.
func (d *decoder) done() {
	if d.bud != nil && d.t != nil {
		d.bud.TreeNodes += d.treeNodes()
	}
}

// Small Value slices come from slabs that grow from firstSlab to maxSlab
// values; larger ones are allocated exactly.
const (
	firstSlab = 16
	maxSlab   = 256
	slabLimit = 16
)

// values returns n zeroed Values for the Kids of a struct (its fields) or of
// an array. Small requests are carved from a slab shared by the whole
// decode, so a message of thousands of small structs and arrays costs a few
// allocations instead of one each. Each slice is capped at its length, so
// appending to it never overwrites a neighbour.
func (d *decoder) values(n int) []Value {
	if d.noValues {
		if d.sp+n > len(d.scratch) {
			// Slices already handed out keep the old array.
			d.scratch, d.sp = make([]Value, max(2*len(d.scratch), n, 64)), 0
		}
		// Not cleared: nothing reads these values (the header's, which
		// are read, are cleared by specHeader).
		s := d.scratch[d.sp : d.sp+n : d.sp+n]
		d.sp += n
		return s
	}
	if n > slabLimit {
		return make([]Value, n)
	}
	if n > len(d.vals) {
		size := max(d.next, firstSlab)
		d.next = min(size*2, maxSlab)
		d.vals = make([]Value, size)
	}
	s := d.vals[:n:n]
	d.vals = d.vals[n:]
	return s
}

func (d *decoder) push(name string, idx int32) { d.path = append(d.path, pathElem{name, idx}) }
func (d *decoder) pop()                        { d.path = d.path[:len(d.path)-1] }

func (d *decoder) pathString() string {
	var b strings.Builder
	for i, p := range d.path {
		if i > 0 && p.idx < 0 {
			b.WriteByte('.')
		}
		if p.idx >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(int(p.idx)))
			b.WriteByte(']')
			continue
		}
		b.WriteString(p.name)
	}
	return b.String()
}

// within prefixes the path of a decode error returned from inside field
// name (or array element idx when idx >= 0). Paths are built while an
// error unwinds, so the hot path keeps no path stack; only the frame's
// size prefix uses push/pop. Each call stands for one row of the span
// tree, so that the path is the one [span.Tree.Path] gives the row the
// error is set on (which replaces it when there is a tree).
func within(err error, name string, idx int32) error {
	if de, ok := err.(*wire.DecodeError); ok {
		de.Path = prependPath(de.Path, name, idx)
	}
	return err
}

// prependPath puts one path element in front of path: "A" + "B" is "A.B",
// "A" + "[0].B" is "A[0].B", "[1]" + "B" is "[1].B".
func prependPath(path, name string, idx int32) string {
	seg := name
	if idx >= 0 {
		seg = "[" + strconv.Itoa(int(idx)) + "]"
	}
	switch {
	case path == "":
		return seg
	case path[0] == '[':
		return seg + path
	}
	return seg + "." + path
}

// fail wraps err with the current offset context and sets it on row n
// (unless the error is already set on a row).
func (d *decoder) fail(n span.ID, off int, err error) error {
	var de *wire.DecodeError
	if !errors.As(err, &de) {
		de = &wire.DecodeError{Offset: off, Path: d.pathString(), Err: err}
	}
	d.place(de, n)
	return de
}

// place sets de on row n, unless it is set on a row already.
func (d *decoder) place(de *wire.DecodeError, n span.ID) {
	if d.t == nil || n == span.None {
		return
	}
	for _, p := range d.errs {
		if p.de == de {
			return
		}
	}
	d.errs = append(d.errs, placed{de, n})
	if a := d.t.Extra(n, true); a.Err == nil {
		a.Err = de
	}
}

// errRow returns the row err is set on, or span.None.
func (d *decoder) errRow(err error) span.ID {
	var de *wire.DecodeError
	if !errors.As(err, &de) {
		return span.None
	}
	for _, p := range d.errs {
		if p.de == de {
			return p.row
		}
	}
	return span.None
}

// node adds a row under parent at reader offset off (nothing when spans
// are off).
func (d *decoder) node(parent span.ID, desc *span.Desc, off int, cat span.Category) span.ID {
	if d.t == nil {
		return span.None
	}
	return d.t.Add(parent, desc, d.base+off, cat)
}

// setLen sets row n's length.
func (d *decoder) setLen(n span.ID, l int) {
	if n != span.None {
		d.t.Nodes[n].Len = int32(l)
	}
}

// extra returns row n's extras.
func (d *decoder) extra(n span.ID) *span.Aux { return d.t.Extra(n, true) }

// DecodeBody decodes a message body (no frame, no header) at version
// v. With opts.Spans it returns the body's span tree, whose root is the
// body; the path of an error is then the message name and [span.Tree.Path]
// of the row the error is set on ("M" for the root, "M.Topics[0]" below).
func (c *Codec) DecodeBody(m *schema.Message, v int16, b []byte, opts Options) (Value, *span.Tree, error) {
	p, err := c.plan(m, v)
	if err != nil {
		return Value{}, nil, &wire.DecodeError{Offset: 0, Path: m.Name, Err: fmt.Errorf("%w: %v", wire.ErrVersion, err)}
	}
	cat := span.CatRequestBody
	if m.Type == schema.TypeResponse {
		cat = span.CatResponseBody
	}
	d := c.newDecoder(b, opts, cat)
	root := span.None
	if d.t != nil {
		_, body := c.msgDescs(m, v)
		root = d.t.Add(span.None, body, 0, cat)
	}
	var out Value
	err = d.structBody(p, &out, root)
	d.done()
	if err == nil && d.r.Remaining() > 0 {
		err = d.fail(root, d.r.Off, fmt.Errorf("%w: %d bytes after the end of the body", wire.ErrTrailing, d.r.Remaining()))
	}
	if err != nil {
		err = within(err, m.Name, -1)
	}
	if d.noValues {
		out = Value{}
	}
	if root != span.None {
		d.setLen(root, d.r.Off)
		if err != nil {
			d.finish(root, len(b), err)
			if row := d.errRow(err); row != span.None {
				err.(*wire.DecodeError).Path = prependPath(d.t.Path(row), m.Name, -1)
			}
		}
	}
	t := d.t
	d.free()
	return out, t, err
}

func (d *decoder) structBody(p *plan, out *Value, parent span.ID) error {
	sp := d.sp
	err := d.structInto(p, out, parent, d.values(len(p.all)))
	if d.noValues {
		d.sp = sp
	}
	return err
}

// structInto decodes a struct whose Kids (fields) are the given zeroed
// slice, within the nesting limit.
func (d *decoder) structInto(p *plan, out *Value, parent span.ID, fields []Value) error {
	if d.depth >= d.maxDepth {
		if d.maxDepth <= 0 { // a decoder made without newDecoder
			d.maxDepth = d.bud.Depth()
			return d.structInto(p, out, parent, fields)
		}
		return d.fail(parent, d.r.Off, fmt.Errorf("%w: structs nested more than %d levels deep (a spec whose struct holds itself?)", budget.ErrDepth, d.maxDepth))
	}
	d.depth++
	err := d.structFields(p, out, parent, fields)
	d.depth--
	return err
}

func (d *decoder) structFields(p *plan, out *Value, parent span.ID, fields []Value) error {
	out.setKids(fields)
	if !d.noValues {
		for _, fp := range p.setDefaults {
			fields[fp.index] = fp.def
		}
	}
	if generalOnly {
		// Every field on the general path (tests compare the program's
		// trees and values with these).
		for _, fp := range p.wire {
			if err := d.field(fp, &fields[fp.index], parent); err != nil {
				return within(err, fp.f.Name, -1)
			}
		}
		return d.structTags(p, out, parent)
	}
	// The plan's program (decode_program.go).
	for i := range p.dec {
		op := &p.dec[i]
		fp := op.fp
		switch op.code {
		case decRun:
			if d.intRun(op.run, op.size, fields, parent) {
				continue
			}
			// Some of the run's bytes are missing: field by field, which
			// builds the rows up to the error and the error.
			for _, fp := range op.run {
				if err := d.field(fp, &fields[fp.index], parent); err != nil {
					return within(err, fp.f.Name, -1)
				}
			}
			continue
		case decArray:
			var ok bool
			var err error
			if d.t != nil {
				ok, err = d.arrayField(fp, &fields[fp.index], parent)
			} else {
				ok, err = d.arrayValue(fp, &fields[fp.index])
			}
			if ok {
				if err != nil {
					return within(err, fp.f.Name, -1)
				}
				continue
			}
		case decBytes:
			if d.bytesField(fp, &fields[fp.index], parent) {
				continue
			}
		case decStruct:
			if err := d.structValue(fp, &fields[fp.index], parent); err != nil {
				return within(err, fp.f.Name, -1)
			}
			continue
		case decUUID:
			if d.uuidValue(fp, &fields[fp.index], parent) {
				continue
			}
		}
		if err := d.field(fp, &fields[fp.index], parent); err != nil {
			return within(err, fp.f.Name, -1)
		}
	}
	if p.flexible {
		// Most structs have no tagged fields: a count of 0 is one row.
		if off := d.r.Off; off < len(d.r.B) && d.r.B[off] == 0 {
			d.r.Off++
			if t := d.t; t != nil {
				n, _ := t.AddRows(1)
				t.Nodes[n].Set(parent, span.None, descStructTaggedID, int32(d.base+off), 1, -1, span.CatTagged, span.ValInt, 0)
				t.LinkKids(parent, n, n)
			}
			return nil
		}
		return d.tags(p, out, parent, descStructTagged)
	}
	return nil
}

// structTags decodes a struct's tagged-field section, if it has one, on
// the general path.
func (d *decoder) structTags(p *plan, out *Value, parent span.ID) error {
	if p.flexible {
		return d.tags(p, out, parent, descStructTagged)
	}
	return nil
}

// intRun reads a run of fixed-width integer and bool fields (size bytes
// in all) into their slots of fields, with a row each under parent, when
// all their bytes are there; otherwise it returns false and the caller
// takes the general path (which also builds the error).
func (d *decoder) intRun(run []*fieldPlan, size int, fields []Value, parent span.ID) bool {
	off := d.r.Off
	b := d.r.B[off:]
	if len(b) < size {
		return false
	}
	d.r.Off = off + size
	if d.t == nil {
		for _, fp := range run {
			fields[fp.index].setInt(fixedAt(fp.kind, b))
			b = b[fp.intSize:]
		}
		return true
	}
	t := d.t
	first, _ := t.AddRows(len(run))
	rows := t.Nodes[first : int(first)+len(run)]
	off += d.base
	cat := d.bodyCat
	for j, fp := range run {
		v := fixedAt(fp.kind, b)
		val := span.ValInt
		if fp.kind == schema.KindBool {
			val = span.ValBool
		}
		fields[fp.index].setInt(v)
		rows[j].Set(parent, first+span.ID(j)+1, fp.descID, int32(off), int32(fp.intSize), -1, cat, val, v)
		off += fp.intSize
		b = b[fp.intSize:]
	}
	last := first + span.ID(len(run)) - 1
	rows[len(run)-1].Next = span.None
	t.LinkKids(parent, first, last)
	return true
}

// fixedAt returns the fixed-width integer or bool of kind k at the start
// of b (the caller checked its bytes are there); a bool is 0 or 1.
func fixedAt(k schema.Kind, b []byte) int64 {
	switch k {
	case schema.KindBool:
		if b[0] != 0 {
			return 1
		}
		return 0
	case schema.KindInt8:
		return int64(int8(b[0]))
	case schema.KindInt16:
		return int64(int16(binary.BigEndian.Uint16(b)))
	case schema.KindUint16:
		return int64(binary.BigEndian.Uint16(b))
	case schema.KindInt32:
		return int64(int32(binary.BigEndian.Uint32(b)))
	case schema.KindUint32:
		return int64(binary.BigEndian.Uint32(b))
	}
	return int64(binary.BigEndian.Uint64(b))
}

func (d *decoder) field(fp *fieldPlan, out *Value, parent span.ID) error {
	start := d.r.Off
	n := d.node(parent, fp.desc, start, d.bodyCat)
	err := d.value(fp, fp.kind, fp.nullable, out, n)
	d.setLen(n, d.r.Off-start)
	return err
}

// value decodes one value of kind k: the field's own kind, or its element
// kind inside an array.
func (d *decoder) value(fp *fieldPlan, k schema.Kind, nullable bool, out *Value, n span.ID) error {
	start := d.r.Off
	var err error
	switch k {
	case schema.KindBool:
		var v int8
		if v, err = d.r.Int8(); err == nil {
			b := int64(0)
			if v != 0 {
				b = 1
			}
			out.setInt(b)
			if n != span.None {
				row := &d.t.Nodes[n]
				row.Val, row.Int = span.ValBool, b
			}
		}
	case schema.KindInt8:
		var v int8
		v, err = d.r.Int8()
		out.setInt(int64(v))
		d.intNode(n, int64(v))
	case schema.KindInt16:
		var v int16
		v, err = d.r.Int16()
		out.setInt(int64(v))
		d.intNode(n, int64(v))
	case schema.KindUint16:
		var v uint16
		v, err = d.r.Uint16()
		out.setInt(int64(v))
		d.intNode(n, int64(v))
	case schema.KindInt32:
		var v int32
		v, err = d.r.Int32()
		out.setInt(int64(v))
		d.intNode(n, int64(v))
	case schema.KindUint32:
		var v uint32
		v, err = d.r.Uint32()
		out.setInt(int64(v))
		d.intNode(n, int64(v))
	case schema.KindInt64:
		var v int64
		v, err = d.r.Int64()
		out.setInt(v)
		d.intNode(n, v)
	case schema.KindFloat64:
		var f float64
		f, err = d.r.Float64()
		out.setInt(int64(math.Float64bits(f)))
		if n != span.None {
			d.t.Nodes[n].SetFloat(f)
		}
	case schema.KindUUID:
		var u []byte
		u, err = d.r.Span(16)
		out.setBytes(u)
		if n != span.None {
			row := &d.t.Nodes[n]
			row.Val = span.ValUUID
			if err == nil {
				row.VOff, row.VLen = int32(d.base+start), 16
			}
		}
	case schema.KindString, schema.KindBytes:
		return d.lengthPrefixed(fp, k, nullable, out, n)
	case schema.KindRecords:
		return d.records(fp, nullable, out, n)
	case schema.KindArray:
		return d.array(fp, out, n)
	case schema.KindStruct:
		return d.structField(fp, out, n)
	default:
		return d.fail(n, start, fmt.Errorf("cannot decode kind %s", k))
	}
	if err != nil {
		return d.fail(n, start, fmt.Errorf("%w: %s needs %d bytes, %d left", err, k, k.FixedSize(), d.r.Remaining()))
	}
	return nil
}

func (d *decoder) intNode(n span.ID, v int64) {
	if n != span.None {
		row := &d.t.Nodes[n]
		row.Val, row.Int = span.ValInt, v
	}
}

func (d *decoder) lengthPrefixed(fp *fieldPlan, k schema.Kind, nullable bool, out *Value, n span.ID) error {
	start := d.r.Off
	l, raw, enc, err := d.readLength(fp.compact, k == schema.KindString)
	if n != span.None {
		row := &d.t.Nodes[n]
		row.Val, row.Enc, row.Prefix = span.ValBytes, enc, raw
		if k == schema.KindString {
			row.Val = span.ValString
		}
	}
	if err != nil {
		return d.fail(n, start, fmt.Errorf("%w: length prefix of %s", err, k))
	}
	switch {
	case l < -1:
		return d.fail(n, start, fmt.Errorf("%w: %s length %d", wire.ErrNegativeLength, k, l))
	case l == -1:
		if !nullable {
			return d.fail(n, start, fmt.Errorf("%w: %s is not nullable at this version", wire.ErrNull, k))
		}
		out.setNull()
		if n != span.None {
			d.t.Nodes[n].Null = true
		}
		return nil
	}
	vs := d.r.Off
	b, err := d.r.Span(int(min(l, math.MaxInt32)))
	if err != nil {
		return d.fail(n, start, fmt.Errorf("%w: %s of %d bytes, only %d left in the frame", wire.ErrTruncated, k, l, d.r.Remaining()))
	}
	out.setBytes(b)
	if n != span.None {
		row := &d.t.Nodes[n]
		row.VOff, row.VLen = int32(d.base+vs), int32(len(b))
	}
	if fp.topicName {
		d.topic = b
	}
	return nil
}

// batchNotes are the notes of batch counts.
var batchNotes = english.NewCounts("batch", 64)

func (d *decoder) records(fp *fieldPlan, nullable bool, out *Value, n span.ID) error {
	start := d.r.Off
	l, raw, enc, err := d.readLength(fp.compact, false)
	ln := d.node(n, descRecordsLength[enc], start, d.bodyCat)
	if ln != span.None {
		row := &d.t.Nodes[ln]
		row.Val, row.Int, row.Enc, row.Len = span.ValCount, raw, enc, int32(d.r.Off-start)
		row = &d.t.Nodes[n]
		row.Val, row.Enc, row.Prefix = span.ValRecords, enc, raw
	}
	if err != nil {
		return d.fail(n, start, fmt.Errorf("%w: length prefix of records", err))
	}
	switch {
	case l < -1:
		return d.fail(n, start, fmt.Errorf("%w: records length %d", wire.ErrNegativeLength, l))
	case l == -1:
		if !nullable {
			return d.fail(n, start, fmt.Errorf("%w: records are not nullable at this version", wire.ErrNull))
		}
		out.setNull()
		if n != span.None {
			d.t.Nodes[n].Null = true
		}
		return nil
	}
	if l > int64(d.r.Remaining()) {
		return d.fail(n, start, fmt.Errorf("%w: records of %d bytes, only %d left in the frame", wire.ErrTruncated, l, d.r.Remaining()))
	}
	bodyStart := d.r.Off
	end := bodyStart + int(l)
	out.setBytes(d.r.B[bodyStart:end:end])
	if n != span.None {
		row := &d.t.Nodes[n]
		row.VOff, row.VLen = int32(d.base+bodyStart), int32(l)
	}
	if d.opaqueRecords {
		d.r.Off = end
		return nil
	}
	rd := records.Decoder{R: &wire.Reader{B: d.r.B[:end], Off: bodyStart}, Decompress: d.c.Decompress,
		DecompressLimit: d.c.DecompressLimit, Budget: d.bud, AllowPartial: d.bodyCat == span.CatResponseBody, Contents: d.recordContents()}
	if d.base == 0 {
		rd.Tree = d.t
	}
	d.r.Off = end
	if err := rd.Decode(n); err != nil {
		var de *wire.DecodeError
		if row := rd.ErrRow(); row != span.None && errors.As(err, &de) {
			d.place(de, row)
		}
		return d.fail(n, bodyStart, err)
	}
	if n != span.None {
		d.extra(n).Note = batchNotes.Of(int64(rd.Batches))
	}
	return nil
}

// checkBudget stops the decode when the frame's own tree has more nodes
// than the budget allows or the budget's context is done.
func (d *decoder) checkBudget(n span.ID, off int) error {
	if err := d.bud.Err(); err != nil {
		return d.fail(n, off, err)
	}
	if d.t != nil && d.bud.TreeNodes+d.treeNodes() > d.bud.MaxTreeNodes {
		return d.fail(n, off, d.bud.Spend("span-node budget of %d nodes for this frame's tree spent at offset %d; the rest of the frame is shown undecoded", d.bud.MaxTreeNodes, off))
	}
	return nil
}

func (d *decoder) array(fp *fieldPlan, out *Value, n span.ID) error {
	start := d.r.Off
	count, raw, enc, err := d.readLength(fp.compact, false)
	if n != span.None {
		// A count that did not read keeps the plain description, not
		// "0 elements follow".
		desc, about := descLength[enc], false
		if err == nil {
			if desc = countDesc(enc, count, d.sample); desc == nil {
				desc, about = descLength[enc], true
			}
		}
		ln := d.t.AddLeaf(n, desc, d.base+start, d.r.Off-start, d.bodyCat, span.ValCount, raw)
		row := &d.t.Nodes[ln]
		row.Enc = enc
		if about {
			d.extra(ln).About = d.countAbout(count)
		}
		row = &d.t.Nodes[n]
		row.Val, row.Int = span.ValArray, max(count, 0)
	}
	if err != nil {
		return d.fail(n, start, fmt.Errorf("%w: array count", err))
	}
	if count < -1 {
		return d.fail(n, start, fmt.Errorf("%w: array count %d", wire.ErrNegativeLength, count))
	}
	if count == -1 {
		if !fp.nullable {
			return d.fail(n, start, fmt.Errorf("%w: array is not nullable at this version", wire.ErrNull))
		}
		out.setNull()
		if n != span.None {
			d.t.Nodes[n].Null = true
		}
		return nil
	}
	if count*int64(fp.elemMin) > int64(d.r.Remaining()) { // count > Remaining/elemMin, without a division
		return d.fail(n, start, fmt.Errorf("%w: %d elements of at least %d bytes, %d bytes left", wire.ErrCountTooLarge, count, fp.elemMin, d.r.Remaining()))
	}
	return d.arrayElems(fp, count, out, n)
}

// bytesField decodes a string or bytes field (and its row) that is not
// null, when its length prefix is there in its short form (one-byte
// uvarint, int16 or int32) and so are its bytes: what field and
// lengthPrefixed do, in one call. Otherwise it returns false, having read
// and added nothing, and the caller takes the general path (which builds
// the error).
func (d *decoder) bytesField(fp *fieldPlan, out *Value, parent span.ID) bool {
	start := d.r.Off
	b := d.r.B[start:]
	var l, raw int64
	var hl int
	var enc span.Enc
	switch {
	case fp.compact:
		if len(b) == 0 || b[0] >= 0x80 {
			return false
		}
		raw, hl, enc = int64(b[0]), 1, span.EncCompact
		l = raw - 1
	case fp.kind == schema.KindString:
		if len(b) < 2 {
			return false
		}
		raw, hl, enc = int64(int16(binary.BigEndian.Uint16(b))), 2, span.EncInt16
		l = raw
	default:
		if len(b) < 4 {
			return false
		}
		raw, hl, enc = int64(int32(binary.BigEndian.Uint32(b))), 4, span.EncInt32
		l = raw
	}
	if l < 0 || l > int64(len(b)-hl) {
		return false
	}
	vs := start + hl
	end := vs + int(l)
	out.setBytes(d.r.B[vs:end:end])
	if fp.topicName {
		d.topic = out.Bytes()
	}
	d.r.Off = end
	if d.t != nil {
		t := d.t
		n, _ := t.AddRows(1)
		row := &t.Nodes[n]
		val := span.ValBytes
		if fp.kind == schema.KindString {
			val = span.ValString
		}
		row.Set(parent, span.None, fp.descID, int32(d.base+start), int32(end-start), -1, d.bodyCat, val, 0)
		row.Enc, row.Prefix, row.VOff, row.VLen = enc, raw, int32(d.base+vs), int32(l)
		t.LinkKids(parent, n, n)
	}
	return true
}

// arrayField decodes an array field with its rows when its length prefix
// is there in its short form (one-byte uvarint, or int32) and its count
// is plausible and has a descriptor: the rows field, value and array
// would add, added in one call. Otherwise (null, too large, truncated)
// it returns false, having read and added nothing, and the caller takes
// the general path (which builds the error).
func (d *decoder) arrayField(fp *fieldPlan, out *Value, parent span.ID) (bool, error) {
	start := d.r.Off
	b := d.r.B[start:]
	var count, raw int64
	hl, enc := 4, span.EncInt32
	if fp.compact {
		if len(b) == 0 || b[0] >= 0x80 {
			return false, nil
		}
		raw, hl, enc = int64(b[0]), 1, span.EncCompact
		count = raw - 1
	} else {
		if len(b) < 4 {
			return false, nil
		}
		raw = int64(int32(binary.BigEndian.Uint32(b)))
		count = raw
	}
	if count < 0 || count*int64(fp.elemMin) > int64(len(b)-hl) {
		return false, nil
	}
	desc := countDesc(enc, count, d.sample)
	if desc == nil {
		return false, nil
	}
	t := d.t
	off := d.base + start
	// The array's row and its count's, in one step.
	n, _ := t.AddRows(2)
	ln := n + 1
	rows := t.Nodes[n : n+2]
	rows[0].Set(parent, span.None, fp.descID, int32(off), 0, -1, d.bodyCat, span.ValArray, count)
	rows[0].First, rows[0].Last = ln, ln
	rows[1].Set(n, span.None, desc.ID(), int32(off), int32(hl), -1, d.bodyCat, span.ValCount, raw)
	rows[1].Enc = enc
	t.LinkKids(parent, n, n)
	d.r.Off = start + hl
	err := d.arrayElems(fp, count, out, n)
	t.Nodes[n].Len = int32(d.r.Off - start)
	return true, err
}

// arrayElems decodes the count elements of an array whose count was read
// and checked, under the array's row n.
func (d *decoder) arrayElems(fp *fieldPlan, count int64, out *Value, n span.ID) error {
	if n != span.None && !generalOnly && d.intElemRows(fp, int(count), n, out) {
		return nil
	}
	if d.noValues {
		if fp.elemKind == schema.KindStruct && n != span.None && !generalOnly {
			return d.structElemsNoValues(fp, int(count), n)
		}
		return d.elemsNoValues(fp, int(count), n)
	}
	if n == span.None && fp.elemKind == schema.KindStruct && !generalOnly {
		return d.structElems(fp, int(count), out)
	}
	if n == span.None && count > 0 && count <= maxSharedInts && !generalOnly && d.sharedIntElems(fp.elemKind, int(count), out) {
		return nil
	}
	out.setKids(d.values(int(count)))
	// The Kids (fields) of all struct elements come from one exact block.
	var block []Value
	nf := 0
	if fp.elemKind == schema.KindStruct {
		nf = len(fp.sub.all)
		if count > 0 && nf > 0 {
			block = make([]Value, int(count)*nf)
		}
	}
	if n == span.None && d.intElems(fp.elemKind, out.Kids()) {
		return nil
	}
	for i := range out.Kids() {
		var fields []Value
		if block != nil {
			fields = block[i*nf : (i+1)*nf : (i+1)*nf]
		}
		if err := d.elem(fp, i, &out.Kids()[i], fields, n); err != nil {
			return err
		}
	}
	return nil
}

// intElemRows decodes an array of fixed-width integers with rows in one
// loop when every element is there and the budget has room for all of
// them (otherwise the general path decodes them and builds the error).
func (d *decoder) intElemRows(fp *fieldPlan, count int, n span.ID, out *Value) bool {
	var size int
	switch fp.elemKind {
	case schema.KindInt8, schema.KindInt16, schema.KindUint16, schema.KindInt32, schema.KindUint32, schema.KindInt64:
		size = fp.elemKind.FixedSize()
	default:
		return false
	}
	b := d.r.B[d.r.Off:]
	if count*size > len(b) {
		return false
	}
	if d.bud != nil && (d.bud.Err() != nil || d.bud.TreeNodes+d.treeNodes()+int64(count) > d.bud.MaxTreeNodes) {
		return false
	}
	if !d.noValues {
		out.setKids(d.values(count))
	}
	if count == 0 {
		return true
	}
	k := fp.elemKind
	off := d.base + d.r.Off
	if d.noValues {
		d.t.AddIntElems(n, fp.elemDesc, b, off, size, count, d.bodyCat, k != schema.KindUint16 && k != schema.KindUint32)
	} else {
		first := d.t.AddElems(n, fp.elemDesc, off, size, count, d.bodyCat, span.ValInt)
		rows := d.t.Nodes[first : int(first)+count]
		kids := out.Kids()[:count]
		for i := range rows {
			v := intAt(k, b, i)
			rows[i].Int = v
			kids[i].setInt(v)
		}
	}
	d.r.Off += count * size
	return true
}

// intAt returns integer i of an array of fixed-width integers of kind k
// (the caller checked the bytes are there).
func intAt(k schema.Kind, b []byte, i int) int64 {
	switch k {
	case schema.KindInt8:
		return int64(int8(b[i]))
	case schema.KindInt16:
		return int64(int16(binary.BigEndian.Uint16(b[2*i:])))
	case schema.KindUint16:
		return int64(binary.BigEndian.Uint16(b[2*i:]))
	case schema.KindInt32:
		return int64(int32(binary.BigEndian.Uint32(b[4*i:])))
	case schema.KindUint32:
		return int64(binary.BigEndian.Uint32(b[4*i:]))
	}
	return int64(binary.BigEndian.Uint64(b[8*i:]))
}

// elemsNoValues decodes count array elements into rows only: every
// element's value goes to the same scratch slot.
func (d *decoder) elemsNoValues(fp *fieldPlan, count int, n span.ID) error {
	sp := d.sp
	defer func() { d.sp = sp }()
	slot := d.values(1)
	nf := 0
	if fp.elemKind == schema.KindStruct {
		nf = len(fp.sub.all)
	}
	for i := 0; i < count; i++ {
		mark := d.sp
		var fields []Value
		if nf > 0 {
			fields = d.values(nf)
		}
		slot[0] = Value{}
		err := d.elem(fp, i, &slot[0], fields, n)
		d.sp = mark
		if err != nil {
			return err
		}
	}
	return nil
}

// elem decodes element i of an array into out (fields are a struct
// element's zeroed Kids) and a row under the array's row n.
func (d *decoder) elem(fp *fieldPlan, i int, out *Value, fields []Value, n span.ID) error {
	es := d.r.Off
	if d.bud != nil {
		if err := d.checkBudget(n, es); err != nil {
			return err
		}
	}
	en := d.node(n, fp.elemDesc, es, d.bodyCat)
	if en != span.None {
		d.t.Nodes[en].Index = int32(i)
	}
	var err error
	if fp.elemKind == schema.KindStruct {
		if en != span.None {
			d.t.Nodes[en].Val = span.ValStruct
		}
		err = d.structInto(fp.sub, out, en, fields)
	} else {
		err = d.value(fp, fp.elemKind, false, out, en)
	}
	d.setLen(en, d.r.Off-es)
	if err != nil {
		return within(err, "", int32(i))
	}
	return nil
}

// readLength reads a string/bytes/array length prefix. It returns the
// length (-1 for null) and the raw prefix value.
func (d *decoder) readLength(compact bool, classic16 bool) (n int64, raw int64, enc span.Enc, err error) {
	if compact {
		u, err := d.r.Uvarint()
		return int64(u) - 1, int64(u), span.EncCompact, err
	}
	if classic16 {
		v, err := d.r.Int16()
		return int64(v), int64(v), span.EncInt16, err
	}
	v, err := d.r.Int32()
	return int64(v), int64(v), span.EncInt32, err
}

func lengthType(e span.Enc) string {
	switch e {
	case span.EncCompact:
		return "uvarint"
	case span.EncInt16:
		return "int16"
	}
	return "int32"
}

// intElems reads an array of fixed-width integers in one loop when no span
// nodes are wanted and every element is present; otherwise it returns false
// and the caller takes the general path (which also builds the errors).
func (d *decoder) intElems(k schema.Kind, elems []Value) bool {
	size := 0
	switch k {
	case schema.KindInt8, schema.KindInt16, schema.KindUint16, schema.KindInt32, schema.KindUint32, schema.KindInt64:
		size = k.FixedSize()
	default:
		return false
	}
	b := d.r.B[d.r.Off:]
	if len(elems)*size > len(b) {
		return false
	}
	switch k {
	case schema.KindInt8:
		for i := range elems {
			elems[i].setInt(int64(int8(b[i])))
		}
	case schema.KindInt16:
		for i := range elems {
			elems[i].setInt(int64(int16(binary.BigEndian.Uint16(b[2*i:]))))
		}
	case schema.KindUint16:
		for i := range elems {
			elems[i].setInt(int64(binary.BigEndian.Uint16(b[2*i:])))
		}
	case schema.KindInt32:
		for i := range elems {
			elems[i].setInt(int64(int32(binary.BigEndian.Uint32(b[4*i:]))))
		}
	case schema.KindUint32:
		for i := range elems {
			elems[i].setInt(int64(binary.BigEndian.Uint32(b[4*i:])))
		}
	case schema.KindInt64:
		for i := range elems {
			elems[i].setInt(int64(binary.BigEndian.Uint64(b[8*i:])))
		}
	}
	d.r.Off += len(elems) * size
	return true
}

func (d *decoder) countAbout(count int64) string {
	switch {
	case count < 0:
		return "null"
	case count == 1 && d.sample:
		return "one sample element follows"
	case count == 1:
		return "1 element follows"
	}
	if count < int64(len(countAbouts)) {
		return countAbouts[count]
	}
	return strconv.FormatInt(count, 10) + " elements follow"
}

// countAbouts caches the notes of small array counts, which every array
// length node of a span tree carries.
var countAbouts = func() (t [256]string) {
	for i := range t {
		t[i] = strconv.Itoa(i) + " elements follow"
	}
	return t
}()

func (d *decoder) structField(fp *fieldPlan, out *Value, n span.ID) error {
	if n != span.None {
		d.t.Nodes[n].Val = span.ValStruct
	}
	if fp.nullable {
		start := d.r.Off
		var marker, raw int64 // marker < 0 means null; raw is the wire value
		if fp.tagged {
			u, err := d.r.Uvarint()
			if err != nil {
				return d.fail(n, start, err)
			}
			raw = int64(u)
			marker = raw - 1
		} else {
			v, err := d.r.Int8()
			if err != nil {
				return d.fail(n, start, fmt.Errorf("%w: presence marker", err))
			}
			marker = int64(v)
			raw = marker
		}
		desc := descPresence
		if fp.tagged {
			desc = descTaggedPresence
		}
		if mn := d.node(n, desc, start, d.bodyCat); mn != span.None {
			row := &d.t.Nodes[mn]
			row.Val, row.Int, row.Len = span.ValPresence, raw, int32(d.r.Off-start)
			if fp.tagged {
				row.Enc = span.EncCompact // uvarint: 0 null, 1 present
			}
		}
		if marker < 0 {
			out.setNull()
			if n != span.None {
				d.t.Nodes[n].Null = true
			}
			return nil
		}
	}
	return d.structBody(fp.sub, out, n)
}

// tags decodes a tagged-field section. p is nil for header sections, which
// have no known tags. Its errors are within "tagged_fields".
func (d *decoder) tags(p *plan, out *Value, parent span.ID, desc *span.Desc) error {
	start := d.r.Off
	count, err := d.r.Uvarint()
	tn := d.node(parent, desc, start, span.CatTagged)
	if tn != span.None {
		row := &d.t.Nodes[tn]
		row.Val, row.Int, row.Len = span.ValInt, int64(count), int32(d.r.Off-start)
	}
	if err != nil {
		return within(d.fail(tn, start, fmt.Errorf("%w: tagged field count", err)), "tagged_fields", -1)
	}
	if count == 0 {
		return nil
	}
	if tn != span.None { // the count becomes a child so that leaves still tile
		cn := d.t.Add(tn, descTagCount, d.base+start, span.CatTagged)
		row := &d.t.Nodes[cn]
		row.Val, row.Int, row.Len = span.ValInt, int64(count), int32(d.r.Off-start)
	}
	if int64(count) > int64(d.r.Remaining()/2) {
		err = d.fail(tn, start, fmt.Errorf("%w: %d tagged fields, %d bytes left", wire.ErrCountTooLarge, count, d.r.Remaining()))
	} else {
		err = d.tagList(p, out, tn, count)
	}
	if err != nil {
		err = within(err, "tagged_fields", -1)
	}
	d.setLen(tn, d.r.Off-start)
	return err
}

// tagList decodes count tagged fields under tn (no defers: this runs for
// every struct of a flexible message). Errors of the section's framing
// are set on tn; those of a known tag's value below the tag's row.
func (d *decoder) tagList(p *plan, out *Value, tn span.ID, count uint32) error {
	last := int64(-1)
	for i := uint32(0); i < count; i++ {
		es := d.r.Off
		tag, err := d.r.Uvarint()
		if err != nil {
			return d.fail(tn, es, fmt.Errorf("%w: tag number", err))
		}
		en := d.node(tn, descTag, es, span.CatTagged)
		if tl := d.node(en, descTagNumber, es, span.CatTagged); tl != span.None {
			row := &d.t.Nodes[tl]
			row.Val, row.Int, row.Len = span.ValInt, int64(tag), int32(d.r.Off-es)
		}
		ss := d.r.Off
		size, err := d.r.Uvarint()
		if err != nil {
			return d.fail(tn, ss, fmt.Errorf("%w: tagged field size", err))
		}
		if sl := d.node(en, descTagSize, ss, span.CatTagged); sl != span.None {
			row := &d.t.Nodes[sl]
			row.Val, row.Int, row.Len = span.ValInt, int64(size), int32(d.r.Off-ss)
		}
		if int64(tag) <= last {
			return d.fail(tn, es, fmt.Errorf("%w: tag %d after tag %d", wire.ErrTagOrder, tag, last))
		}
		last = int64(tag)
		if int64(size) > int64(d.r.Remaining()) {
			return d.fail(tn, ss, fmt.Errorf("%w: tagged field of %d bytes, %d left", wire.ErrTruncated, size, d.r.Remaining()))
		}
		var fp *fieldPlan
		if p != nil {
			fp = p.byTag[tag]
		}
		vs := d.r.Off
		switch {
		case fp == nil:
			data, _ := d.r.Span(int(size))
			if !d.noValues || p == nil || p.header {
				out.addUnknown(RawTag{Tag: tag, Data: data})
			}
			if en != span.None {
				d.t.SetDesc(en, descUnknownTag)
				a := d.extra(en)
				a.Type, a.Flag = "tag "+strconv.Itoa(int(tag)), "unknown tag"
				vn := d.t.Add(en, descTagData, d.base+vs, span.CatTagged)
				row := &d.t.Nodes[vn]
				row.Val, row.VOff, row.VLen, row.Len = span.ValBytes, int32(d.base+vs), int32(size), int32(size)
			}
		case !fp.tagged:
			return d.fail(tn, es, fmt.Errorf("%w: tag %d (%s) is not valid for version %d", wire.ErrTagVersion, tag, fp.f.Name, p.version))
		default:
			if en != span.None {
				d.t.SetDesc(en, fp.tagDesc)
			}
			saved := d.r.B
			d.r.B = d.r.B[:vs+int(size)]
			// The slot holds the field's default, which may be null; the
			// decoded value replaces it entirely.
			out.Kids()[fp.index] = Value{}
			err := d.field(fp, &out.Kids()[fp.index], en)
			consumed := d.r.Off - vs
			d.r.B = saved
			if err != nil {
				// one segment for the tag's row, one for the field's
				return within(within(err, fp.f.Name, -1), fp.f.Name, -1)
			}
			if consumed != int(size) {
				d.setLen(en, d.r.Off-es)
				return within(d.fail(en, vs, fmt.Errorf("%w: %s used %d of %d bytes", wire.ErrTagSize, fp.f.Name, consumed, size)), fp.f.Name, -1)
			}
		}
		d.setLen(en, d.r.Off-es)
	}
	return nil
}

// finish repairs a partial span tree after an error: group lengths cover
// their children, and the bytes not decoded hang under the root as one
// "undecoded" leaf (its bytes as its value), so the tree still tiles the
// input.
func (d *decoder) finish(root span.ID, total int, err error) {
	t := d.t
	t.FixLen(root)
	t.ClearUnread(root)
	end := t.End(root)
	if end < total {
		u := t.Add(root, descUndecoded, end, span.CatNone)
		row := t.N(u)
		row.Val, row.VOff, row.VLen, row.Len = span.ValBytes, int32(end), int32(total-end), int32(total-end)
		t.Extra(u, true).Err = err
	}
	row := t.N(root)
	row.Len = int32(max(int(row.Len), total-int(row.Off)))
}
