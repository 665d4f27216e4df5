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
			c.plans[r.Msg] = buildPlans(r.Msg)
		}
	}
}

// RecordSchemas returns the record schemas set with SetRecordSchemas.
func (c *Codec) RecordSchemas() *recschema.Set { return c.recs }

// recordContents returns the interpreter of the records of the current
// records field, or nil when none applies.
func (d *decoder) recordContents() records.Contents {
	if d.b == nil || d.c.recs == nil {
		return nil
	}
	topic := d.c.RecordsTopic
	if topic == "" {
		topic = string(d.topic)
	}
	kind, mod := d.c.recs.ForTopic(topic)
	switch kind {
	case recschema.KindCoordinator:
		return func(key, value *span.Node, control bool) {
			if control {
				d.controlRecord(key, value)
			} else {
				d.coordinatorRecord(mod, key, value)
			}
		}
	case recschema.KindMetadata:
		return func(key, value *span.Node, control bool) {
			if control {
				d.controlRecord(key, value)
			} else {
				d.metadataRecord(mod, value)
			}
		}
	}
	return nil
}

// controlTypes names the message of a control record's value by its type
// (Kafka's ControlRecordType): transaction markers, and KRaft's records.
var controlTypes = map[int16]string{
	0: "EndTxnMarker", 1: "EndTxnMarker", 2: "LeaderChangeMessage", 3: "SnapshotHeaderRecord",
	4: "SnapshotFooterRecord", 5: "KRaftVersionRecord", 6: "VotersRecord",
}

var controlNames = map[int16]string{0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER",
	4: "SNAPSHOT_FOOTER", 5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}

// controlRecord decodes a control record of an internal topic: the key is
// an int16 version then ControlRecordTypeSchema (an int16 type); the value
// an int16 version then the message of that type, from the message specs.
func (d *decoder) controlRecord(key, value *span.Node) {
	ks, ok := d.c.Reg.Message("ControlRecordTypeSchema")
	if !ok || key.Null {
		return
	}
	kr := d.newBlobReader(key, "key")
	off := kr.Off
	ver, err := kr.Int16()
	if err != nil {
		d.rest(key, kr, "too short for the int16 control key version")
		return
	}
	d.recLeaf(key, kr, "version", "int16", off, int64(ver), "version of the control record key")
	if !ks.Valid.Contains(ver) || kr.Remaining() < 2 {
		d.rest(key, kr, fmt.Sprintf("not a ControlRecordTypeSchema v%d", ver))
		return
	}
	typ := int16(uint16(kr.B[kr.Off])<<8 | uint16(kr.B[kr.Off+1]))
	key.Type = ks.Name
	d.recordBody(key, kr, ks, ver)
	if name, ok := controlNames[typ]; ok {
		key.Note = name
	}
	vm, ok := d.c.Reg.Message(controlTypes[typ])
	if !ok || value.Null {
		return
	}
	vr := d.newBlobReader(value, "value")
	off = vr.Off
	vv, err := vr.Int16()
	if err != nil {
		d.rest(value, vr, "too short for the int16 control value version")
		return
	}
	d.recLeaf(value, vr, "version", "int16", off, int64(vv), "version of the control record value")
	value.Type = vm.Name
	if !vm.Valid.Contains(vv) {
		d.rest(value, vr, fmt.Sprintf("%s has no version %d (valid versions %s)", vm.Name, vv, vm.Valid))
		return
	}
	d.recordBody(value, vr, vm, vv)
}

// blobReader reads the data of a key or value node; base is the offset
// of the data in the frame, which every node below adds to the reader's
// offsets.
type blobReader struct {
	wire.Reader
	base int
}

