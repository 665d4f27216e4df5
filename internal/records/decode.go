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
	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

// Decompressor inflates a compressed records area. codec is the attribute
// value (1 gzip, 2 snappy, 3 lz4, 4 zstd).
type Decompressor func(codec int, data []byte) ([]byte, error)

// LimitDecompressor inflates a compressed records area to at most limit
// bytes, into dst's room (dst[:0]) when it is large enough, so that a
// capture loop reuses one buffer per batch. When the data would inflate
// to more, it fails with an error wrapping [ErrRoom] if limit (the room
// left in the budget) was what stopped it, or another error if its own
// per-batch cap did.
type LimitDecompressor func(dst []byte, codec int, data []byte, limit int) ([]byte, error)

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

// FailedError is the error of data that failed to inflate after
// Inflated bytes of it were inflated (a wrong checksum at its end, a
// stream cut short): work done, which counts against a frame's
// inflation budget as inflated bytes do.
type FailedError struct {
	Inflated int
	Err      error
}

func (e *FailedError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *FailedError) Unwrap() error { return e.Err }

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

// Decoder walks a records payload, building span rows when Tree is set.
type Decoder struct {
	// R reads the frame; R.B must end where the records payload ends.
	R *wire.Reader
	// Tree, when not nil, gets the rows of the payload; their offsets are
	// R's (Tree.Bytes is what R reads).
	Tree *span.Tree
	// Path prefixes error paths ("Topics[0].Partitions[0].Records").
	Path string
	// Decompress, when set, inflates compressed batches so their records
	// can be shown; the inflated bytes are a tree of their own (the
	// compressed node's Detached tree) whose offsets are within them.
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
	// legacyFrom is set for the inner MessageSet of an inflated legacy
	// message: the tree and node of its compressed value.
	legacyFrom     span.ID
	legacyFromTree *span.Tree
	// AllowPartial accepts a trailing entry cut short, as brokers may send
	// at the end of a Fetch response; Kafka ignores it. When false (a
	// request, which must carry whole batches) such an entry is an error.
	AllowPartial bool
	// Contents, when set (with Tree), interprets the key and value of
	// every record; see [Contents].
	Contents Contents
	// ControlContents, when set (with Tree) and Contents is not,
	// interprets the key and value of the records of control batches
	// only (a user topic's transaction markers), leaving the others to
	// the fast path.
	ControlContents Contents
	// control is set while the records of a control batch are read.
	control bool
	// errRow is 1 + the row the returned error is set on (0 for none).
	errRow span.ID
}

// contents returns the interpreter of the records being read: Contents,
// or in a control batch ControlContents.
func (d *Decoder) contents() Contents {
	if d.Contents == nil && d.control {
		return d.ControlContents
	}
	return d.Contents
}

// ErrRow returns the row of Tree that the error Decode returned is set
// on, or span.None.
func (d *Decoder) ErrRow() span.ID { return d.errRow - 1 }

// fail makes the decode error at off with path (relative to d.Path) and
// sets it on row (when building a tree).
func (d *Decoder) fail(row span.ID, off int, path string, err error) error {
	de := &wire.DecodeError{Offset: off, Path: d.Path + path, Err: err}
	if d.Tree != nil && row != span.None && d.errRow == 0 {
		a := d.Tree.Extra(row, true)
		if a.Err == nil {
			a.Err = de
		}
		d.errRow = row + 1
	}
	return de
}

// add appends a row under parent (nothing when not building a tree).
func (d *Decoder) add(parent span.ID, desc *span.Desc, off int, cat span.Category) span.ID {
	if d.Tree == nil {
		return span.None
	}
	return d.Tree.Add(parent, desc, off, cat)
}

// leaf adds a leaf node for a fixed-size or varint field read from off.
func (d *Decoder) leaf(parent span.ID, desc *span.Desc, off int, cat span.Category, v int64) span.ID {
	if d.Tree == nil {
		return span.None
	}
	id := d.Tree.Add(parent, desc, off, cat)
	n := d.Tree.N(id)
	n.Val, n.Int, n.Len = span.ValInt, v, int32(d.R.Off-off)
	return id
}

// note sets the decoder's note on row id.
func (d *Decoder) note(id span.ID, note string) {
	if d.Tree != nil && id != span.None {
		d.Tree.Extra(id, true).Note = note
	}
}

// setLen sets the length of row id.
func (d *Decoder) setLen(id span.ID, n int) {
	if d.Tree != nil && id != span.None {
		d.Tree.N(id).Len = int32(n)
	}
}

