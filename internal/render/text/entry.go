package text

import (
	"bytes"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/hexout"
	"github.com/manifester/manifester/internal/jsonvalue"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/span"
)

// maxShownBytes is how many bytes of a key or value that is neither text
// nor a record type's message a record line shows, as hex.
const maxShownBytes = 32

// maxHeadersShown is how many of a record's headers its line shows (the
// rest are counted).
const maxHeadersShown = 16

// recordLines writes a line for each record (v2) of a log segment's entry
// (report.KindEntry), those of its inflated batches included, in offset
// order: its offset, its key and its value. A key or value read as an
// internal topic's record type is its type, version and fields as
// compact JSON; other bytes are quoted when they read as text, else hex
// (the first maxShownBytes). The lines are bounded by the frame's output
// budget; the records left out are counted on a last line.
func recordLines(b *bytes.Buffer, f *report.Frame, bud *budget.Budget) {
	t := f.SpanTree()
	if t == nil || t.Root() == span.None {
		return
	}
	rl := recLines{b: b, bud: bud}
	for _, batch := range t.Kids(t.Root()) {
		if t.Name(batch) == "Message" {
			rl.message(t, batch)
			continue
		}
		if t.Name(batch) != "RecordBatch" {
			continue // a partial entry, undecoded bytes
		}
		var base, ts, attrs int64
		for _, k := range t.Kids(batch) {
			switch t.Name(k) {
			case "baseOffset":
				base = t.N(k).Int
			case "attributes":
				attrs = t.N(k).Int
			case "baseTimestamp":
				ts = t.N(k).Int
			case "maxTimestamp":
				// LogAppendTime: every record's timestamp is the batch's
				// maxTimestamp, as Kafka reads it, not base plus delta.
				rl.appendTime = attrs&records.AttrLogAppendTime != 0
				if rl.appendTime {
					ts = t.N(k).Int
				}
			case "Record":
				rl.record(t, k, base, ts)
			}
			if d := t.Detached(k); d != nil && d.Root() != span.None {
				for _, r := range d.Kids(d.Root()) {
					if d.Name(r) == "Record" {
						rl.record(d, r, base, ts)
					}
				}
			}
		}
	}
	if rl.left > 0 {
		b.WriteString("  " + report.OutputSpent(bud, english.Count(rl.left, "record line")) + "\n")
	}
}

type recLines struct {
	b    *bytes.Buffer
	bud  *budget.Budget
	line []byte
	left int // records not shown: the output budget was spent
	// headers are the first maxHeadersShown headers of the record whose
	// line is being written.
	headers []span.ID
	// appendTime: the batch's timestamps are LogAppendTime, its
	// maxTimestamp for every record.
	appendTime bool
}

// notDecoded writes the line of a record (or legacy message) that did not
// decode (a batch claiming more than it holds, a record cut short), and
// reports whether r is one: the entry's error says why, and its fields
// are not all there to show.
func (rl *recLines) notDecoded(what string, t *span.Tree, r span.ID) bool {
	if t.N(r).Len != 0 && !hasErr(t, r) {
		return false
	}
	if rl.left > 0 || rl.bud.OutputRoom() <= 0 {
		rl.left++
		return true
	}
	l := append(rl.line[:0], "  "+what+" "...)
	l = strconv.AppendInt(l, int64(t.N(r).Index), 10)
	l = append(l, ": not decoded (the error above)\n"...)
	rl.line = l
	rl.b.Write(l)
	rl.bud.AddOutput(len(l))
	return true
}

// hasErr reports whether r or a node under it has an error set.
func hasErr(t *span.Tree, r span.ID) bool {
	bad := false
	t.Walk(r, func(id span.ID, _ int) { bad = bad || t.Err(id) != nil })
	return bad
}