// newBlobReader starts the children of a key or value node: its varint
// length as a leaf, and a reader over its data.
func (d *decoder) newBlobReader(n *span.Node, what string) *blobReader {
	dataOff := n.Off + n.Len - len(n.Bytes)
	if dataOff > n.Off {
		ln := d.b.New(n, "length", "varint", n.Off, span.CatRecord)
		ln.Val, ln.Int, ln.Len, ln.About = span.ValInt, n.Prefix, dataOff-n.Off, "bytes of the "+what+" that follow"
	}
	return &blobReader{Reader: wire.Reader{B: n.Bytes}, base: dataOff}
}

// recLeaf adds a framing leaf of a record key or value, for the bytes of
// r from off to its current offset.
func (d *decoder) recLeaf(parent *span.Node, r *blobReader, name, typ string, off int, v int64, about string) *span.Node {
	n := d.b.New(parent, name, typ, r.base+off, span.CatRecord)
	n.Val, n.Int, n.Len, n.About = span.ValInt, v, r.Off-off, about
	return n
}

// rest shows the bytes of n from r.Off on as one raw leaf, flagged why.
func (d *decoder) rest(n *span.Node, r *blobReader, why string) {
	n.Flag = why
	if r.Remaining() > 0 {
		u := d.b.New(n, "undecoded", "bytes", r.base+r.Off, span.CatRecord)
		u.Val, u.Bytes, u.Len = span.ValBytes, r.B[r.Off:], r.Remaining()
		u.About = "bytes not read as the record's schema"
		r.Off = len(r.B)
	}
}

// RecordPart decodes data as the key (key set) or the value of one record
// of mod's internal topic, with its framing, as a records field shows it
// (without the varint length): the record type and key message of a
// coordinator key; the version and value message of a coordinator value of
// record type typ; the frame version, api key, version and record of a
// metadata value. The body's fields get category cat; opts.Sample words
// array counts as a page of smallest instances does. Problems are flagged on the returned node, whose leaves
// tile data; offsets count from data's first byte.
func (c *Codec) RecordPart(mod *recschema.Module, key bool, typ int16, data []byte, cat span.Category, opts Options) *span.Node {
	opts.Spans = true
	d := c.newDecoder(nil, opts, cat)
	name := "value"
	if key {
		name = "key"
	}
	n := d.b.New(nil, name, "bytes", 0, span.CatRecord)
	n.Val, n.Bytes, n.Len = span.ValBytes, data, len(data)
	switch {
	case hasMetadata(mod):
		d.metadataRecord(mod, n)
	case key:
		d.coordinatorKey(mod, n)
	default:
		d.coordinatorValue(mod, typ, n)
	}
	return n
}

func hasMetadata(mod *recschema.Module) bool {
	for _, m := range mod.Reg.Messages {
		if m.Type == schema.TypeMetadata {
			return true
		}
	}
	return false
}

func (d *decoder) coordinatorRecord(mod *recschema.Module, key, value *span.Node) {
	typ, ok := d.coordinatorKey(mod, key)
	if !ok {
		return
	}
	if value.Null {
		value.Note = "tombstone"
		return
	}
	d.coordinatorValue(mod, typ, value)
}

// coordinatorKey decodes a coordinator record's key and returns its type.
func (d *decoder) coordinatorKey(mod *recschema.Module, key *span.Node) (int16, bool) {
	if key.Null {
		key.Flag = "a coordinator record needs a key"
		return 0, false
	}
	kr := d.newBlobReader(key, "key")
	off := kr.Off
	typ, err := kr.Int16()
	if err != nil {
		d.rest(key, kr, "too short for the int16 record type")
		return 0, false
	}
	km, ok := mod.Key(typ)
	tn := d.recLeaf(key, kr, "type", "int16", off, int64(typ), "record type: the apiKey of the key and value schemas")
	if !ok {
		tn.Note = "unknown"
		d.rest(key, kr, fmt.Sprintf("record type %d is not defined in %s", typ, mod.Name))
		return 0, false
	}
	tn.Note = km.Name
	key.Type = km.Name
	d.recordBody(key, kr, km, 0)
	return typ, true
}