// Decode reads entries until the end of R.B, as children of parent.
func (d *Decoder) Decode(parent span.ID) error {
	r := d.R
	for r.Remaining() > 0 {
		start := r.Off
		idx := d.Batches
		if err := d.Budget.Err(); err != nil {
			return d.fail(parent, start, "", err)
		}
		if b := d.Budget; b != nil && d.legacyFromTree != nil && b.InflatedNodes+int64(d.Tree.Len()) > b.MaxNodes {
			b.NodesSpent()
			err := b.Spend("span-node budget of %d nodes for this frame's inflated records spent at %s message %d; the rest is shown as bytes", b.MaxNodes, where(d.legacyFromTree, d.legacyFrom), idx)
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
			return d.fail(parent, start+16, "", fmt.Errorf("%w %d in entry %d", ErrMagic, magic, idx))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// partial handles a trailing entry cut short: shown and skipped when
// AllowPartial is set, else an error at the entry.
func (d *Decoder) partial(parent span.ID, start, idx int, why string) error {
	n := span.None
	if d.Tree != nil {
		n = d.Tree.Add(parent, descPartial, start, span.CatRecordBatch)
		row := d.Tree.N(n)
		row.Val, row.VOff, row.VLen, row.Len, row.Index = span.ValBytes, int32(start), int32(len(d.R.B)-start), int32(len(d.R.B)-start), int32(idx)
		a := d.Tree.Extra(n, true)
		a.About = "trailing partial entry, ignored as Kafka does: " + why
		a.Flag = "partial"
	}
	var err error
	if !d.AllowPartial {
		err = d.fail(n, start, "["+strconv.Itoa(idx)+"]", fmt.Errorf("%w: %s; only a response's last entry may be cut short", ErrBatchLength, why))
	}
	d.R.Off = len(d.R.B)
	return err
}

// batchField is a fixed-width field of a batch header after attributes.
var batchFieldSizes = [...]int{4, 8, 8, 8, 2, 4, 4}

// batch decodes one RecordBatch v2. The caller checked that the whole
// entry is present.
func (d *Decoder) batch(parent span.ID, idx int) error {
	r := d.R
	start := r.Off
	bn := d.add(parent, descBatch, start, span.CatRecordBatch)
	if bn != span.None {
		n := d.Tree.N(bn)
		n.Index, n.Val = int32(idx), span.ValStruct
	}
	// p is the batch's path in errors, made only when one needs it.
	p := func() string { return batchPath(idx) }
	cat := span.CatRecordBatch
	off := r.Off
	baseOffset, _ := r.Int64()
	d.leaf(bn, descBaseOffset, off, cat, baseOffset)
	off = r.Off
	batchLength, _ := r.Int32()
	ln := d.leaf(bn, descBatchLength, off, cat, int64(batchLength))
	end := start + 12 + int(batchLength)
	if batchLength < BatchHeaderSize-12 {
		d.setLen(bn, r.Off-start)
		return d.fail(ln, off, p()+"batchLength", fmt.Errorf("%w: %d is smaller than the %d-byte header", ErrBatchLength, batchLength, BatchHeaderSize-12))
	}
	off = r.Off
	ple, _ := r.Int32()
	d.leaf(bn, descPLE, off, cat, int64(ple))
	off = r.Off
	magic, _ := r.Int8()
	d.leaf(bn, descBatchMagic, off, cat, int64(magic))
	off = r.Off
	crc, _ := r.Uint32()
	want := CRC32C(r.B[r.Off:end])
	cn := d.leaf(bn, descBatchCRC, off, cat, int64(crc))
	if cn != span.None {
		d.note(cn, hex32(crc))
	}
	if crc != want {
		d.setLen(bn, r.Off-start)
		return d.fail(cn, off, p()+"crc", fmt.Errorf("%w: batch says 0x%08x, bytes give 0x%08x", ErrCRC, crc, want))
	}
	off = r.Off
	attrs, _ := r.Int16()
	an := d.leaf(bn, descBatchAttrs, off, cat, int64(attrs))
	d.control = attrs&AttrControl != 0
	if an != span.None {
		d.note(an, AttributesText(attrs))
	}
	var count int64
	cnt := span.None
	for i, size := range batchFieldSizes {
		off = r.Off
		var v int64
		switch size {
		case 2:
			x, _ := r.Int16()
			v = int64(x)
		case 4:
			x, _ := r.Int32()
			v = int64(x)
		case 8:
			v, _ = r.Int64()
		}
		cnt = d.leaf(bn, descBatchFields[i], off, cat, v)
		count = v
	}
	if bn != span.None {
		d.note(bn, recordNotes.Of(int64(count)))
	}
	if count < 0 {
		d.setLen(bn, r.Off-start)
		return d.fail(cnt, r.Off-4, p()+"recordsCount", fmt.Errorf("%w: %d", wire.ErrNegativeLength, count))
	}
	codec := int(attrs & 7)
	area := r.B[r.Off:end]
	if codec != 0 {
		if d.Tree != nil {
			n := d.Tree.Add(bn, descCompressed, r.Off, span.CatRecord)
			row := d.Tree.N(n)
			row.Val, row.VOff, row.VLen, row.Len = span.ValBytes, int32(r.Off), int32(len(area)), int32(len(area))
			a := d.Tree.Extra(n, true)
			a.Note = CompressionName(codec) + " compressed"
			a.About = english.Count(count, "record") + ", compressed as one stream"
			if d.Decompress != nil || d.DecompressLimit != nil {
				d.inflate(n, codec, area, count)
			}
		}
		r.Off = end
	} else {
		// The records are read by r itself, cut to the batch's end (a
		// reader of their own would be allocated); on an error r is put
		// back where they start, as it was left before.
		saved, at := r.B, r.Off
		r.B = r.B[:end]
		rd := recordReader{d: d, t: d.Tree, r: r, batch: idx + 1}
		for i := int64(0); i < count; i++ {
			if err := rd.record(bn, int(i)); err != nil {
				d.setLen(bn, r.Off-start)
				r.B, r.Off = saved, at
				return err
			}
		}
		if off := r.Off; off != end {
			d.setLen(bn, off-start)
			r.B, r.Off = saved, at
			return d.fail(bn, off, "["+strconv.Itoa(idx)+"]", fmt.Errorf("%w: %d bytes left after %d records", ErrBatchLength, end-off, count))
		}
		r.B = saved
		r.Off = end
	}
	d.setLen(bn, r.Off-start)
	return nil
}

// batchPath is the path of batch idx in errors, before its field's name.
func batchPath(idx int) string { return "[" + strconv.Itoa(idx) + "]." }

// decompress inflates a compressed area within the budget's room. ok is
// false when the area is left compressed; n is then flagged with why.
func (d *Decoder) decompress(n span.ID, codec int, data []byte) (raw []byte, ok bool) {
	raw, ok, _ = d.decompressPartial(nil, n, codec, data, false)
	return raw, ok
}

func (d *Decoder) flag(n span.ID, flag string) { d.Tree.Extra(n, true).Flag = flag }

// decompressPartial is decompress that, with partial set, returns the
// first bytes of an area that does not fit in the room left (the room's
// worth), with the budget's error: the records that fit are shown.
func (d *Decoder) decompressPartial(dst []byte, n span.ID, codec int, data []byte, partial bool) (raw []byte, ok bool, cut error) {
	b := d.Budget
	if b != nil && (b.InflateRoom() == 0 || b.NodeRoom() == 0) {
		d.notInflated(n)
		return nil, false, nil
	}
	var err error
	switch {
	case b != nil && d.DecompressLimit != nil:
		raw, err = d.DecompressLimit(dst, codec, data, int(min(b.InflateRoom(), math.MaxInt32)))
	case d.DecompressLimit != nil:
		raw, err = d.DecompressLimit(dst, codec, data, math.MaxInt32)
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
				budget.Size(b.MaxInflate), where(d.Tree, n), budget.Size(int64(len(tl.Partial))))
			d.flag(n, "partly inflated: "+cut.Error())
			return tl.Partial, true, cut
		}
		d.spendInflate(n)
		return nil, false, nil
	}
	if err != nil {
		d.flag(n, fmt.Sprintf("%v: %v", ErrCompression, err))
		b.NoteCorrupt(fmt.Sprintf("%s: %v: %v", where(d.Tree, n), ErrCompression, err))
		// Inflating up to the per-batch cap, or as far as the data went
		// before it failed, was work done: it counts.
		var fe *FailedError
		switch {
		case b == nil:
		case errors.As(err, &tl):
			b.AddInflated(tl.Limit)
		case errors.As(err, &fe):
			b.AddInflated(fe.Inflated)
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
func (d *Decoder) spendInflate(n span.ID) {
	b := d.Budget
	b.NotInflated++
	b.InflateSpent()
	err := b.Spend("inflation budget of %s for this frame spent at %s (%s inflated before it); it and the compressed data after it are shown compressed",
		budget.Size(b.MaxInflate), where(d.Tree, n), budget.Size(b.Inflated()))
	d.flag(n, err.Error())
}

// notInflated flags a batch left compressed because the budget was spent
// before it. When the room ran out exactly at the batch before, without
// a batch that did not fit, this batch is where the budget is said to be
// spent.
func (d *Decoder) notInflated(n span.ID) {
	b := d.Budget
	if b.InflateRoom() == 0 && !b.IsInflateSpent() {
		d.spendInflate(n)
		return
	}
	if b.InflateRoom() > 0 && b.NodeRoom() == 0 && !b.IsNodesSpent() {
		b.NodesSpent()
		b.NotInflated++
		d.flag(n, b.Spend("span-node budget of %d nodes for this frame's inflated records spent before %s; it and the compressed data after it are shown compressed", b.MaxNodes, where(d.Tree, n)).Error())
		return
	}
	b.NotInflated++
	what := "inflation budget of " + budget.Size(b.MaxInflate)
	if b.InflateRoom() > 0 && b.NodeRoom() == 0 {
		what = fmt.Sprintf("span-node budget of %d nodes for inflated records", b.MaxNodes)
	}
	d.flag(n, "not inflated: the "+what+" for this frame is spent")
}

// where names the batch (or legacy message) a records node belongs to.
func where(t *span.Tree, n span.ID) string {
	if p := t.N(n).Parent; p != span.None {
		return t.Path(p)
	}
	return t.Path(n)
}

// newDetached starts sub, the tree of inflated bytes raw.
func newDetached(sub *span.Tree, raw []byte, desc *span.Desc, cat span.Category) *span.Tree {
	sub.Reset(raw)
	root := sub.Add(span.None, desc, 0, cat)
	n := sub.N(root)
	n.Val, n.VLen, n.Len = span.ValBytes, int32(len(raw)), int32(len(raw))
	return sub
}

// inflate decodes a compressed records area into a tree of its own whose
// offsets are within the inflated bytes, hung on node n.
func (d *Decoder) inflate(n span.ID, codec int, area []byte, count int64) {
	// The tree and its bytes' room come from a detached tree of the
	// frame tree's previous use, when it has one.
	sub := d.Tree.SpareTree()
	raw, ok, cut := d.decompressPartial(sub.Bytes[:0], n, codec, area, true)
	if !ok {
		d.Tree.ReturnSpare(sub)
		return
	}
	newDetached(sub, raw, descDecompressed, span.CatRecord)
	// Room for the records' rows at once (eight a record without
	// headers), rather than the table regrown and copied as they come:
	// at most what the inflated bytes can hold (a record takes at least
	// seven), and, over all of the frame's batches, what its node budget
	// allows (so that batches claiming records they do not hold cannot
	// make room beyond it). Without a budget, no room is made ahead.
	if b := d.Budget; b != nil {
		rows := min(max(count, 0), int64(len(raw)/7)) * 8
		rows = min(rows, max(0, b.MaxNodes-b.DetachedRows))
		had := cap(sub.Nodes)
		sub.ReserveRows(int(rows))
		if cap(sub.Nodes) != had {
			b.DetachedRows += int64(cap(sub.Nodes))
		}
	}
	sd := &Decoder{Tree: sub, Budget: d.Budget, Contents: d.Contents, ControlContents: d.ControlContents, control: d.control}
	sr := wire.Reader{B: raw}
	sd.R = &sr
	rd := recordReader{d: sd, t: sub, r: &sr, path: "decompressed.", from: n, fromTree: d.Tree}
	for i := int64(0); i < count; i++ {
		at := sr.Off
		err := rd.overBudget()
		if err == nil {
			err = rd.record(0, int(i))
		}
		if errors.Is(err, budget.ErrSpent) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			// The record being decoded is dropped whole: its bytes,
			// and all after them, are one leaf that says why.
			cutAfter(sub, 0, at)
			sd.rest(0, raw, at, fmt.Errorf("at record %d of %d: %w", i, count, err))
			break
		}
		if err != nil && cut != nil {
			// The inflated bytes end where the budget did: the record
			// cut there, and the bytes after the last whole one, are
			// not decoded.
			cutAfter(sub, 0, at)
			sd.rest(0, raw, at, fmt.Errorf("at record %d of %d: %w", i, count, cut))
			break
		}
		if err != nil {
			sub.Extra(0, true).Err = err
			sub.ClearUnread(0)
			d.Budget.NoteCorrupt(fmt.Sprintf("%s: its inflated records do not decode: %v", where(d.Tree, n), err))
			break
		}
	}
	if d.Budget != nil {
		d.Budget.InflatedNodes += int64(sub.Len())
	}
	// The inflated tree hangs off the compressed leaf without becoming a
	// child, so that leaves still tile the frame.
	a := d.Tree.Extra(n, true)
	a.Note += fmt.Sprintf(", %d bytes inflated", len(raw))
	a.Detached = sub
}

// inflateLegacy decodes the compressed value of a legacy wrapper message:
// an inner MessageSet, shown as a detached tree whose offsets are relative
// to the inflated bytes. Problems are flagged on the node, not returned,
// as for RecordBatch v2.
func (d *Decoder) inflateLegacy(n span.ID, codec int, value []byte, path string) {
	raw, ok := d.decompress(n, codec, value)
	if !ok {
		return
	}
	sub := newDetached(d.Tree.SpareTree(), raw, descDecompressedSet, span.CatRecordBatch)
	// The inner decoder does not inflate again (Kafka nests one level),
	// and its node budget is checked per entry.
	inner := Decoder{R: &wire.Reader{B: raw}, Tree: sub, Path: d.Path + path + "decompressed", Budget: d.Budget, Contents: d.Contents, legacyFrom: n, legacyFromTree: d.Tree}
	if err := inner.Decode(0); err != nil {
		a := sub.Extra(0, true)
		if a.Err == nil {
			a.Err = err
		}
		sub.ClearUnread(0)
		if !errors.Is(err, budget.ErrSpent) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			d.Budget.NoteCorrupt(fmt.Sprintf("%s: its inflated messages do not decode: %v", where(d.Tree, n), err))
		}
	}
	if d.Budget != nil {
		d.Budget.InflatedNodes += int64(sub.Len())
	}
	d.Tree.Extra(n, true).Note = fmt.Sprintf("%s compressed, %d bytes inflated", CompressionName(codec), len(raw))
	d.Tree.Extra(n, true).Detached = sub
}

// cutAfter removes the children of root that start at or after off (a
// record cut short by the budget).
func cutAfter(t *span.Tree, root span.ID, off int) {
	kids := t.Kids(root)
	k := len(kids)
	for k > 0 && int(t.N(kids[k-1]).Off) >= off {
		k--
	}
	t.CutKids(root)
	for _, id := range kids[:k] {
		relink(t, root, id)
	}
}

// relink makes id the last child of parent again.
func relink(t *span.Tree, parent, id span.ID) {
	p := t.N(parent)
	t.N(id).Next = span.None
	if p.Last == span.None {
		p.First = id
	} else {
		t.N(p.Last).Next = id
	}
	p.Last = id
}

// rest covers the bytes of an inflated tree from off on, which the budget
// left undecoded, with one leaf that carries the budget's message.
func (d *Decoder) rest(root span.ID, raw []byte, off int, err error) {
	if off >= len(raw) {
		return
	}
	u := d.Tree.Add(root, descNotDecoded, off, d.Tree.N(root).Cat)
	n := d.Tree.N(u)
	n.Val, n.VOff, n.VLen, n.Len = span.ValBytes, int32(off), int32(len(raw)-off), int32(len(raw)-off)
	d.Tree.Extra(u, true).Flag = err.Error()
}

type recordReader struct {
	d    *Decoder
	t    *span.Tree
	r    *wire.Reader
	path string
	// batch, when not 0, is 1 + the index of the batch whose records are
	// read: the path prefix is then batchPath's, made only for an error.
	batch int
	// from and fromTree are set for inflated records, whose nodes the
	// budget bounds: the compressed node and its tree.
	from     span.ID
	fromTree *span.Tree
}

// overBudget returns the budget's error when the inflated records being
// decoded have built more nodes than it allows (checked per record, and
// every 256 headers of a record).
func (rr *recordReader) overBudget() error {
	b := rr.d.Budget
	if b == nil || rr.fromTree == nil {
		return nil
	}
	if b.InflatedNodes+int64(rr.t.Len()) > b.MaxNodes {
		b.NodesSpent()
		return b.Spend("span-node budget of %d nodes for this frame's inflated records spent at %s; the rest of its records are shown as bytes",
			b.MaxNodes, where(rr.fromTree, rr.from))
	}
	return b.Err()
}

func (rr *recordReader) fail(row span.ID, off int, path string, err error) error {
	prefix := rr.path
	if rr.batch != 0 {
		prefix = batchPath(rr.batch - 1)
	}
	return rr.d.fail(row, off, prefix+path, err)
}

// begin adds a leaf under parent at the reader's offset, before its
// bytes are read (so that an error has a row).
func (rr *recordReader) begin(parent span.ID, desc *span.Desc) span.ID {
	if rr.t == nil {
		return span.None
	}
	return rr.t.Add(parent, desc, rr.r.Off, span.CatRecord)
}

// end sets the length of leaf id (begun at off) and its integer value.
func (rr *recordReader) end(id span.ID, off int, v int64) {
	if id != span.None {
		n := rr.t.N(id)
		n.Val, n.Int, n.Len = span.ValInt, v, int32(rr.r.Off-off)
	}
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

// varint1 reads a zig-zag varint that fits in one byte, as most of a
// record's do; ok is false (nothing read) for any other.
func varint1(r *wire.Reader) (v int32, ok bool) {
	if r.Off < len(r.B) {
		if c := r.B[r.Off]; c < 0x80 {
			r.Off++
			return int32(c>>1) ^ -int32(c&1), true
		}
	}
	return 0, false
}

func (rr *recordReader) varint(parent span.ID, desc *span.Desc, at recAt) (int32, span.ID, error) {
	off := rr.r.Off
	if v, ok := varint1(rr.r); ok {
		id := span.None
		if rr.t != nil {
			id = rr.t.AddLeaf(parent, desc, off, 1, span.CatRecord, span.ValInt, int64(v))
		}
		return v, id, nil
	}
	id := rr.begin(parent, desc)
	v, err := rr.r.Varint()
	rr.end(id, off, int64(v))
	if err != nil {
		return 0, id, rr.fail(id, off, at.String()+desc.Name, err)
	}
	return v, id, nil
}

// blob reads a varint-length-prefixed key, value or header part.
func (rr *recordReader) blob(parent span.ID, desc *span.Desc, at recAt, allowNull bool) error {
	off := rr.r.Off
	// The common case, a one-byte length and all the bytes there, in one
	// pass; anything else takes the general path below.
	if n, ok := varint1(rr.r); ok {
		if vs := rr.r.Off; n >= 0 && int(n) <= len(rr.r.B)-vs {
			end := vs + int(n)
			rr.r.Off = end
			if rr.t != nil {
				x := rr.t.Add(parent, desc, off, span.CatRecord)
				row := rr.t.N(x)
				row.Val, row.Enc, row.Prefix, row.Len, row.VOff, row.VLen = span.ValBytes, span.EncVarint, int64(n), int32(end-off), int32(vs), n
				switch {
				case desc == descHeaderKey:
					row.Val = span.ValString
				case IsText(rr.r.B[vs:end]):
					row.Val = span.ValText
				}
			}
			return nil
		}
		rr.r.Off = off
	}
	x := rr.begin(parent, desc)
	name := desc.Name
	n, err := rr.r.Varint()
	if x != span.None {
		row := rr.t.N(x)
		row.Val, row.Enc, row.Prefix, row.Len = span.ValBytes, span.EncVarint, int64(n), int32(rr.r.Off-off)
	}
	if err != nil {
		return rr.fail(x, off, at.String()+name, err)
	}
	if n < -1 || (n == -1 && !allowNull) {
		return rr.fail(x, off, at.String()+name, fmt.Errorf("%w: %d", wire.ErrNegativeLength, n))
	}
	var b []byte
	if n >= 0 {
		vs := rr.r.Off
		if b, err = rr.r.Span(int(n)); err != nil {
			return rr.fail(x, off, at.String()+name, fmt.Errorf("%w: %s of %d bytes, %d left", wire.ErrTruncated, name, n, rr.r.Remaining()))
		}
		if x != span.None {
			row := rr.t.N(x)
			row.VOff, row.VLen = int32(vs), int32(n)
		}
	}
	if x != span.None {
		row := rr.t.N(x)
		row.Null, row.Len = n < 0, int32(rr.r.Off-off)
		switch {
		case desc == descHeaderKey:
			row.Val = span.ValString
		case n >= 0 && IsText(b):
			row.Val = span.ValText
		}
	}
	return nil
}

func (rr *recordReader) record(parent span.ID, idx int) error {
	if rr.d.contents() == nil && !generalOnly && rr.fastRecord(parent, idx) {
		return nil
	}
	r := rr.r
	start := r.Off
	rn := span.None
	if rr.t != nil {
		rn = rr.t.Add(parent, descRecord, start, span.CatRecord)
		n := rr.t.N(rn)
		n.Index, n.Val = int32(idx), span.ValStruct
	}
	err := rr.recordBody(rn, idx)
	if rn != span.None && err == nil {
		rr.t.N(rn).Len = int32(r.Off - start)
	}
	return err
}

func (rr *recordReader) recordBody(rn span.ID, idx int) error {
	r := rr.r
	start := r.Off
	p := recAt{idx, -1}
	length, lid, err := rr.varint(rn, descRecLength, p)
	if err != nil {
		return err
	}
	bodyStart := r.Off
	if length < 0 || int(length) > r.Remaining() {
		return rr.fail(lid, start, p.String()+"length", fmt.Errorf("%w: record of %d bytes, %d left", ErrRecordLength, length, r.Remaining()))
	}
	end := bodyStart + int(length)
	saved := r.B
	r.B = r.B[:end]
	err = rr.recordRest(rn, p, lid, end)
	r.B = saved
	return err
}

// recordRest reads a record after its length, to end (the reader ends
// there).
func (rr *recordReader) recordRest(rn span.ID, p recAt, lid span.ID, end int) error {
	r := rr.r
	off := r.Off
	aid := rr.begin(rn, descRecAttrs)
	attrs, err := r.Int8()
	rr.end(aid, off, int64(attrs))
	if err != nil {
		return rr.fail(aid, off, p.String()+"attributes", err)
	}
	off = r.Off
	tid := rr.begin(rn, descTSDelta)
	ts, err := r.Varlong()
	rr.end(tid, off, ts)
	if err != nil {
		return rr.fail(tid, off, p.String()+"timestampDelta", err)
	}
	if _, _, err := rr.varint(rn, descOffDelta, p); err != nil {
		return err
	}
	if err := rr.blob(rn, descKey, p, true); err != nil {
		return err
	}
	if err := rr.blob(rn, descValue, p, true); err != nil {
		return err
	}
	if contents := rr.d.contents(); contents != nil && rn != span.None {
		v := rr.t.N(rn).Last
		k := v - 1 // the key is the row before the value (it has no children yet)
		contents(rr.t, k, v, rr.d.control)
	}
	hoff := r.Off
	hc, hid, err := rr.varint(rn, descHeaderCount, p)
	if err != nil {
		return err
	}
	if hc < 0 {
		return rr.fail(hid, hoff, p.String()+"headerCount", fmt.Errorf("%w: %d", ErrHeaderCount, hc))
	}
	if int(hc) > r.Remaining()/2 {
		return rr.fail(hid, hoff, p.String()+"headerCount", fmt.Errorf("%w: %d headers", wire.ErrCountTooLarge, hc))
	}
	for h := 0; h < int(hc); h++ {
		if h&255 == 255 {
			if err := rr.overBudget(); err != nil {
				return err
			}
		}
		hs := r.Off
		hn := span.None
		if rr.t != nil {
			hn = rr.t.Add(rn, descHeader, hs, span.CatRecord)
			n := rr.t.N(hn)
			n.Index, n.Val = int32(h), span.ValStruct
		}
		hp := recAt{p.rec, h}
		err := rr.blob(hn, descHeaderKey, hp, false)
		if err == nil {
			err = rr.blob(hn, descHeaderValue, hp, true)
		}
		if hn != span.None {
			rr.t.N(hn).Len = int32(r.Off - hs)
		}
		if err != nil {
			return err
		}
	}
	if r.Off != end {
		return rr.fail(lid, r.Off, p.String()+"length", fmt.Errorf("%w: %d bytes left in the record", ErrRecordLength, end-r.Off))
	}
	return nil
}

// message decodes one legacy MessageSet entry (magic 0 or 1).
func (d *Decoder) message(parent span.ID, idx int, magic int8) (err error) {
	r := d.R
	start := r.Off
	mn := d.add(parent, descMessage[magic], start, span.CatRecordBatch)
	if mn != span.None {
		n := d.Tree.N(mn)
		n.Index, n.Val = int32(idx), span.ValStruct
	}
	p := "[" + strconv.Itoa(idx) + "]."
	cat := span.CatRecordBatch
	off := r.Off
	o, _ := r.Int64()
	d.leaf(mn, descMsgOffset, off, cat, o)
	off = r.Off
	size, _ := r.Int32()
	sn := d.leaf(mn, descMsgSize, off, cat, int64(size))
	end := r.Off + int(size)
	sub := wire.Reader{B: r.B[:end], Off: r.Off}
	saved := d.R
	d.R = &sub
	defer func() {
		d.R = saved
		r.Off = end
		if mn != span.None && err == nil {
			d.Tree.N(mn).Len = int32(end - start)
		}
	}()
	minSize := 14
	if magic == 1 {
		minSize = 22
	}
	if int(size) < minSize {
		return d.fail(sn, off, p+"messageSize", fmt.Errorf("%w: %d is smaller than a v%d message", ErrBatchLength, size, magic))
	}
	off = sub.Off
	crc, _ := sub.Uint32()
	want := crc32.ChecksumIEEE(sub.B[sub.Off:end])
	cn := d.leaf(mn, descMsgCRC, off, cat, int64(crc))
	if cn != span.None {
		d.note(cn, hex32(crc))
	}
	if crc != want {
		return d.fail(cn, off, p+"crc", fmt.Errorf("%w: message says 0x%08x, bytes give 0x%08x", ErrCRC, crc, want))
	}
	off = sub.Off
	m, _ := sub.Int8()
	d.leaf(mn, descMsgMagic, off, cat, int64(m))
	off = sub.Off
	attrs, _ := sub.Int8()
	an := d.leaf(mn, descMsgAttrs, off, cat, int64(attrs))
	d.note(an, CompressionName(int(attrs&7)))
	if magic == 1 {
		off = sub.Off
		ts, _ := sub.Int64()
		d.leaf(mn, descMsgTS, off, cat, ts)
	}
	var kv [2]span.ID
	for i, desc := range descMsgKeyValue {
		name := desc.Name
		off = sub.Off
		x := d.add(mn, desc, off, span.CatRecord)
		kv[i] = x
		var n int32
		n, err = sub.Int32()
		if x != span.None {
			row := d.Tree.N(x)
			row.Val, row.Enc, row.Prefix, row.Len = span.ValBytes, span.EncInt32, int64(n), int32(sub.Off-off)
		}
		if err != nil {
			return d.fail(x, off, p+name, err)
		}
		if n < -1 {
			return d.fail(x, off, p+name, fmt.Errorf("%w: %d", wire.ErrNegativeLength, n))
		}
		var b []byte
		if n >= 0 {
			vs := sub.Off
			if b, err = sub.Span(int(n)); err != nil {
				return d.fail(x, off, p+name, fmt.Errorf("%w: %s of %d bytes, %d left", wire.ErrTruncated, name, n, sub.Remaining()))
			}
			if x != span.None {
				row := d.Tree.N(x)
				row.VOff, row.VLen = int32(vs), n
			}
		}
		if x != span.None {
			row := d.Tree.N(x)
			row.Null, row.Len = n < 0, int32(sub.Off-off)
			if n >= 0 && attrs&7 == 0 && IsText(b) {
				row.Val = span.ValText
			}
			if codec := int(attrs & 7); i == 1 && codec != 0 && n > 0 && d.Decompress != nil {
				d.inflateLegacy(x, codec, b, p)
			}
		}
	}
	if d.Contents != nil && mn != span.None && attrs&7 == 0 {
		// An internal topic's key and value, as in a v2 record (an old
		// __consumer_offsets segment's messages).
		d.Contents(d.Tree, kv[0], kv[1], false)
	}
	if sub.Off != end {
		return d.fail(sn, sub.Off, p+"messageSize", fmt.Errorf("%w: %d bytes left in the message", ErrBatchLength, end-sub.Off))
	}
	return nil
}

// The classes of a byte that IsText tells apart.
const (
	textASCII    = iota // printable ASCII, tab, newline, carriage return
	textBad             // another control, DEL, a continuation byte or no UTF-8 lead
	textLead2           // the lead of a two-byte sequence (C2-DF)
	textLongLead        // the lead of a three- or four-byte sequence (E0-F4)
)

// textClass is the class of each byte value.
var textClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c == '\t' || c == '\n' || c == '\r' || c >= 0x20 && c < 0x7f:
			t[c] = textASCII
		case c >= 0xc2 && c <= 0xdf:
			t[c] = textLead2
		case c >= 0xe0 && c <= 0xf4:
			t[c] = textLongLead
		default:
			t[c] = textBad
		}
	}
	return t
}()

