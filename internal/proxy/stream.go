package proxy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// The job stream carries the decoding queue's entries from a proxy whose
// Config.DecodeTo is set to a decoding process ([DecodeStream]): the
// items in the order the feeder took them, each with the skip and drop
// counts reported before it. It is this package's own format, between
// two processes of the same binary: a header (streamMagic), then one
// record per job, a 32-bit big-endian length and that many bytes:
//
//	flags        byte: 1 a skipped event follows, 2 an item follows
//	[event]      the skipped event
//	[item]       kind byte, the connection (id, client, listener,
//	             upstream), then for kindEvent an event, else the frame:
//	             data, original (nil or not), rewritten, the paired
//	             request (api key, version, correlation id, size, raw,
//	             how long before the frame it was seen), paired, the
//	             frame's time, index and offset
//
// An event is its kind, time, connection fields, dir, detail, data,
// original, rewritten and count. Integers are varints, times nanoseconds
// since 1970, byte strings a uvarint length and the bytes (length+1 where
// nil and empty differ, 0 for nil). Queued events never carry a report
// (Event.Frame): the decoding side makes those.
const streamMagic = "MFXDEC2\n"

// Job record flags.
const (
	recSkipped = 1 << iota
	recItem
)

// maxRecordOverhead bounds a record beyond its frame's two byte strings
// (data and original, see maxRecord).
const maxRecordOverhead = 64 << 10

// appendJob appends j's record (length included) to b.
func appendJob(b []byte, j *job) []byte {
	b, _, _ = appendJobSplit(b, nil, j, false)
	return b
}

// directMin is the least frame data the sending feeder writes from where
// it lies rather than copying it into its buffer (appendJobSplit).
const directMin = 64 << 10

// appendJobSplit appends j's record to b as appendJob does, unless split
// is set and the record carries a frame's data of directMin bytes or more
// in a slice of its own (a held response): b then ends where the data
// would begin, data is that slice, and the rest of the record (after the
// data) is appended to rest. Written in turn, b, data and rest are the
// record appendJob makes; its length prefix counts all three.
func appendJobSplit(b, rest []byte, j *job, split bool) (head, data, tail []byte) {
	start, restStart := len(b), len(rest)
	b = append(b, 0, 0, 0, 0) // the length, filled in below
	body := len(b)
	var flags byte
	if j.skipped != nil {
		flags |= recSkipped
	}
	if j.it != nil {
		flags |= recItem
	}
	b = append(b, flags)
	if j.skipped != nil {
		b = appendEvent(b, j.skipped)
	}
	if it := j.it; it != nil {
		b = append(b, byte(it.kind))
		base := &Event{} // the proxy's own events have no connection
		if it.conn != nil {
			base = &it.conn.base
		}
		b = binary.AppendVarint(b, int64(base.Conn))
		b = appendString(b, base.Client)
		b = appendString(b, base.Listener)
		b = appendString(b, base.Upstream)
		switch {
		case it.kind == kindEvent:
			b = appendEvent(b, it.ev)
		case split && len(it.data) >= directMin:
			b = binary.AppendUvarint(b, uint64(len(it.data)))
			data = it.data
			rest = appendFrameTail(rest, it)
		case it.data != nil:
			b = appendFrameTail(appendBytes(b, it.data), it)
		default: // still in the queue's copy: taken from it here
			b = binary.AppendUvarint(b, uint64(it.body.len()))
			b = appendFrameTail(it.body.appendTo(b), it)
		}
	}
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-body+len(data)+len(rest)-restStart))
	return b, data, rest
}

