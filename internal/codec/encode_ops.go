package codec

import (
	"github.com/manifester/manifester/internal/schema"
)

// The encoder's program
//
// Each plan carries, besides its field plans, a flat list of encoding
// steps made once when the plan is built (encProgram): one small encOp per
// field on the wire, with the field's kind, encoding and nullability
// folded into one op code, so that the hot loop dispatches once per field
// and reads one contiguous array instead of chasing a fieldPlan pointer per
// field. Every op handles the common valid case inline; anything else (an
// out-of-range integer, a null where the fast path does not handle it, an
// over-long string, a kind without an op of its own) is handed to the
// general path, encoder.value, which writes the same bytes or reports the
// error. The program therefore changes no output byte and no error.

// encCode is the kind of one encoding step.
type encCode uint8

const (
	encValue encCode = iota // the general path (encoder.value)
	encBool
	encInt8
	encInt16
	encUint16
	encInt32
	encUint32
	encInt64
	encFloat64
	encUUID
	encString        // int16 length
	encCompactString // uvarint length+1
	encBytes         // int32 length (bytes, records)
	encCompactBytes  // uvarint length+1 (bytes, records)
	encIntArray      // array of fixed-width integers; elem holds their code
	encStructArray   // array of structs (sub)
	encStringArray   // array of strings
	encStruct        // a struct that is neither nullable nor tagged
)

// encOp is one step of a plan's encoding program: one field on the wire.
type encOp struct {
	code     encCode
	elem     encCode // element code of encIntArray
	compact  bool    // compact length or count
	nullable bool
	index    int32 // the field's index in the struct value's Kids
	fp       *fieldPlan
	// sub is fp.sub for encStructArray, kept here to save a pointer chase
	// per array (the mixed workload visits hundreds of plans, which are
	// not in cache).
	sub *plan
}

// encProgram is what the encoder needs of a plan, precomputed.
type encProgram struct {
	// What every struct reads comes first, in one cache line of the plan.
	ops []encOp
	// mustDefault are the fields absent at this version that are not
	// ignorable: their values must be the defaults.
	mustDefault []mustDefault
	nKids       int     // len(plan.all): the fields a struct value has
	tail        encTail // what follows the fields
	// inl holds the ops of a plan with few, so that they sit next to
	// the fields above (a struct then touches fewer cache lines).
	inl [4]encOp
	// notFlexTagged are, in a plan that is not flexible, the present
	// fields that can be tagged (at other versions): they must hold their
	// defaults, since no tagged field can be written.
	notFlexTagged []*fieldPlan
	// defKids are the field defaults, by index, of a header plan (the
	// header written when a frame carries no header value); hdrRoles say,
	// by position in wire, which fields of a header plan come from the
	// frame's own fields.
	defKids  []Value
	hdrRoles []hdrRole
}

// mustDefault is a field whose value must be its default, with what
// the common check needs kept inline: an integer default (no bytes,
// elements or tags) is compared without reading the field plan.
type mustDefault struct {
	index  int32
	intDef bool  // the default is an integer alone (def.Int, not null)
	def    int64 // its value
	fp     *fieldPlan
}

// isDefault reports whether x equals the field's default.
func (d *mustDefault) isDefault(x *Value) bool {
	if d.intDef && x.Int() == d.def && x.bare() {
		return true
	}
	return Equal(x, &d.fp.def)
}

// encTail is what a plan writes after its fields on the wire.
type encTail uint8

const (
	tailNotFlex encTail = iota // nothing (a value must carry no tags)
	tailNoTags                 // a tag count: 0 unless unknown tags
	tailTags                   // the tagged fields set, and unknown tags
)

// hdrRole is where the encoder takes a header field from.
type hdrRole uint8

const (
	hdrValue         hdrRole = iota // the header value (Frame.Header)
	hdrCorrelationID                // Frame.CorrelationID
	hdrClientID                     // Frame.ClientID and ClientIDNull
)

// intCode is the op code of a fixed-width integer or bool kind, or
// encValue.
func intCode(k schema.Kind) encCode {
	switch k {
	case schema.KindBool:
		return encBool
	case schema.KindInt8:
		return encInt8
	case schema.KindInt16:
		return encInt16
	case schema.KindUint16:
		return encUint16
	case schema.KindInt32:
		return encInt32
	case schema.KindUint32:
		return encUint32
	case schema.KindInt64:
		return encInt64
	}
	return encValue
}

// init compiles into prog (the program of p) the encoding program of p,
// whose field plans are built (sub-plans may still be under construction:
// ops keep pointers to them).
func (prog *encProgram) init(p *plan) {
	*prog = encProgram{}
	prog.ops = prog.inl[:0]
	if len(p.wire) > len(prog.inl) {
		prog.ops = make([]encOp, 0, len(p.wire))
	}
	prog.nKids = len(p.all)
	switch {
	case !p.flexible:
		prog.tail = tailNotFlex
	case len(p.tagged) == 0:
		prog.tail = tailNoTags
	default:
		prog.tail = tailTags
	}
	for _, fp := range p.wire {
		op := encOp{code: encValue, compact: fp.compact, nullable: fp.nullable, index: int32(fp.index), fp: fp}
		switch fp.kind {
		case schema.KindFloat64:
			op.code = encFloat64
		case schema.KindUUID:
			op.code = encUUID
		case schema.KindString:
			op.code = encString
			if fp.compact {
				op.code = encCompactString
			}
		case schema.KindBytes, schema.KindRecords:
			op.code = encBytes
			if fp.compact {
				op.code = encCompactBytes
			}
		case schema.KindArray:
			if c := intCode(fp.elemKind); c != encValue && c != encBool {
				op.code, op.elem = encIntArray, c
			} else if fp.elemKind == schema.KindStruct && fp.sub != nil {
				op.code, op.sub = encStructArray, fp.sub
			} else if fp.elemKind == schema.KindString {
				op.code = encStringArray
			}
		case schema.KindStruct:
			if !fp.nullable && !fp.tagged && fp.sub != nil {
				op.code = encStruct
			}
		default:
			op.code = intCode(fp.kind)
		}
		prog.ops = append(prog.ops, op)
	}
	for _, fp := range p.defaults {
		if !fp.present && !fp.f.Ignorable {
			d := &fp.def
			intDef := d.bare()
			prog.mustDefault = append(prog.mustDefault, mustDefault{index: int32(fp.index), intDef: intDef, def: d.Int(), fp: fp})
		}
	}
	if !p.flexible {
		for _, f := range p.s.Tagged {
			if fp := p.all[f.Index]; fp.present {
				prog.notFlexTagged = append(prog.notFlexTagged, fp)
			}
		}
	}
	if p.header {
		prog.defKids = make([]Value, len(p.all))
		for i, fp := range p.all {
			prog.defKids[i] = fp.def
		}
		prog.hdrRoles = make([]hdrRole, len(p.wire))
		for i, fp := range p.wire {
			switch {
			case isCorrelationID(fp):
				prog.hdrRoles[i] = hdrCorrelationID
			case isClientID(fp):
				prog.hdrRoles[i] = hdrClientID
			}
		}
	}
}