// message writes the line of legacy message m of t (magic 0 or 1), or,
// for a compressed wrapper, of each message of its inflated set: at its
// absolute offset (a v1 wrapper's inner offsets are relative, its own
// the last one's) and with the wrapper's timestamp when the wrapper's
// type is LogAppendTime, as Kafka reads them.
func (rl *recLines) message(t *span.Tree, m span.ID) {
	if rl.notDecoded("message", t, m) {
		return
	}
	var offset, magic, attrs, ts int64
	value := span.None
	for _, k := range t.Kids(m) {
		switch t.Name(k) {
		case "offset":
			offset = t.N(k).Int
		case "magic":
			magic = t.N(k).Int
		case "attributes":
			attrs = t.N(k).Int
		case "timestamp":
			ts = t.N(k).Int
		case "value":
			value = k
		}
	}
	if attrs&records.AttrCompression == 0 {
		rl.legacy(t, m, offset, magic >= 1, ts)
		return
	}
	if value == span.None {
		return
	}
	d := t.Detached(value)
	if d == nil || d.Root() == span.None {
		return // left compressed: the entry's error or budget says why
	}
	inner := d.Kids(d.Root())
	var last int64
	for _, im := range inner {
		for _, k := range d.Kids(im) {
			if d.Name(k) == "offset" {
				last = d.N(k).Int
			}
		}
	}
	rl.appendTime = magic == 1 && attrs&records.AttrLogAppendTime != 0
	for _, im := range inner {
		if d.Name(im) != "Message" || rl.notDecoded("message", d, im) {
			continue
		}
		var off, imagic, its int64
		for _, k := range d.Kids(im) {
			switch d.Name(k) {
			case "offset":
				off = d.N(k).Int
			case "magic":
				imagic = d.N(k).Int
			case "timestamp":
				its = d.N(k).Int
			}
		}
		if imagic == 1 {
			off = offset - last + off
		}
		if rl.appendTime {
			its = ts
		}
		rl.legacy(d, im, off, imagic >= 1, its)
	}
	rl.appendTime = false
}

// legacy writes the line of message m (a v0 one has no timestamp).
func (rl *recLines) legacy(t *span.Tree, m span.ID, offset int64, hasTS bool, ts int64) {
	key, value := span.None, span.None
	for _, k := range t.Kids(m) {
		switch t.Name(k) {
		case "key":
			key = k
		case "value":
			value = k
		}
	}
	rl.write(t, offset, hasTS, ts, key, value, 0)
}

// record writes the line of record r of t, in a batch of base offset
// base and base timestamp ts.
func (rl *recLines) record(t *span.Tree, r span.ID, base, ts int64) {
	if rl.notDecoded("record", t, r) {
		return
	}
	var key, value span.ID = span.None, span.None
	headers, offset := int64(0), base
	rl.headers = rl.headers[:0]
	for _, k := range t.Kids(r) {
		switch t.Name(k) {
		case "offsetDelta":
			offset = base + t.N(k).Int
		case "timestampDelta":
			if !rl.appendTime {
				ts += t.N(k).Int
			}
		case "key":
			key = k
		case "value":
			value = k
		case "headerCount":
			headers = t.N(k).Int
		case "Header":
			if len(rl.headers) < maxHeadersShown {
				rl.headers = append(rl.headers, k)
			}
		}
	}
	rl.write(t, offset, true, ts, key, value, headers)
}