// appendFrameTail appends what a frame's record holds after its data.
func appendFrameTail(b []byte, it *item) []byte {
	b = appendNullable(b, it.original)
	b = appendBool(b, it.rewritten)
	r := &it.req
	b = binary.AppendVarint(b, int64(r.APIKey))
	b = binary.AppendVarint(b, int64(r.Version))
	b = binary.AppendVarint(b, int64(r.CorrelationID))
	b = binary.AppendVarint(b, int64(r.Size))
	b = appendBool(b, r.Raw)
	var before time.Duration
	if it.paired {
		before = it.at.Sub(r.Time) // on the monotonic clock
	}
	b = binary.AppendVarint(b, int64(before))
	b = appendBool(b, it.paired)
	b = binary.AppendVarint(b, it.at.UnixNano())
	b = binary.AppendVarint(b, int64(it.index))
	return binary.AppendVarint(b, it.offset)
}

func appendEvent(b []byte, e *Event) []byte {
	b = append(b, byte(e.Kind))
	b = binary.AppendVarint(b, e.Time.UnixNano())
	b = binary.AppendVarint(b, int64(e.Conn))
	b = appendString(b, e.Client)
	b = appendString(b, e.Listener)
	b = appendString(b, e.Upstream)
	b = appendString(b, e.Dir)
	b = appendString(b, e.Detail)
	b = appendNullable(b, e.Data)
	b = appendNullable(b, e.Original)
	b = appendBool(b, e.Rewritten)
	return binary.AppendVarint(b, int64(e.Count))
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendNullable(b, v []byte) []byte {
	if v == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(v))+1)
	return append(b, v...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// streamReader reads the job stream: one record at a time, each field
// checked against what is left of its record.
type streamReader struct {
	r      *bufio.Reader
	max    int   // the largest record allowed
	off    int64 // where the current record starts in the stream
	next   int64 // where the next one does
	rec    []byte
	pos    int // in rec
	field  string
	conns  map[int]*conn
	newCon func(base Event) *conn
}

// errStream reports a malformed job stream: where, and in which field.
type errStream struct {
	off   int64
	field string
	msg   string
}

func (e *errStream) Error() string {
	return fmt.Sprintf("decoding stream: record at byte %d, %s: %s", e.off, e.field, e.msg)
}

func newStreamReader(r io.Reader, maxRecord int, newConn func(base Event) *conn) (*streamReader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var magic [len(streamMagic)]byte
	if n, err := io.ReadFull(br, magic[:]); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF // nothing was sent
		}
		return nil, &errStream{0, "header", fmt.Sprintf("%d of %d bytes: %v", n, len(magic), err)}
	}
	if string(magic[:]) != streamMagic {
		return nil, &errStream{0, "header", fmt.Sprintf("%q is not a manifester decoding stream", magic[:])}
	}
	maxRecord = min(maxRecord, math.MaxUint32) // lengths are 32-bit
	return &streamReader{r: br, max: maxRecord, next: int64(len(magic)), conns: map[int]*conn{}, newCon: newConn}, nil
}

// job reads the next record; io.EOF at the end of the stream (between
// records).
func (s *streamReader) job() (*job, error) {
	s.off, s.field = s.next, "length"
	var size [4]byte
	if k, err := io.ReadFull(s.r, size[:]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, s.fail(fmt.Sprintf("%d of 4 bytes: %v", k, noEOF(err)))
	}
	n := binary.BigEndian.Uint32(size[:])
	if int64(n) > int64(s.max) {
		return nil, s.fail(fmt.Sprintf("%d bytes, over the limit of %d", n, s.max))
	}
	var err error
	// The record is read as its bytes arrive: a lying length costs what
	// was sent, not what it claims (a pooled buffer is taken for at most
	// recPooled of it). Each record has a buffer of its own, which its
	// job's byte strings point into; the emitter gives it back
	// (Config.ReuseTrees).
	if s.rec, err = readGrowing(s.r, getHeld(min(int(n), recPooled), recPooled), int(n)); err != nil {
		s.field = "body"
		return nil, s.fail(fmt.Sprintf("%d of %d bytes: %v", len(s.rec), n, noEOF(err)))
	}
	s.next = s.off + 4 + int64(n)
	s.pos = 0
	j, err := s.parse()
	if j != nil {
		j.rec = s.rec
	}
	if err == nil && s.pos != len(s.rec) {
		s.field = "end"
		err = s.fail(fmt.Sprintf("%d bytes left over", len(s.rec)-s.pos))
	}
	return j, err
}

