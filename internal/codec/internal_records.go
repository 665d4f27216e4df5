package codec

import (
	"fmt"
	"strconv"

	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/recschema"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

// Internal records
//
// With record schemas loaded ([Codec.SetRecordSchemas]), the records of a
// records field whose topic is an internal one (the last topicName field
// read before it, or [Codec.RecordsTopic]) have their key and value
// decoded in the span tree: the key and value nodes take the record type's
// name as their type, and get children that tile their bytes: the varint
// length, the framing (record type, version; or frame version, api key,
// version) and the record message as a struct, whose fields have the
// body's category like any message body. A key or value that does not read
// as its schema is flagged on its node, with the bytes after the problem
// shown raw; the frame still decodes.

// SetRecordSchemas makes the codec decode internal-topic records with s.
// Call it before the codec is used.
func (c *Codec) SetRecordSchemas(s *recschema.Set) {
	c.recs = s
	for _, r := range s.Messages() {
		if _, ok := c.plans[r.Msg]; !ok {
			c.plans[r.Msg] = c.buildPlans(r.Msg)
		}
	}
}

// RecordSchemas returns the record schemas set with SetRecordSchemas.
func (c *Codec) RecordSchemas() *recschema.Set { return c.recs }

// recordContents returns the interpreter of the records of the current
// records field, or nil when none applies.
func (d *decoder) recordContents() records.Contents {
	if d.t == nil || d.c.recs == nil {
		return nil
	}
	return d.c.contentsFor(string(d.topic), d.bodyCat)
}

// contentsFor returns the interpreter of the records of topic (or of
// RecordsTopic, when set), whose message bodies get category cat, or nil
// when none applies.
func (c *Codec) contentsFor(topic string, cat span.Category) records.Contents {
	if c.recs == nil {
		return nil
	}
	if c.RecordsTopic != "" {
		topic = c.RecordsTopic
	}
	kind, mod := c.recs.ForTopic(topic)
	switch kind {
	case recschema.KindCoordinator:
		return func(t *span.Tree, key, value span.ID, control bool) {
			rd := &recDecoder{c: c, t: t, cat: cat}
			if control {
				rd.controlRecord(key, value)
			} else {
				rd.coordinatorRecord(mod, key, value)
			}
		}
	case recschema.KindMetadata:
		return func(t *span.Tree, key, value span.ID, control bool) {
			rd := &recDecoder{c: c, t: t, cat: cat}
			if control {
				rd.controlRecord(key, value)
			} else {
				rd.metadataRecord(mod, value)
			}
		}
	}
	return nil
}

// recDecoder decodes the keys and values of internal records into rows of
// t; cat is the category of their message bodies.
type recDecoder struct {
	c   *Codec
	t   *span.Tree
	cat span.Category
}

// controlTypes names the message of a control record's value by its type
// (Kafka's ControlRecordType): transaction markers, and KRaft's records.
var controlTypes = map[int16]string{
	0: "EndTxnMarker", 1: "EndTxnMarker", 2: "LeaderChangeMessage", 3: "SnapshotHeaderRecord",
	4: "SnapshotFooterRecord", 5: "KRaftVersionRecord", 6: "VotersRecord",
}

var controlNames = map[int16]string{0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER",
	4: "SNAPSHOT_FOOTER", 5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}

func (d *recDecoder) null(n span.ID) bool { return d.t.N(n).Null }

// controlRecord decodes a control record of an internal topic: the key is
// an int16 version then ControlRecordTypeSchema (an int16 type); the value
// an int16 version then the message of that type, from the message specs.
func (d *recDecoder) controlRecord(key, value span.ID) {
	ks, ok := d.c.Reg.Message("ControlRecordTypeSchema")
	if !ok || d.null(key) {
		return
	}
	kr := d.newBlobReader(key, 0)
	off := kr.Off
	ver, err := kr.Int16()
	if err != nil {
		d.rest(key, kr, "too short for the int16 control key version")
		return
	}
	d.recLeaf(key, kr, descControlKeyVer, off, int64(ver))
	if !ks.Valid.Contains(ver) || kr.Remaining() < 2 {
		d.rest(key, kr, fmt.Sprintf("not a ControlRecordTypeSchema v%d", ver))
		return
	}
	typ := int16(uint16(kr.B[kr.Off])<<8 | uint16(kr.B[kr.Off+1]))
	d.t.Extra(key, true).Type = ks.Name
	d.recordBody(key, kr, ks, ver)
	if name, ok := controlNames[typ]; ok {
		d.t.Extra(key, true).Note = name
	}
	vm, ok := d.c.Reg.Message(controlTypes[typ])
	if !ok || d.null(value) {
		return
	}
	vr := d.newBlobReader(value, 1)
	off = vr.Off
	vv, err := vr.Int16()
	if err != nil {
		d.rest(value, vr, "too short for the int16 control value version")
		return
	}
	d.recLeaf(value, vr, descControlValueVer, off, int64(vv))
	d.t.Extra(value, true).Type = vm.Name
	if !vm.Valid.Contains(vv) {
		d.rest(value, vr, fmt.Sprintf("%s has no version %d (valid versions %s)", vm.Name, vv, vm.Valid))
		return
	}
	d.recordBody(value, vr, vm, vv)
}

// blobReader reads the data of a key or value node; base is the offset
// of the data in the tree's bytes, which every node below adds to the
// reader's offsets.
type blobReader struct {
	wire.Reader
	base int
}

// newBlobReader starts the children of a key (what 0) or value (what 1)
// node: its varint length as a leaf, and a reader over its data.
func (d *recDecoder) newBlobReader(n span.ID, what int) *blobReader {
	data := d.t.ValueBytes(n)
	row := d.t.N(n)
	dataOff := int(row.Off+row.Len) - len(data)
	if dataOff > int(row.Off) {
		off, prefix := int(row.Off), row.Prefix
		ln := d.t.Add(n, descBlobLength[what], off, span.CatRecord)
		l := d.t.N(ln)
		l.Val, l.Int, l.Len = span.ValInt, prefix, int32(dataOff-off)
	}
	return &blobReader{Reader: wire.Reader{B: data}, base: dataOff}
}

// recLeaf adds a framing leaf of a record key or value, for the bytes of
// r from off to its current offset.
func (d *recDecoder) recLeaf(parent span.ID, r *blobReader, desc *span.Desc, off int, v int64) span.ID {
	n := d.t.Add(parent, desc, r.base+off, span.CatRecord)
	row := d.t.N(n)
	row.Val, row.Int, row.Len = span.ValInt, v, int32(r.Off-off)
	return n
}

// rest shows the bytes of n from r.Off on as one raw leaf, flagged why.
func (d *recDecoder) rest(n span.ID, r *blobReader, why string) {
	d.t.Extra(n, true).Flag = why
	if r.Remaining() > 0 {
		u := d.t.Add(n, descRecordRest, r.base+r.Off, span.CatRecord)
		row := d.t.N(u)
		row.Val, row.VOff, row.VLen, row.Len = span.ValBytes, int32(r.base+r.Off), int32(r.Remaining()), int32(r.Remaining())
		r.Off = len(r.B)
	}
}

// RecordPart decodes data as the key (key set) or the value of one
// record of mod's internal topic, with its framing, as a records field
// shows it (without the varint length): the record type and key message
// of a coordinator key; the version and value message of a coordinator
// value of record type typ; the frame version, api key, version and
// record of a metadata value. The body's fields get category cat;
// opts.Sample words array counts as a page of smallest instances does.
// Problems are flagged on the root, whose leaves tile data; offsets count
// from data's first byte. opts.Tree, when set, is reused.
func (c *Codec) RecordPart(mod *recschema.Module, key bool, typ int16, data []byte, cat span.Category, opts Options) *span.Tree {
	t := opts.Tree
	if t == nil {
		t = &span.Tree{}
	}
	t.Reset(data)
	t.Reg, t.Sample = c.Reg, opts.Sample
	desc := descPartValue
	if key {
		desc = descPartKey
	}
	n := t.Add(span.None, desc, 0, span.CatRecord)
	row := t.N(n)
	row.Val, row.VLen, row.Len = span.ValBytes, int32(len(data)), int32(len(data))
	d := &recDecoder{c: c, t: t, cat: cat}
	switch {
	case hasMetadata(mod):
		d.metadataRecord(mod, n)
	case key:
		d.coordinatorKey(mod, n)
	default:
		d.coordinatorValue(mod, typ, n)
	}
	return t
}

func hasMetadata(mod *recschema.Module) bool {
	for _, m := range mod.Reg.Messages {
		if m.Type == schema.TypeMetadata {
			return true
		}
	}
	return false
}

func (d *recDecoder) coordinatorRecord(mod *recschema.Module, key, value span.ID) {
	typ, ok := d.coordinatorKey(mod, key)
	if !ok {
		return
	}
	if d.null(value) {
		d.t.Extra(value, true).Note = "tombstone"
		return
	}
	d.coordinatorValue(mod, typ, value)
}

// coordinatorKey decodes a coordinator record's key and returns its type.
func (d *recDecoder) coordinatorKey(mod *recschema.Module, key span.ID) (int16, bool) {
	if d.null(key) {
		d.t.Extra(key, true).Flag = "a coordinator record needs a key"
		return 0, false
	}
	kr := d.newBlobReader(key, 0)
	off := kr.Off
	typ, err := kr.Int16()
	if err != nil {
		d.rest(key, kr, "too short for the int16 record type")
		return 0, false
	}
	km, ok := mod.Key(typ)
	tn := d.recLeaf(key, kr, descRecordType, off, int64(typ))
	if !ok {
		d.t.Extra(tn, true).Note = "unknown"
		d.rest(key, kr, fmt.Sprintf("record type %d is not defined in %s", typ, mod.Name))
		return 0, false
	}
	d.t.Extra(tn, true).Note = km.Name
	d.t.Extra(key, true).Type = km.Name
	d.recordBody(key, kr, km, 0)
	return typ, true
}

// coordinatorValue decodes the value of a coordinator record of type typ.
func (d *recDecoder) coordinatorValue(mod *recschema.Module, typ int16, value span.ID) {
	vm, ok := mod.Value(typ)
	vr := d.newBlobReader(value, 1)
	if !ok {
		d.rest(value, vr, fmt.Sprintf("record type %d has no value schema in %s", typ, mod.Name))
		return
	}
	off := vr.Off
	ver, err := vr.Int16()
	if err != nil {
		d.rest(value, vr, "too short for the int16 value version")
		return
	}
	d.recLeaf(value, vr, descValueVersion, off, int64(ver))
	d.t.Extra(value, true).Type = vm.Name
	if !vm.Valid.Contains(ver) {
		d.rest(value, vr, fmt.Sprintf("%s has no version %d (valid versions %s)", vm.Name, ver, vm.Valid))
		return
	}
	d.recordBody(value, vr, vm, ver)
}

// metadataFrameVersion is the only frame version of __cluster_metadata
// records.
const metadataFrameVersion = 1

func (d *recDecoder) metadataRecord(mod *recschema.Module, value span.ID) {
	if d.null(value) {
		return
	}
	r := d.newBlobReader(value, 1)
	var vals [3]uint32
	keyNode := span.None
	names := [3]string{"frame_version", "api_key", "version"}
	for i := range vals {
		off := r.Off
		v, err := r.Uvarint()
		if err != nil {
			d.rest(value, r, "truncated "+names[i])
			return
		}
		vals[i] = v
		if n := d.recLeaf(value, r, descMetadataFields[i], off, int64(v)); i == 1 {
			keyNode = n
		}
		if i == 0 && v != metadataFrameVersion {
			d.rest(value, r, "frame version "+strconv.Itoa(int(v))+" is not 1")
			return
		}
	}
	if vals[1] > schema.MaxVersion || vals[2] > schema.MaxVersion {
		d.rest(value, r, "api key or version out of range")
		return
	}
	m, ok := mod.Metadata(int16(vals[1]))
	if !ok {
		d.t.Extra(keyNode, true).Note = "unknown"
		d.rest(value, r, fmt.Sprintf("metadata record type %d is not defined in %s", vals[1], mod.Name))
		return
	}
	d.t.Extra(keyNode, true).Note = m.Name
	d.t.Extra(value, true).Type = m.Name
	if !m.Valid.Contains(int16(vals[2])) {
		d.rest(value, r, fmt.Sprintf("%s has no version %d (valid versions %s)", m.Name, vals[2], m.Valid))
		return
	}
	d.recordBody(value, r, m, int16(vals[2]))
}

// recordBody decodes record message m at version v from r, under n, to
// the end of r; problems are flagged and the rest shown raw.
func (d *recDecoder) recordBody(n span.ID, r *blobReader, m *schema.Message, v int16) {
	p, err := d.c.plan(m, v)
	if err != nil {
		d.rest(n, r, err.Error())
		return
	}
	sd := &decoder{c: d.c, r: r.Reader, t: d.t, base: r.base, bodyCat: d.cat}
	sd.path = sd.pathBuf[:0]
	start := r.Off
	sn := d.t.Add(n, d.c.recordDesc(m, v), r.base+start, d.cat)
	d.t.N(sn).Val = span.ValStruct
	var val Value
	err = sd.structBody(p, &val, sn)
	d.t.N(sn).Len = int32(sd.r.Off - start)
	r.Off = sd.r.Off
	if err != nil {
		dropEmptyErrors(d.t, sn)
		d.t.FixLen(sn)
		d.t.ClearUnread(sn)
		sr := d.t.N(sn)
		r.Off = max(r.Off, int(sr.Off+sr.Len)-r.base)
	}
	// A record's problem is shown, not raised: the frame is fine.
	d.t.Walk(sn, func(k span.ID, _ int) {
		if a := d.t.Extra(k, false); a != nil && a.Err != nil {
			a.Flag, a.Err = a.Err.Error(), nil
		}
	})
	if err != nil {
		if de, ok := err.(*wire.DecodeError); ok {
			de.Offset += r.base
		}
		d.rest(n, r, fmt.Sprintf("not a valid %s v%d: %v", m.Name, v, within(err, m.Name, -1)))
		return
	}
	if r.Remaining() > 0 {
		d.rest(n, r, fmt.Sprintf("%d bytes after the %s", r.Remaining(), m.Name))
	}
}

// dropEmptyErrors unlinks the leaves that failed before reading a byte
// (a value cut short), so that the bytes left can be shown as one raw leaf
// and the record's leaves still tile; the error is flagged on the record.
func dropEmptyErrors(t *span.Tree, n span.ID) {
	kids := t.Kids(n)
	t.CutKids(n)
	for _, k := range kids {
		hadKids := t.N(k).First != span.None
		dropEmptyErrors(t, k)
		// A leaf that read nothing (it failed, or its group did: an
		// array's count cut short), or a group left empty by that.
		if t.IsLeaf(k) && t.N(k).Len == 0 && (t.Err(k) != nil || hadKids || t.Err(n) != nil) {
			continue
		}
		p := t.N(n)
		t.N(k).Next = span.None
		if p.Last == span.None {
			p.First = k
		} else {
			t.N(p.Last).Next = k
		}
		p.Last = k
	}
}
