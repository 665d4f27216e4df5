package records

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

// Decompressor inflates a compressed records area. codec is the attribute
// value (1 gzip, 2 snappy, 3 lz4, 4 zstd).
type Decompressor func(codec int, data []byte) ([]byte, error)

// LimitDecompressor inflates a compressed records area to at most limit
// bytes. When the data would inflate to more, it fails with an error
// wrapping [ErrRoom] if limit (the room left in the budget) was what
// stopped it, or another error if its own per-batch cap did.
type LimitDecompressor func(codec int, data []byte, limit int) ([]byte, error)

// ErrInflateLimit is the error of inflated data larger than a limit;
// package compress returns it as compress.ErrTooLarge.
var ErrInflateLimit = errors.New("inflated data larger than the limit")

// TooLargeError is the error of data that inflates to more than Limit
// bytes; it wraps [ErrInflateLimit].
type TooLargeError struct {
	Codec string
	Limit int
	// Partial, when not nil, holds the first bytes of the inflated data
	// (at most Limit), for showing what fits.
	Partial []byte
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: %v (%d bytes)", e.Codec, ErrInflateLimit, e.Limit)
}

// Unwrap makes errors.Is(err, ErrInflateLimit) hold.
func (e *TooLargeError) Unwrap() error { return ErrInflateLimit }

// ErrRoom says the budget's room, not the per-batch cap, stopped inflating.
var ErrRoom = errors.New("inflation budget spent")

// CompressionName names a compression codec attribute value.
func CompressionName(codec int) string {
	switch codec {
	case 0:
		return "none"
	case 1:
		return "gzip"
	case 2:
		return "snappy"
	case 3:
		return "lz4"
	case 4:
		return "zstd"
	}
	return "codec " + strconv.Itoa(codec)
}

// Decoder walks a records payload, building span nodes when Spans is set.
type Decoder struct {
	// R reads the frame; R.B must end where the records payload ends.
	R *wire.Reader
	// Spans builds nodes when not nil.
	Spans *span.Builder
	// Path prefixes error paths ("Topics[0].Partitions[0].Records").
	Path string
	// Decompress, when set, inflates compressed batches so their records
	// can be shown; the inflated bytes hang under a "decompressed" node
	// whose offsets are relative to the inflated buffer.
	Decompress Decompressor
	// DecompressLimit, when set, is used instead of Decompress and is
	// given the room left in Budget, so that no batch inflates past it.
	DecompressLimit LimitDecompressor
	// Budget, when set, bounds the bytes inflated and the span nodes built
	// for inflated records, over all decoders that share it (one frame);
	// its context is checked between entries and records.
	Budget *budget.Budget
	// Batches counts the entries seen.
	Batches int
	// legacyNodes is the node count when this inner MessageSet of an
	// inflated legacy message started (legacyFrom its compressed value).
	legacyNodes int64
	legacyFrom  *span.Node
	// AllowPartial accepts a trailing entry cut short, as brokers may send
	// at the end of a Fetch response; Kafka ignores it. When false (a
	// request, which must carry whole batches) such an entry is an error.
	AllowPartial bool
	// Contents, when set (with Spans), interprets the key and value of
	// every record; see [Contents].
	Contents Contents
	// control is set while the records of a control batch are read.
	control bool
}

func (d *Decoder) fail(off int, path string, err error) error {
	return &wire.DecodeError{Offset: off, Path: d.Path + path, Err: err}
}

// leaf adds a leaf node for a fixed-size or varint field.
func (d *Decoder) leaf(parent *span.Node, name, typ string, off int, cat span.Category, val span.ValueKind, v int64, about string) *span.Node {
	if d.Spans == nil {
		return nil
	}
	n := d.Spans.New(parent, name, typ, off, cat)
	n.Val, n.Int, n.Len, n.About = val, v, d.R.Off-off, about
	return n
}