// recPooled is the most of a record read into a pooled buffer from the
// start: a longer one grows from it as its bytes arrive.
const recPooled = 1 << 20

// readGrowing appends n bytes of r to b, growing b by at most 1 MiB
// beyond what has arrived.
func readGrowing(r io.Reader, b []byte, n int) ([]byte, error) {
	for len(b) < n {
		chunk := min(n-len(b), 1<<20)
		b = growLen(b, chunk)
		k, err := io.ReadFull(r, b[len(b)-chunk:])
		b = b[:len(b)-chunk+k]
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

func growLen(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), max(2*cap(b), len(b)+n))
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func (s *streamReader) fail(msg string) error { return &errStream{s.off, s.field, msg} }

func (s *streamReader) parse() (*job, error) {
	j := &job{}
	s.field = "flags"
	flags, err := s.byte()
	if err != nil {
		return nil, err
	}
	if flags&^(recSkipped|recItem) != 0 || flags == 0 {
		return nil, s.fail(fmt.Sprintf("flags %#x", flags))
	}
	if flags&recSkipped != 0 {
		if j.skipped, err = s.event("skipped"); err != nil {
			return nil, err
		}
	}
	if flags&recItem == 0 {
		return j, nil
	}
	it := &item{}
	s.field = "item.kind"
	k, err := s.byte()
	if err != nil {
		return nil, err
	}
	if it.kind = itemKind(k); it.kind > kindRawResponse {
		return nil, s.fail(fmt.Sprintf("kind %d", k))
	}
	var base Event
	if base.Conn, err = s.int("item.conn", 0, 1<<31-1); err != nil {
		return nil, err
	}
	if base.Client, err = s.string("item.client"); err != nil {
		return nil, err
	}
	if base.Listener, err = s.string("item.listener"); err != nil {
		return nil, err
	}
	if base.Upstream, err = s.string("item.upstream"); err != nil {
		return nil, err
	}
	it.conn = s.conn(base)
	j.it = it
	if it.kind == kindEvent {
		if it.ev, err = s.event("item.event"); err != nil {
			return nil, err
		}
		if it.ev.Kind == EventClose && base.Conn != 0 {
			delete(s.conns, base.Conn) // a connection's last event
		}
		return j, nil
	}
	if it.data, err = s.bytes("item.data", false); err != nil {
		return nil, err
	}
	if it.original, err = s.bytes("item.original", true); err != nil {
		return nil, err
	}
	if it.rewritten, err = s.bool("item.rewritten"); err != nil {
		return nil, err
	}
	r := &it.req
	var v int
	if v, err = s.int("item.request.api_key", -1<<15, 1<<15-1); err != nil {
		return nil, err
	}
	r.APIKey = int16(v)
	if v, err = s.int("item.request.version", -1<<15, 1<<15-1); err != nil {
		return nil, err
	}
	r.Version = int16(v)
	if v, err = s.int("item.request.correlation_id", -1<<31, 1<<31-1); err != nil {
		return nil, err
	}
	r.CorrelationID = int32(v)
	if r.Size, err = s.int("item.request.size", 0, 1<<62); err != nil {
		return nil, err
	}
	if r.Raw, err = s.bool("item.request.raw"); err != nil {
		return nil, err
	}
	before, err := s.varint("item.request.before")
	if err != nil {
		return nil, err
	}
	if it.paired, err = s.bool("item.paired"); err != nil {
		return nil, err
	}
	at, err := s.varint("item.time")
	if err != nil {
		return nil, err
	}
	it.at = time.Unix(0, at)
	r.Time = it.at.Add(-time.Duration(before))
	if it.index, err = s.int("item.index", 0, 1<<62); err != nil {
		return nil, err
	}
	if it.offset, err = s.varint("item.offset"); err != nil {
		return nil, err
	}
	if it.offset < 0 {
		return nil, s.fail("negative")
	}
	return j, nil
}

// conn is the connection of an item: one per connection id, which keeps
// the connection's secrets tracker (its SASL exchange, in order) from one
// frame to the next.
func (s *streamReader) conn(base Event) *conn {
	if c, ok := s.conns[base.Conn]; ok && c.base.Client == base.Client && c.base.Listener == base.Listener && c.base.Upstream == base.Upstream {
		return c
	}
	c := s.newCon(base)
	s.conns[base.Conn] = c
	return c
}

func (s *streamReader) event(field string) (*Event, error) {
	e := &Event{}
	s.field = field + ".kind"
	k, err := s.byte()
	if err != nil {
		return nil, err
	}
	if e.Kind = EventKind(k); e.Kind > EventUnlisten {
		return nil, s.fail(fmt.Sprintf("kind %d", k))
	}
	t, err := s.varint(field + ".time")
	if err != nil {
		return nil, err
	}
	e.Time = time.Unix(0, t)
	if e.Conn, err = s.int(field+".conn", 0, 1<<31-1); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{".client", &e.Client}, {".listener", &e.Listener}, {".upstream", &e.Upstream}, {".dir", &e.Dir}, {".detail", &e.Detail}} {
		if *f.dst, err = s.string(field + f.name); err != nil {
			return nil, err
		}
	}
	if e.Data, err = s.bytes(field+".data", true); err != nil {
		return nil, err
	}
	if e.Original, err = s.bytes(field+".original", true); err != nil {
		return nil, err
	}
	if e.Rewritten, err = s.bool(field + ".rewritten"); err != nil {
		return nil, err
	}
	if e.Count, err = s.int(field+".count", 0, 1<<62); err != nil {
		return nil, err
	}
	return e, nil
}