// hex32 formats v as 0x and eight hex digits.
func hex32(v uint32) string {
	const digits = "0123456789abcdef"
	var b [10]byte
	b[0], b[1] = '0', 'x'
	for i := 9; i >= 2; i-- {
		b[i] = digits[v&15]
		v >>= 4
	}
	return string(b[:])
}

// recordNotes are the notes of record counts, which every batch has.
var recordNotes = english.NewCounts("record", 64)

// IsText reports whether a record key, value or header value reads as
// text: valid UTF-8 with no control characters other than tab, newline
// and carriage return (C0, DEL and C1 controls mark binary data).
func IsText(b []byte) bool {
	i := 0
	// Eight bytes at a time while they are printable ASCII (0x20-0x7e):
	// no high bit, none below 0x20, none equal to 0x7f.
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		y := x ^ (0x7f * ones)
		if x&highs != 0 || (x-0x20*ones)&^x&highs != 0 || (y-ones)&^y&highs != 0 {
			break
		}
	}
	for i < len(b) {
		c := b[i]
		switch textClass[c] {
		case textASCII:
			i++
		case textBad:
			return false
		case textLead2:
			// Two bytes: valid with any continuation byte, text unless
			// it is a C1 control (U+0080-U+009F: C2 80 to C2 9F).
			if i+1 >= len(b) {
				return false
			}
			if c1 := b[i+1]; c1&0xc0 != 0x80 || c == 0xc2 && c1 < 0xa0 {
				return false
			}
			i += 2
		default:
			// Three or four bytes: U+0800 and up, never a control.
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 {
				return false
			}
			i += n
		}
	}
	return true
}