// Decode reads entries until the end of R.B.
func (d *Decoder) Decode(parent *span.Node) error {
	r := d.R
	for r.Remaining() > 0 {
		start := r.Off
		idx := d.Batches
		if err := d.Budget.Err(); err != nil {
			return d.fail(start, fmt.Sprintf("[%d]", idx), err)
		}
		if b := d.Budget; b != nil && d.legacyFrom != nil && b.InflatedNodes+d.Spans.Count-d.legacyNodes > b.MaxNodes {
			b.NodesSpent()
			err := b.Spend("span-node budget of %d nodes for this frame's inflated records spent at %s message %d; the rest is shown as bytes", b.MaxNodes, where(d.legacyFrom), idx)
			d.rest(parent, r.B, start, err)
			return nil
		}
		if r.Remaining() < 17 {
			return d.partial(parent, start, idx, "too short for an entry header")
		}
		size := int32(binary.BigEndian.Uint32(r.B[start+8:]))
		magic := int8(r.B[start+16])
		if size < 0 || int(size) > r.Remaining()-12 {
			// A truncated trailing entry, as Fetch may return.
			return d.partial(parent, start, idx, fmt.Sprintf("entry of %d bytes cut off after %d", int64(size)+12, r.Remaining()))
		}
		d.Batches++
		var err error
		switch magic {
		case 2:
			err = d.batch(parent, idx)
		case 0, 1:
			err = d.message(parent, idx, magic)
		default:
			return d.fail(start+16, fmt.Sprintf("[%d].magic", idx), fmt.Errorf("%w %d", ErrMagic, magic))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// partial handles a trailing entry cut short: shown and skipped when
// AllowPartial is set, else an error at the entry.
func (d *Decoder) partial(parent *span.Node, start, idx int, why string) error {
	var err error
	if !d.AllowPartial {
		err = d.fail(start, fmt.Sprintf("[%d].batchLength", idx), fmt.Errorf("%w: %s; only a response's last entry may be cut short", ErrBatchLength, why))
	}
	if d.Spans != nil {
		n := d.Spans.New(parent, "partial entry", "bytes", start, span.CatRecordBatch)
		n.Val, n.Bytes, n.Len = span.ValBytes, d.R.B[start:], len(d.R.B)-start
		n.About = "trailing partial entry, ignored as Kafka does: " + why
		n.Flag = "partial"
		n.Err = err
	}
	d.R.Off = len(d.R.B)
	return err
}

// batch decodes one RecordBatch v2. The caller checked that the whole
// entry is present.
func (d *Decoder) batch(parent *span.Node, idx int) error {
	r := d.R
	start := r.Off
	var bn *span.Node
	if d.Spans != nil {
		bn = d.Spans.New(parent, "RecordBatch", "RecordBatch v2", start, span.CatRecordBatch)
		d.Spans.Reserve(bn, 13)
		bn.Index = int32(idx)
		bn.Val = span.ValStruct
	}
	p := "[" + strconv.Itoa(idx) + "]."
	cat := span.CatRecordBatch
	off := r.Off
	baseOffset, _ := r.Int64()
	d.leaf(bn, "baseOffset", "int64", off, cat, span.ValInt, baseOffset, "offset of the first record")
	off = r.Off
	batchLength, _ := r.Int32()
	d.leaf(bn, "batchLength", "int32", off, cat, span.ValInt, int64(batchLength), "bytes after this field")
	end := start + 12 + int(batchLength)
	if batchLength < BatchHeaderSize-12 {
		return d.fail(off, p+"batchLength", fmt.Errorf("%w: %d is smaller than the %d-byte header", ErrBatchLength, batchLength, BatchHeaderSize-12))
	}
	off = r.Off
	ple, _ := r.Int32()
	d.leaf(bn, "partitionLeaderEpoch", "int32", off, cat, span.ValInt, int64(ple), "leader epoch, -1 if none; not covered by the CRC")
	off = r.Off
	magic, _ := r.Int8()
	d.leaf(bn, "magic", "int8", off, cat, span.ValInt, int64(magic), "record format version")
	off = r.Off
	crc, _ := r.Uint32()
	want := CRC32C(r.B[r.Off:end])
	cn := d.leaf(bn, "crc", "uint32", off, cat, span.ValInt, int64(crc), "CRC-32C of attributes through the last record")
	if cn != nil {
		cn.Note = fmt.Sprintf("0x%08x", crc)
	}
	if crc != want {
		err := d.fail(off, p+"crc", fmt.Errorf("%w: batch says 0x%08x, bytes give 0x%08x", ErrCRC, crc, want))
		if cn != nil {
			cn.Err = err
			bn.Len = r.Off - start
		}
		return err
	}
	off = r.Off
	attrs, _ := r.Int16()
	an := d.leaf(bn, "attributes", "int16", off, cat, span.ValInt, int64(attrs), "compression, timestamp type, transactional, control")
	d.control = attrs&attrControl != 0
	if an != nil {
		an.Note = AttributesText(attrs)
	}
	fields := []struct {
		name, typ, about string
		size             int
	}{
		{"lastOffsetDelta", "int32", "offset delta of the last record", 4},
		{"baseTimestamp", "int64", "timestamp of the first record", 8},
		{"maxTimestamp", "int64", "largest timestamp in the batch", 8},
		{"producerId", "int64", "idempotent producer id, -1 if none", 8},
		{"producerEpoch", "int16", "producer epoch, -1 if none", 2},
		{"baseSequence", "int32", "sequence of the first record, -1 if none", 4},
		{"recordsCount", "int32", "number of records", 4},
	}
	var count int64
	for _, f := range fields {
		off = r.Off
		var v int64
		switch f.size {
		case 2:
			x, _ := r.Int16()
			v = int64(x)
		case 4:
			x, _ := r.Int32()
			v = int64(x)
		case 8:
			v, _ = r.Int64()
		}
		n := d.leaf(bn, f.name, f.typ, off, cat, span.ValInt, v, f.about)
		if n != nil && (f.name == "baseTimestamp" || f.name == "maxTimestamp") {
			n.Note = TimestampNote(v)
		}
		count = v
	}
	if bn != nil {
		bn.Note = plural(count, "record")
		if count > 0 && count <= int64(end-r.Off) {
			d.Spans.Reserve(bn, int(count))
		}
	}
	if count < 0 {
		return d.fail(r.Off-4, p+"recordsCount", fmt.Errorf("%w: %d", wire.ErrNegativeLength, count))
	}
	codec := int(attrs & 7)
	area := r.B[r.Off:end]
	if codec != 0 {
		if d.Spans != nil {
			n := d.Spans.New(bn, "records", "bytes", r.Off, span.CatRecord)
			n.Val, n.Bytes, n.Len = span.ValBytes, area, len(area)
			n.Note = CompressionName(codec) + " compressed"
			n.About = fmt.Sprintf("%d records, compressed as one stream", count)
			if d.Decompress != nil || d.DecompressLimit != nil {
				d.inflate(n, codec, area, count)
			}
		}
		r.Off = end
	} else {
		sub := wire.Reader{B: r.B[:end], Off: r.Off}
		rd := recordReader{d: d, r: &sub, path: p}
		for i := int64(0); i < count; i++ {
			if err := rd.record(bn, int(i)); err != nil {
				if bn != nil {
					bn.Len = sub.Off - start
				}
				return err
			}
		}
		if sub.Off != end {
			return d.fail(sub.Off, p+"records", fmt.Errorf("%w: %d bytes left after %d records", ErrBatchLength, end-sub.Off, count))
		}
		r.Off = end
	}
	if bn != nil {
		bn.Len = r.Off - start
	}
	return nil
}

// decompress inflates a compressed area within the budget's room. ok is
// false when the area is left compressed; n is then flagged with why.
func (d *Decoder) decompress(n *span.Node, codec int, data []byte) (raw []byte, ok bool) {
	raw, ok, _ = d.decompressPartial(n, codec, data, false)
	return raw, ok
}

// decompressPartial is decompress that, with partial set, returns the
// first bytes of an area that does not fit in the room left (the room's
// worth), with the budget's error: the records that fit are shown.
func (d *Decoder) decompressPartial(n *span.Node, codec int, data []byte, partial bool) (raw []byte, ok bool, cut error) {
	b := d.Budget
	if b != nil && (b.InflateRoom() == 0 || b.NodeRoom() == 0) {
		d.notInflated(n)
		return nil, false, nil
	}
	var err error
	switch {
	case b != nil && d.DecompressLimit != nil:
		raw, err = d.DecompressLimit(codec, data, int(min(b.InflateRoom(), math.MaxInt32)))
	case d.DecompressLimit != nil:
		raw, err = d.DecompressLimit(codec, data, math.MaxInt32)
	default:
		raw, err = d.Decompress(codec, data)
		if err == nil && b != nil && int64(len(raw)) > b.InflateRoom() {
			err = ErrRoom
		}
	}
	var tl *TooLargeError
	if errors.Is(err, ErrRoom) {
		if partial && errors.As(err, &tl) && len(tl.Partial) > 0 {
			b.AddInflated(len(tl.Partial))
			b.InflateSpent()
			cut = b.Spend("inflation budget of %s for this frame spent in %s after %s of its records; the rest of them, and the compressed data after it, are not inflated",
				budget.Size(b.MaxInflate), where(n), budget.Size(int64(len(tl.Partial))))
			n.Flag = "partly inflated: " + cut.Error()
			return tl.Partial, true, cut
		}
		d.spendInflate(n)
		return nil, false, nil
	}
	if err != nil {
		n.Flag = fmt.Sprintf("%v: %v", ErrCompression, err)
		// Inflating up to the per-batch cap was work done: it counts.
		if b != nil && errors.As(err, &tl) {
			b.AddInflated(tl.Limit)
		}
		return nil, false, nil
	}
	if b != nil {
		b.AddInflated(len(raw))
	}
	return raw, true, nil
}

// spendInflate flags the batch at n as the one where the inflation budget
// ran out.
func (d *Decoder) spendInflate(n *span.Node) {
	b := d.Budget
	b.NotInflated++
	b.InflateSpent()
	err := b.Spend("inflation budget of %s for this frame spent at %s (%s inflated before it); it and the compressed data after it are shown compressed",
		budget.Size(b.MaxInflate), where(n), budget.Size(b.Inflated()))
	n.Flag = err.Error()
}

// notInflated flags a batch left compressed because the budget was spent
// before it. When the room ran out exactly at the batch before, without
// a batch that did not fit, this batch is where the budget is said to be
// spent.
func (d *Decoder) notInflated(n *span.Node) {
	b := d.Budget
	if b.InflateRoom() == 0 && !b.IsInflateSpent() {
		d.spendInflate(n)
		return
	}
	if b.InflateRoom() > 0 && b.NodeRoom() == 0 && !b.IsNodesSpent() {
		b.NodesSpent()
		b.NotInflated++
		n.Flag = b.Spend("span-node budget of %d nodes for this frame's inflated records spent before %s; it and the compressed data after it are shown compressed", b.MaxNodes, where(n)).Error()
		return
	}
	b.NotInflated++
	what := "inflation budget of " + budget.Size(b.MaxInflate)
	if b.InflateRoom() > 0 && b.NodeRoom() == 0 {
		what = fmt.Sprintf("span-node budget of %d nodes for inflated records", b.MaxNodes)
	}
	n.Flag = "not inflated: the " + what + " for this frame is spent"
}

// where names the batch (or legacy message) a records node belongs to.
func where(n *span.Node) string {
	if p := n.Parent; p != nil {
		return p.Path()
	}
	return n.Path()
}

// inflate decodes a compressed records area into its own subtree whose
// offsets are relative to the inflated bytes.
func (d *Decoder) inflate(n *span.Node, codec int, area []byte, count int64) {
	raw, ok, cut := d.decompressPartial(n, codec, area, true)
	if !ok {
		return
	}
	startNodes := d.Spans.Count
	root := d.Spans.New(nil, "decompressed", "bytes", 0, span.CatRecord)
	root.Val, root.Bytes, root.Len = span.ValBytes, raw, len(raw)
	root.About = "records after decompression; offsets are within these bytes"
	sub := wire.Reader{B: raw}
	rd := recordReader{d: d, r: &sub, path: "decompressed.", from: n, startNodes: startNodes}
	for i := int64(0); i < count; i++ {
		at := sub.Off
		err := rd.overBudget()
		if err == nil {
			err = rd.record(root, int(i))
		}
		if errors.Is(err, budget.ErrSpent) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			// The record being decoded is dropped whole: its bytes,
			// and all after them, are one leaf that says why.
			cutAfter(root, at)
			d.rest(root, raw, at, fmt.Errorf("at record %d of %d: %w", i, count, err))
			break
		}
		if err != nil && cut != nil {
			// The inflated bytes end where the budget did: the record
			// cut there, and the bytes after the last whole one, are
			// not decoded.
			cutAfter(root, at)
			d.rest(root, raw, at, fmt.Errorf("at record %d of %d: %w", i, count, cut))
			break
		}
		if err != nil {
			root.Err = err
			break
		}
	}
	if d.Budget != nil {
		d.Budget.InflatedNodes += d.Spans.Count - startNodes
	}
	// The inflated tree hangs off the compressed leaf without becoming a
	// child, so that leaves still tile the frame.
	n.Note += fmt.Sprintf(", %d bytes inflated", len(raw))
	n.Detached = root
}

// inflateLegacy decodes the compressed value of a legacy wrapper message:
// an inner MessageSet, shown as a detached tree whose offsets are relative
// to the inflated bytes. Problems are flagged on the node, not returned,
// as for RecordBatch v2.
func (d *Decoder) inflateLegacy(n *span.Node, codec int, value []byte, path string) {
	raw, ok := d.decompress(n, codec, value)
	if !ok {
		return
	}
	startNodes := d.Spans.Count
	root := d.Spans.New(nil, "decompressed", "bytes", 0, span.CatRecordBatch)
	root.Val, root.Bytes, root.Len = span.ValBytes, raw, len(raw)
	root.About = "inner MessageSet after decompression; offsets are within these bytes"
	// The inner decoder does not inflate again (Kafka nests one level),
	// and its node budget is checked per entry.
	inner := Decoder{R: &wire.Reader{B: raw}, Spans: d.Spans, Path: d.Path + path + "decompressed", Budget: d.Budget, legacyNodes: startNodes, legacyFrom: n}
	if err := inner.Decode(root); err != nil {
		root.Err = err
	}
	if d.Budget != nil {
		d.Budget.InflatedNodes += d.Spans.Count - startNodes
	}
	n.Note = fmt.Sprintf("%s compressed, %d bytes inflated", CompressionName(codec), len(raw))
	n.Detached = root
}

// cutAfter removes the children of root that start at or after off (a
// record cut short by the budget).
func cutAfter(root *span.Node, off int) {
	k := len(root.Kids)
	for k > 0 && root.Kids[k-1].Off >= off {
		k--
	}
	root.Kids = root.Kids[:k]
}

// rest covers the bytes of an inflated tree from off on, which the budget
// left undecoded, with one leaf that carries the budget's message.
func (d *Decoder) rest(root *span.Node, raw []byte, off int, err error) {
	if off >= len(raw) {
		return
	}
	u := d.Spans.New(root, "not decoded", "bytes", off, root.Cat)
	u.Val, u.Bytes, u.Len = span.ValBytes, raw[off:], len(raw)-off
	u.About = "inflated bytes the budget left undecoded"
	u.Flag = err.Error()
}

type recordReader struct {
	d    *Decoder
	r    *wire.Reader
	path string
	// from, startNodes and where are set for inflated records, whose
	// nodes the budget bounds: the compressed node, and the node count
	// when its tree started.
	from       *span.Node
	startNodes int64
}

// overBudget returns the budget's error when the inflated records being
// decoded have built more nodes than it allows (checked per record, and
// every 256 headers of a record).
func (rr *recordReader) overBudget() error {
	b := rr.d.Budget
	if b == nil || rr.from == nil {
		return nil
	}
	if b.InflatedNodes+rr.d.Spans.Count-rr.startNodes > b.MaxNodes {
		b.NodesSpent()
		return b.Spend("span-node budget of %d nodes for this frame's inflated records spent at %s; the rest of its records are shown as bytes",
			b.MaxNodes, where(rr.from))
	}
	return b.Err()
}

func (rr *recordReader) fail(off int, path string, err error) error {
	return rr.d.fail(off, rr.path+path, err)
}

func (rr *recordReader) leaf(parent *span.Node, name, typ string, off int, v int64, about string) *span.Node {
	if rr.d.Spans == nil {
		return nil
	}
	n := rr.d.Spans.New(parent, name, typ, off, span.CatRecord)
	n.Val, n.Int, n.Len, n.About = span.ValInt, v, rr.r.Off-off, about
	return n
}

// recAt names a record, and a header in it when hdr >= 0, for error paths.
// The path text is built only when an error needs it.
type recAt struct{ rec, hdr int }

func (a recAt) String() string {
	s := "Record[" + strconv.Itoa(a.rec) + "]."
	if a.hdr >= 0 {
		s += "Header[" + strconv.Itoa(a.hdr) + "]."
	}
	return s
}

func (rr *recordReader) varint(parent *span.Node, name, about string, at recAt) (int32, error) {
	off := rr.r.Off
	v, err := rr.r.Varint()
	if err != nil {
		return 0, rr.fail(off, at.String()+name, err)
	}
	rr.leaf(parent, name, "varint", off, int64(v), about)
	return v, nil
}

// blob reads a varint-length-prefixed key, value or header part.
func (rr *recordReader) blob(parent *span.Node, name string, at recAt, allowNull bool) error {
	off := rr.r.Off
	n, err := rr.r.Varint()
	if err != nil {
		return rr.fail(off, at.String()+name+"Length", err)
	}
	if n < -1 || (n == -1 && !allowNull) {
		return rr.fail(off, at.String()+name+"Length", fmt.Errorf("%w: %d", wire.ErrNegativeLength, n))
	}
	var b []byte
	if n >= 0 {
		if b, err = rr.r.Span(int(n)); err != nil {
			return rr.fail(off, at.String()+name, fmt.Errorf("%w: %s of %d bytes, %d left", wire.ErrTruncated, name, n, rr.r.Remaining()))
		}
	}
	if rr.d.Spans != nil {
		x := rr.d.Spans.New(parent, name, "bytes", off, span.CatRecord)
		x.Val, x.Enc, x.Prefix, x.Bytes, x.Null, x.Len = span.ValBytes, span.EncVarint, int64(n), b, n < 0, rr.r.Off-off
		switch {
		case name == "headerKey":
			x.Val = span.ValString
		case n >= 0 && IsText(b):
			x.Val = span.ValText
		}
	}
	return nil
}

func (rr *recordReader) record(parent *span.Node, idx int) error {
	r := rr.r
	start := r.Off
	var rn *span.Node
	if rr.d.Spans != nil {
		rn = rr.d.Spans.New(parent, "Record", "Record v2", start, span.CatRecord)
		rr.d.Spans.Reserve(rn, 7)
		rn.Index, rn.Val = int32(idx), span.ValStruct
	}
	p := recAt{idx, -1}
	length, err := rr.varint(rn, "length", "bytes of the rest of this record", p)
	if err != nil {
		return err
	}
	bodyStart := r.Off
	if length < 0 || int(length) > r.Remaining() {
		return rr.fail(start, p.String()+"length", fmt.Errorf("%w: record of %d bytes, %d left", ErrRecordLength, length, r.Remaining()))
	}
	end := bodyStart + int(length)
	saved := r.B
	r.B = r.B[:end]
	defer func() { r.B = saved }()
	off := r.Off
	attrs, err := r.Int8()
	if err != nil {
		return rr.fail(off, p.String()+"attributes", err)
	}
	rr.leaf(rn, "attributes", "int8", off, int64(attrs), "unused, 0")
	off = r.Off
	ts, err := r.Varlong()
	if err != nil {
		return rr.fail(off, p.String()+"timestampDelta", err)
	}
	rr.leaf(rn, "timestampDelta", "varlong", off, ts, "relative to baseTimestamp")
	if _, err := rr.varint(rn, "offsetDelta", "relative to baseOffset", p); err != nil {
		return err
	}
	if err := rr.blob(rn, "key", p, true); err != nil {
		return err
	}
	if err := rr.blob(rn, "value", p, true); err != nil {
		return err
	}
	if rr.d.Contents != nil && rn != nil {
		rr.d.Contents(rn.Kids[len(rn.Kids)-2], rn.Kids[len(rn.Kids)-1], rr.d.control)
	}
	hc, err := rr.varint(rn, "headerCount", "number of headers", p)
	if err != nil {
		return err
	}
	if hc < 0 || int(hc) > r.Remaining()/2 {
		return rr.fail(r.Off, p.String()+"headerCount", fmt.Errorf("%w: %d headers", wire.ErrCountTooLarge, hc))
	}
	if rn != nil {
		rr.d.Spans.Reserve(rn, int(hc))
	}
	for h := 0; h < int(hc); h++ {
		if h&255 == 255 {
			if err := rr.overBudget(); err != nil {
				return err
			}
		}
		var hn *span.Node
		if rr.d.Spans != nil {
			hn = rr.d.Spans.New(rn, "Header", "RecordHeader", r.Off, span.CatRecord)
			rr.d.Spans.Reserve(hn, 2)
			hn.Index, hn.Val = int32(h), span.ValStruct
		}
		hs := r.Off
		hp := recAt{idx, h}
		if err := rr.blob(hn, "headerKey", hp, false); err != nil {
			return err
		}
		if err := rr.blob(hn, "headerValue", hp, true); err != nil {
			return err
		}
		if hn != nil {
			hn.Len = r.Off - hs
		}
	}
	if r.Off != end {
		return rr.fail(r.Off, p.String()+"length", fmt.Errorf("%w: %d bytes left in the record", ErrRecordLength, end-r.Off))
	}
	if rn != nil {
		rn.Len = r.Off - start
	}
	return nil
}

// message decodes one legacy MessageSet entry (magic 0 or 1).
func (d *Decoder) message(parent *span.Node, idx int, magic int8) error {
	r := d.R
	start := r.Off
	var mn *span.Node
	if d.Spans != nil {
		mn = d.Spans.New(parent, "Message", "MessageSet v"+strconv.Itoa(int(magic)), start, span.CatRecordBatch)
		mn.Index, mn.Val = int32(idx), span.ValStruct
	}
	p := "[" + strconv.Itoa(idx) + "]."
	cat := span.CatRecordBatch
	off := r.Off
	o, _ := r.Int64()
	d.leaf(mn, "offset", "int64", off, cat, span.ValInt, o, "offset (relative inside a compressed wrapper)")
	off = r.Off
	size, _ := r.Int32()
	d.leaf(mn, "messageSize", "int32", off, cat, span.ValInt, int64(size), "bytes of the message that follows")
	end := r.Off + int(size)
	sub := wire.Reader{B: r.B[:end], Off: r.Off}
	saved := d.R
	d.R = &sub
	defer func() { d.R = saved; r.Off = end }()
	minSize := 14
	if magic == 1 {
		minSize = 22
	}
	if int(size) < minSize {
		return d.fail(off, p+"messageSize", fmt.Errorf("%w: %d is smaller than a v%d message", ErrBatchLength, size, magic))
	}
	off = sub.Off
	crc, _ := sub.Uint32()
	want := crc32.ChecksumIEEE(sub.B[sub.Off:end])
	cn := d.leaf(mn, "crc", "uint32", off, cat, span.ValInt, int64(crc), "CRC-32 (IEEE) of magic through value")
	if cn != nil {
		cn.Note = fmt.Sprintf("0x%08x", crc)
	}
	if crc != want {
		return d.fail(off, p+"crc", fmt.Errorf("%w: message says 0x%08x, bytes give 0x%08x", ErrCRC, crc, want))
	}
	off = sub.Off
	m, _ := sub.Int8()
	d.leaf(mn, "magic", "int8", off, cat, span.ValInt, int64(m), "message format version")
	off = sub.Off
	attrs, _ := sub.Int8()
	an := d.leaf(mn, "attributes", "int8", off, cat, span.ValInt, int64(attrs), "compression codec (bits 0-2)")
	if an != nil {
		an.Note = CompressionName(int(attrs & 7))
	}
	if magic == 1 {
		off = sub.Off
		ts, _ := sub.Int64()
		n := d.leaf(mn, "timestamp", "int64", off, cat, span.ValInt, ts, "message timestamp")
		if n != nil {
			n.Note = TimestampNote(ts)
		}
	}
	for _, name := range []string{"key", "value"} {
		off = sub.Off
		n, err := sub.Int32()
		if err != nil {
			return d.fail(off, p+name+"Length", err)
		}
		if n < -1 {
			return d.fail(off, p+name+"Length", fmt.Errorf("%w: %d", wire.ErrNegativeLength, n))
		}
		var b []byte
		if n >= 0 {
			if b, err = sub.Span(int(n)); err != nil {
				return d.fail(off, p+name, fmt.Errorf("%w: %s of %d bytes, %d left", wire.ErrTruncated, name, n, sub.Remaining()))
			}
		}
		if d.Spans != nil {
			x := d.Spans.New(mn, name, "bytes", off, span.CatRecord)
			x.Val, x.Enc, x.Prefix, x.Bytes, x.Null, x.Len = span.ValBytes, span.EncInt32, int64(n), b, n < 0, sub.Off-off
			if n >= 0 && attrs&7 == 0 && IsText(b) {
				x.Val = span.ValText
			}
			if codec := int(attrs & 7); name == "value" && codec != 0 && n > 0 && d.Decompress != nil {
				d.inflateLegacy(x, codec, b, p)
			}
		}
	}
	if sub.Off != end {
		return d.fail(sub.Off, p+"messageSize", fmt.Errorf("%w: %d bytes left in the message", ErrBatchLength, end-sub.Off))
	}
	if mn != nil {
		mn.Len = end - start
	}
	return nil
}

func plural(n int64, w string) string {
	if n == 1 {
		return "1 " + w
	}
	return strconv.FormatInt(n, 10) + " " + w + "s"
}

// IsText reports whether a record key, value or header value reads as
// text: valid UTF-8 with no control characters other than tab, newline
// and carriage return (C0, DEL and C1 controls mark binary data).
func IsText(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 || r >= 0x80 && r <= 0x9f {
			return false
		}
		i += n
	}
	return true
}