// write writes a record's line: its offset, its timestamp (when hasTS)
// with its date, its key and value, its header count.
func (rl *recLines) write(t *span.Tree, offset int64, hasTS bool, ts int64, key, value span.ID, headers int64) {
	if rl.left > 0 || rl.bud.OutputRoom() <= 0 {
		rl.left++
		return
	}
	l := append(rl.line[:0], "  offset "...)
	l = strconv.AppendInt(l, offset, 10)
	if hasTS {
		l = append(l, " timestamp "...)
		l = strconv.AppendInt(l, ts, 10)
		if date := records.TimestampNote(ts); date != "" {
			// The date the tree's note gives the same timestamp.
			l = append(l, " ("...)
			l = append(l, date...)
			if rl.appendTime {
				l = append(l, ", log append time"...)
			}
			l = append(l, ')')
		} else if rl.appendTime {
			l = append(l, " (log append time)"...)
		}
	}
	l = append(l, " key "...)
	l = appendRecordPart(l, t, key)
	l = append(l, " value "...)
	l = appendRecordPart(l, t, value)
	if headers > 0 {
		l = append(l, " headers"...)
		for _, h := range rl.headers {
			hk, hv := span.None, span.None
			for _, k := range t.Kids(h) {
				switch t.Name(k) {
				case "headerKey":
					hk = k
				case "headerValue":
					hv = k
				}
			}
			l = append(l, ' ')
			l = appendHeaderKey(l, t.ValueBytes(hk))
			l = append(l, '=')
			l = appendRecordPart(l, t, hv)
		}
		if more := headers - int64(len(rl.headers)); more > 0 {
			l = append(l, " and "...)
			l = strconv.AppendInt(l, more, 10)
			l = append(l, " more ("...)
			l = append(l, english.Count(headers, "header")...)
			l = append(l, ')')
		}
	}
	rl.line = l
	// The fields' JSON strings hold the records' own text, which JSON
	// leaves raw when printable to it (bidi overrides): escaped here, as
	// every text for the terminal is.
	s := Escape(string(l)) + "\n"
	rl.b.WriteString(s)
	rl.bud.AddOutput(len(s))
}

// appendHeaderKey appends a header's key: as it is when it is a plain
// word (printable, no space, quote, backslash or '='), else quoted.
func appendHeaderKey(dst, k []byte) []byte {
	plain := len(k) > 0 && utf8.Valid(k)
	for _, c := range string(k) {
		if !plain {
			break
		}
		plain = unicode.IsPrint(c) && c != ' ' && c != '"' && c != '\\' && c != '='
	}
	if plain {
		return append(dst, k...)
	}
	return strconv.AppendQuote(dst, string(k))
}

// appendRecordPart appends a record's key or value: "null", its record
// type's message ("OffsetCommitValue v3 {...}"), quoted text, or hex.
func appendRecordPart(dst []byte, t *span.Tree, n span.ID) []byte {
	if n == span.None {
		return append(dst, '-')
	}
	if t.N(n).Null {
		dst = append(dst, "null"...)
		if flag := t.Flag(n); flag != "" {
			// A coordinator record's key, which cannot be null.
			dst = append(append(append(dst, " ("...), flag...), ')')
		}
		return dst
	}
	var version int64
	versioned := false
	for _, k := range t.Kids(n) {
		switch d := t.Desc(k); {
		case t.Name(k) == "version":
			version, versioned = t.N(k).Int, true
		case d != nil && d.Message != nil && d.Message.Body != nil && t.Flag(n) == "":
			// A record read as its schema (a flagged one, which did not,
			// is shown as bytes).
			dst = append(dst, d.Message.Name...)
			if versioned {
				dst = append(dst, " v"...)
				dst = strconv.AppendInt(dst, version, 10)
			}
			dst = append(dst, ' ')
			if js, err := jsonvalue.AppendTree(dst, t, k, d.Message, int16(version), nil); err == nil {
				return js
			}
			return append(dst, "(not shown: its fields do not read as JSON)"...)
		}
	}
	dst = appendBytes(dst, t.ValueBytes(n))
	if flag := t.Flag(n); flag != "" {
		// An internal topic's key or value that is not its record
		// type: why, after its bytes.
		dst = append(dst, " ("...)
		dst = append(dst, flag...)
		dst = append(dst, ')')
	}
	return dst
}

// appendBytes appends v quoted when it reads as text, else as hex (the
// first maxShownBytes, and its size).
func appendBytes(dst, v []byte) []byte {
	switch {
	case records.IsText(v):
		return strconv.AppendQuote(dst, string(v))
	case len(v) > maxShownBytes:
		dst = append(dst, "0x"...)
		dst = hexout.AppendEncode(dst, v[:maxShownBytes])
		dst = append(dst, "... ("...)
		dst = strconv.AppendInt(dst, int64(len(v)), 10)
		return append(dst, " bytes)"...)
	}
	dst = append(dst, "0x"...)
	return hexout.AppendEncode(dst, v)
}
