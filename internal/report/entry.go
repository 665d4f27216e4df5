package report

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

// KindEntry is the Kind of the report of a log segment's entry: a record
// batch, or a legacy message set's entry.
const KindEntry = "entry"

// headerUnread are the frame header's facts, none of which an entry has.
const headerUnread = FactAPIKey | FactVersion | FactCorrelationID | FactHeaderVersion

// DecodeEntry decodes one entry of a log segment (package logseg), its
// base offset and length included, and reports on it as a frame of kind
// KindEntry whose tree is the entry's records area
// ([codec.Codec.DecodeRecords]): the records of topic's internal topic
// decoded, budgets as for a frame of its size. partial says the file ends
// inside the entry: it is then shown, noted and not counted as an error,
// as Kafka's log reader ignores such an end. The caller sets Index and
// Offset (the entry's position in the file). It never fails: problems
// are in the report.
func DecodeEntry(c *codec.Codec, b []byte, topic string, partial bool, o Options) *Frame {
	bud := o.Budget
	if bud == nil {
		bud = o.Limits.For(o.Ctx, len(b))
	}
	spentBefore, notInflatedBefore := len(bud.Spent()), bud.NotInflated
	t, err := c.DecodeRecords(b, topic, partial, codec.Options{Budget: bud, Tree: o.Tree})
	if err == nil {
		err = inflatedError(t)
	}
	r := &Frame{Kind: KindEntry, Size: len(b), Bytes: b, Spans: t, Err: err, Unread: headerUnread, lean: o.Lean, bud: bud}
	r.Budget = budgetNote(bud, spentBefore, notInflatedBefore)
	if !o.Lean {
		r.Hex = hex.EncodeToString(b)
	}
	if partial {
		r.entryCut = true
		r.Note = "the file ends inside this entry (a segment being written, or cut short): shown, and ignored as Kafka's log reader ignores it"
	}
	if err != nil {
		r.setError(err)
	}
	return r
}

// inflatedError returns the first problem of t's compressed batches (and
// legacy wrapper messages), which the decoder leaves on their nodes
// rather than returning, as a capture's frame shows them: data that does
// not inflate, or inflated records that do not decode. In a log segment
// either is an entry that cannot be read (Kafka's reader throws on it),
// so it is the entry's error, at the compressed field's offset, its path
// the field's and then the inflated bytes' own.
func inflatedError(t *span.Tree) error {
	if t == nil || t.Root() == span.None {
		return nil
	}
	for _, entry := range t.Kids(t.Root()) {
		for _, n := range t.Kids(entry) {
			path := func() string { return t.Name(t.Root()) + t.Path(n) } // "Records[0].records"
			at := int(t.N(n).Off)
			if flag := t.Flag(n); strings.HasPrefix(flag, records.ErrCompression.Error()) {
				return &wire.DecodeError{Offset: at, Path: path(), Err: errors.New(flag)}
			}
			d := t.Detached(n)
			if d == nil || d.Root() == span.None {
				continue
			}
			var derr error
			d.Walk(d.Root(), func(id span.ID, _ int) {
				if derr == nil {
					derr = d.Err(id)
				}
			})
			if derr == nil {
				continue
			}
			var de *wire.DecodeError
			if !errors.As(derr, &de) {
				return &wire.DecodeError{Offset: at, Path: path(), Err: derr}
			}
			p := de.Path
			if strings.HasPrefix(p, "decompressed") {
				// A batch's inflated records name their path from there.
				p = path() + "." + p
			}
			return &wire.DecodeError{Offset: at, Path: p,
				Err: fmt.Errorf("%w (at byte %d of the %d bytes inflated)", de.Err, de.Offset, len(d.Bytes))}
		}
	}
	return nil
}

// entrySummary is the summary line of an entry, from its header's bytes:
// "entry batch offsets 100-102, 3 records, zstd, producer 7 epoch 0
// sequence 12, 250 bytes at position 4096" (the producer when the batch
// has one; the position is its offset in the file, as Kafka calls it).
func (f *Frame) entrySummary() string {
	b := f.Bytes
	var facts []string
	switch {
	case len(b) >= 61 && b[16] == 2:
		base := int64(binary.BigEndian.Uint64(b))
		attrs := binary.BigEndian.Uint16(b[21:])
		last := base + int64(int32(binary.BigEndian.Uint32(b[23:])))
		count := int32(binary.BigEndian.Uint32(b[57:]))
		kind := "batch"
		if attrs&records.AttrControl != 0 {
			kind = "control batch"
		}
		if attrs&records.AttrTransactional != 0 {
			kind = "transactional " + kind
		}
		facts = append(facts, fmt.Sprintf("%s offsets %d-%d", kind, base, last), english.Count(int(count), "record"))
		if codec := int(attrs & records.AttrCompression); codec != 0 {
			facts = append(facts, records.CompressionName(codec))
		}
		// An idempotent or transactional producer's batch: who wrote it
		// (what a stuck transaction is looked up by).
		if pid := int64(binary.BigEndian.Uint64(b[43:])); pid >= 0 {
			p := fmt.Sprintf("producer %d epoch %d", pid, int16(binary.BigEndian.Uint16(b[51:])))
			if seq := int32(binary.BigEndian.Uint32(b[53:])); seq >= 0 {
				p += fmt.Sprintf(" sequence %d", seq)
			}
			facts = append(facts, p)
		}
	case len(b) >= 17 && (b[16] == 0 || b[16] == 1):
		facts = append(facts, fmt.Sprintf("message v%d at offset %d", b[16], int64(binary.BigEndian.Uint64(b))))
		if len(b) >= 18 && b[17]&records.AttrCompression != 0 {
			facts = append(facts, records.CompressionName(int(b[17]&records.AttrCompression)))
		}
	case len(b) >= 8:
		facts = append(facts, fmt.Sprintf("base offset %d", int64(binary.BigEndian.Uint64(b))))
	}
	facts = append(facts, fmt.Sprintf("%d bytes at position %d", f.Size, f.Offset))
	s := f.Kind + " " + strings.Join(facts, ", ")
	if f.entryCut {
		s += " (cut: the file ends)"
	}
	return s
}
