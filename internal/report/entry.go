package report

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/records"
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

// entrySummary is the summary line of an entry, from its header's bytes:
// "entry batch offsets 100-102, 3 records, zstd, 250 bytes at position
// 4096" (the position is its offset in the file, as Kafka calls it).
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
		if attrs&0x20 != 0 {
			kind = "control batch"
		}
		if attrs&0x10 != 0 {
			kind = "transactional " + kind
		}
		facts = append(facts, fmt.Sprintf("%s offsets %d-%d", kind, base, last), english.Count(int(count), "record"))
		if codec := int(attrs & 7); codec != 0 {
			facts = append(facts, records.CompressionName(codec))
		}
	case len(b) >= 17 && (b[16] == 0 || b[16] == 1):
		facts = append(facts, fmt.Sprintf("message v%d at offset %d", b[16], int64(binary.BigEndian.Uint64(b))))
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
