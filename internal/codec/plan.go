package codec

import (
	"fmt"
	"strconv"

	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// plan is a struct resolved at one version: which fields are on the wire,
// in which encoding, with sub-plans for nested structs. Plans are built once
// per (message, version); the hot path never looks at version ranges.
type plan struct {
	s        *schema.Struct
	version  int16
	flexible bool
	all      []*fieldPlan // one per schema field, by Field.Index
	wire     []*fieldPlan // untagged fields on the wire, in order
	tagged   []*fieldPlan // fields tagged at this version, by tag
	defaults []*fieldPlan // fields not on the wire untagged: absent or tagged
	// setDefaults are the defaults that are not the zero Value: the
	// decoder writes only those into a struct's zeroed fields.
	setDefaults []*fieldPlan
	// runs[i] is the run of fixed-width integer and bool fields that
	// starts at wire[i] (n 0 when wire[i] is not one): the decoder reads
	// such a run with one bounds check.
	runs    []intRun
	byTag   map[uint32]*fieldPlan
	minSize int  // smallest possible encoding, for count checks
	header  bool // a plan of RequestHeader or ResponseHeader
	// enc is the encoder's program of this plan (encode_ops.go).
	enc encProgram
	// dec is the decoder's program of this plan's wire fields
	// (decode_program.go).
	dec []decOp
}

// intRun is a run of n consecutive fixed-width integer or bool fields of
// a plan's wire fields, size bytes in all.
type intRun struct{ n, size int }

type fieldPlan struct {
	f        *schema.Field
	index    int // f.Index, kept here to save a pointer chase per field
	kind     schema.Kind
	elemKind schema.Kind
	present  bool
	tagged   bool
	nullable bool
	compact  bool
	sub      *plan // struct, or struct elements of an array
	def      Value
	elemMin  int // smallest element encoding
	// taggedElsewhere is set for a known tag that is not tagged at this
	// version: seeing it on the wire is an error.
	taggedElsewhere bool
	// intSize is the wire size of a fixed-width integer or bool field (0
	// for other kinds), whose values must lie in [lo, hi]: the encoder
	// writes such fields without going through the general value path.
	intSize int
	lo, hi  int64
	// desc describes the field's node; elemDesc its array elements;
	// tagDesc the tag that carries it when tagged; hdrDesc its node in a
	// header (snake_case name). Made once per field (see fieldDescs).
	desc, elemDesc, tagDesc, hdrDesc *span.Desc
	descID                           uint32 // desc.ID()
	// topicName marks a string (or []string) field of entityType
	// topicName: the decoder remembers the last one read, to know the
	// topic of the records that follow.
	topicName bool
}

type planKey struct {
	s        *schema.Struct
	version  int16
	flexible bool
}

type planner struct {
	msgFlex schema.Versions
	cache   map[planKey]*plan
	descs   map[*schema.Field]*fieldDescs
	header  bool
	// fps are the field plans made so far, by what they are made of:
	// the versions of a message mostly read a field the same way, and
	// then share its plan (plans are read-only once built; they are
	// most of the codec's live heap, which every GC cycle marks).
	fps map[fpKey]*fieldPlan
}

// fpKey is what a field plan is made of besides its schema field.
type fpKey struct {
	f                                  *schema.Field
	present, tagged, nullable, compact bool
	sub                                *plan
}

// fieldDescs are the descriptors of one schema field's nodes, shared by
// every plan the field is in.
type fieldDescs struct{ field, elem, tag, hdr *span.Desc }

func (pl *planner) descsOf(f *schema.Field) *fieldDescs {
	if d, ok := pl.descs[f]; ok {
		return d
	}
	d := &fieldDescs{field: span.FieldDesc(f)}
	if f.Type != nil && f.Type.Kind == schema.KindArray && f.Type.Elem != nil {
		name := f.Name
		st := f.Type.ElemStruct()
		if st != nil {
			name = st.Name
		}
		d.elem = span.Register(&span.Desc{Name: name, Type: f.Type.Elem.Name, Field: f, Struct: st})
	}
	if f.Tag >= 0 {
		d.tag = span.Register(&span.Desc{Name: f.Name, Type: "tag " + strconv.Itoa(int(f.Tag)), About: f.About, Field: f, Struct: d.field.Struct})
	}
	if pl.header {
		d.hdr = span.Register(&span.Desc{Name: HeaderFieldName(f), Type: d.field.Type, About: f.About, Field: f, Struct: d.field.Struct, Note: d.field.Note})
	}
	pl.descs[f] = d
	return d
}

func (pl *planner) build(s *schema.Struct, v int16, flexible bool) *plan {
	k := planKey{s, v, flexible}
	if p, ok := pl.cache[k]; ok {
		return p
	}
	p := &plan{s: s, version: v, flexible: flexible, all: make([]*fieldPlan, len(s.Fields)), header: pl.header}
	pl.cache[k] = p
	for i, f := range s.Fields {
		k := fpKey{f: f, present: f.Versions.Contains(v), nullable: f.Nullable.Contains(v), compact: f.IsCompact(pl.msgFlex, v)}
		k.tagged = k.present && flexible && f.Tagged.Contains(v)
		if k.tagged {
			k.compact = true // tagged values always use the flexible encoding
		}
		if st := f.Type.ElemStruct(); st != nil && k.present {
			k.sub = pl.build(st, v, flexible)
		}
		fp := pl.fps[k]
		if fp == nil {
			fp = pl.fieldPlan(k)
		}
		p.all[i] = fp
		switch {
		case fp.tagged:
			p.tagged = append(p.tagged, fp)
		case fp.present:
			p.wire = append(p.wire, fp)
		}
		if !fp.present || fp.tagged {
			p.defaults = append(p.defaults, fp)
		}
	}
	// s.Tagged is sorted by tag; keep that order.
	p.tagged = p.tagged[:0]
	p.byTag = map[uint32]*fieldPlan{}
	for _, f := range s.Tagged {
		fp := p.all[f.Index]
		p.byTag[uint32(f.Tag)] = fp
		if fp.tagged {
			p.tagged = append(p.tagged, fp)
		}
	}
	for _, fp := range p.wire {
		p.minSize += fieldMinSize(fp)
	}
	for _, fp := range p.defaults {
		if !isZero(&fp.def) {
			p.setDefaults = append(p.setDefaults, fp)
		}
	}
	p.runs = make([]intRun, len(p.wire))
	for i := len(p.wire) - 1; i >= 0; i-- {
		if fp := p.wire[i]; fp.intSize != 0 {
			p.runs[i] = intRun{1, fp.intSize}
			if i+1 < len(p.wire) {
				p.runs[i].n += p.runs[i+1].n
				p.runs[i].size += p.runs[i+1].size
			}
		}
	}
	if flexible {
		p.minSize++
	}
	p.dec = decProgram(p)
	p.enc.init(p)
	return p
}

// fieldPlan makes the plan of field k.f read as k says.
func (pl *planner) fieldPlan(k fpKey) *fieldPlan {
	f := k.f
	fp := &fieldPlan{f: f, index: f.Index, kind: f.Type.Kind, def: DefaultValue(f)}
	if lo, hi, ok := fp.kind.IntRange(); ok {
		fp.intSize, fp.lo, fp.hi = fp.kind.FixedSize(), lo, hi
	}
	fp.present, fp.tagged, fp.nullable, fp.compact, fp.sub = k.present, k.tagged, k.nullable, k.compact, k.sub
	fp.taggedElsewhere = f.Tag >= 0 && !fp.tagged
	if f.Type.Kind == schema.KindArray {
		fp.elemKind = f.Type.Elem.Kind
	}
	fp.elemMin = elemMinSize(fp)
	fp.topicName = f.EntityType == "topicName"
	fds := pl.descsOf(f)
	fp.desc, fp.elemDesc, fp.tagDesc, fp.hdrDesc = fds.field, fds.elem, fds.tag, fds.hdr
	fp.descID = fp.desc.ID()
	if pl.fps == nil {
		pl.fps = map[fpKey]*fieldPlan{}
	}
	pl.fps[k] = fp
	return fp
}

func fieldMinSize(fp *fieldPlan) int {
	switch fp.kind {
	case schema.KindString:
		if fp.compact {
			return 1
		}
		return 2
	case schema.KindBytes, schema.KindRecords, schema.KindArray:
		if fp.compact {
			return 1
		}
		return 4
	case schema.KindStruct:
		if fp.nullable {
			return 1
		}
		if fp.sub != nil {
			return fp.sub.minSize
		}
		return 0
	}
	return fp.kind.FixedSize()
}

func elemMinSize(fp *fieldPlan) int {
	if fp.kind != schema.KindArray {
		return 0
	}
	switch fp.elemKind {
	case schema.KindString:
		if fp.compact {
			return 1
		}
		return 2
	case schema.KindBytes:
		if fp.compact {
			return 1
		}
		return 4
	case schema.KindStruct:
		if fp.sub != nil {
			return max(1, fp.sub.minSize)
		}
	}
	return max(1, fp.elemKind.FixedSize())
}

// msgPlans holds the plans of one message, by version.
type msgPlans struct {
	lo    int16
	plans []*plan
	// root and body describe, by version, a frame's root ("message v3")
	// and the message body ("message body, version 3").
	// record describes the body of an internal record message.
	root, body, record []*span.Desc
}

func (c *Codec) buildPlans(m *schema.Message) msgPlans {
	if m.Valid.Empty() || m.Body == nil {
		return msgPlans{}
	}
	if c.descs == nil {
		c.descs = map[*schema.Field]*fieldDescs{}
	}
	pl := &planner{msgFlex: m.Flexible, cache: map[planKey]*plan{}, descs: c.descs, header: m == c.Reg.RequestHeader || m == c.Reg.ResponseHeader}
	mp := msgPlans{lo: m.Valid.Lo}
	for v := m.Valid.Lo; v <= m.Valid.Hi; v++ {
		vs := strconv.Itoa(int(v))
		mp.root = append(mp.root, span.Register(&span.Desc{Name: m.Name, Type: "message v" + vs, Message: m}))
		mp.body = append(mp.body, span.Register(&span.Desc{Name: m.Name, Type: "struct", About: "message body, version " + vs, Message: m, Struct: m.Body}))
		if m.Type != schema.TypeRequest && m.Type != schema.TypeResponse {
			mp.record = append(mp.record, span.Register(&span.Desc{Name: m.Name, Type: "struct", About: "record " + m.Type.String() + ", version " + vs, Message: m, Struct: m.Body}))
		}
		mp.plans = append(mp.plans, pl.build(m.Body, v, m.Flexible.Contains(v)))
		if v == schema.MaxVersion {
			break
		}
	}
	return mp
}

// VersionError says a version is outside a message's valid range.
func versionError(m *schema.Message, v int16) error {
	if m.Reserved() {
		return fmt.Errorf("%s has no valid versions (the key is reserved)", m.Name)
	}
	return fmt.Errorf("%s version %d is outside the valid range %s", m.Name, v, m.Valid)
}

// isZero reports whether v is the zero Value (nil slices, not null, 0).
func isZero(v *Value) bool {
	return v.ptr == nil && v.bare() && v.Int() == 0
}