func (s *streamReader) byte() (byte, error) {
	if s.pos >= len(s.rec) {
		return 0, s.fail("the record ends")
	}
	s.pos++
	return s.rec[s.pos-1], nil
}

func (s *streamReader) bool(field string) (bool, error) {
	s.field = field
	b, err := s.byte()
	if err == nil && b > 1 {
		err = s.fail(fmt.Sprintf("%d is not a boolean", b))
	}
	return b == 1, err
}

func (s *streamReader) varint(field string) (int64, error) {
	s.field = field
	v, n := binary.Varint(s.rec[s.pos:])
	if n <= 0 {
		return 0, s.fail("not a varint")
	}
	s.pos += n
	return v, nil
}

func (s *streamReader) int(field string, lo, hi int64) (int, error) {
	v, err := s.varint(field)
	if err == nil && (v < lo || v > hi) {
		err = s.fail(fmt.Sprintf("%d is out of range", v))
	}
	return int(v), err
}

// bytes reads a byte string; nullable ones may be nil (a 0 length).
func (s *streamReader) bytes(field string, nullable bool) ([]byte, error) {
	s.field = field
	n, k := binary.Uvarint(s.rec[s.pos:])
	if k <= 0 {
		return nil, s.fail("not a length")
	}
	s.pos += k
	if nullable {
		if n == 0 {
			return nil, nil
		}
		n--
	}
	if n > uint64(len(s.rec)-s.pos) {
		return nil, s.fail(fmt.Sprintf("%d bytes, %d left in the record", n, len(s.rec)-s.pos))
	}
	b := s.rec[s.pos : s.pos+int(n) : s.pos+int(n)]
	s.pos += int(n)
	return b, nil
}

func (s *streamReader) string(field string) (string, error) {
	b, err := s.bytes(field, false)
	return string(b), err
}