// coordinatorValue decodes the value of a coordinator record of type typ.
func (d *decoder) coordinatorValue(mod *recschema.Module, typ int16, value *span.Node) {
	vm, ok := mod.Value(typ)
	vr := d.newBlobReader(value, "value")
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
	d.recLeaf(value, vr, "version", "int16", off, int64(ver), "version of the value schema")
	value.Type = vm.Name
	if !vm.Valid.Contains(ver) {
		d.rest(value, vr, fmt.Sprintf("%s has no version %d (valid versions %s)", vm.Name, ver, vm.Valid))
		return
	}
	d.recordBody(value, vr, vm, ver)
}

// metadataFrameVersion is the only frame version of __cluster_metadata
// records.
const metadataFrameVersion = 1

func (d *decoder) metadataRecord(mod *recschema.Module, value *span.Node) {
	if value.Null {
		return
	}
	r := d.newBlobReader(value, "value")
	var vals [3]uint32
	var keyNode *span.Node
	names := [3]string{"frame_version", "api_key", "version"}
	abouts := [3]string{"record frame version, always 1", "metadata record type", "version of the record's schema"}
	for i := range vals {
		off := r.Off
		v, err := r.Uvarint()
		if err != nil {
			d.rest(value, r, "truncated "+names[i])
			return
		}
		vals[i] = v
		if n := d.recLeaf(value, r, names[i], "uvarint", off, int64(v), abouts[i]); i == 1 {
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
		keyNode.Note = "unknown"
		d.rest(value, r, fmt.Sprintf("metadata record type %d is not defined in %s", vals[1], mod.Name))
		return
	}
	keyNode.Note = m.Name
	value.Type = m.Name
	if !m.Valid.Contains(int16(vals[2])) {
		d.rest(value, r, fmt.Sprintf("%s has no version %d (valid versions %s)", m.Name, vals[2], m.Valid))
		return
	}
	d.recordBody(value, r, m, int16(vals[2]))
}

// recordBody decodes record message m at version v from r, under n, to
// the end of r; problems are flagged and the rest shown raw.
func (d *decoder) recordBody(n *span.Node, r *blobReader, m *schema.Message, v int16) {
	p, err := d.c.plan(m, v)
	if err != nil {
		d.rest(n, r, err.Error())
		return
	}
	sd := &decoder{c: d.c, r: r.Reader, b: d.b, bodyCat: d.bodyCat}
	sd.path = sd.pathBuf[:0]
	start := r.Off
	sn := d.b.New(n, m.Name, "struct", start, d.bodyCat)
	sn.Val = span.ValStruct
	sn.About = "record " + m.Type.String() + ", version " + strconv.Itoa(int(v))
	var val Value
	err = sd.structBody(p, &val, sn)
	sn.Len = sd.r.Off - start
	r.Off = sd.r.Off
	if err != nil {
		dropEmptyErrors(sn)
		fixLen(sn)
		r.Off = max(r.Off, sn.Off+sn.Len)
	}
	// The sub-decoder's offsets are within the data: make them the frame's.
	// A record's problem is shown, not raised: the frame is fine.
	sn.Walk(func(k *span.Node, _ int) {
		k.Off += r.base
		if k.Err != nil {
			k.Flag, k.Err = k.Err.Error(), nil
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

// dropEmptyErrors removes the leaves that failed before reading a byte
// (a value cut short), so that the bytes left can be shown as one raw leaf
// and the record's leaves still tile; the error is flagged on the record.
func dropEmptyErrors(n *span.Node) {
	kids := n.Kids[:0]
	for _, k := range n.Kids {
		hadKids := len(k.Kids) > 0
		dropEmptyErrors(k)
		// A failed leaf that read nothing, or a group left empty by that.
		if k.IsLeaf() && k.Len == 0 && (k.Err != nil || hadKids) {
			continue
		}
		kids = append(kids, k)
	}
	n.Kids = kids
}
