package proxy

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/manifester/manifester/internal/render/jsonr"
)

// Directions of frame events in the log.
const (
	ToBroker = "client_to_broker"
	ToClient = "broker_to_client"
)

// direction names the way a frame or fault went ("request" is
// client_to_broker).
func direction(dir string) string {
	switch dir {
	case "request":
		return ToBroker
	case "response":
		return ToClient
	}
	return ""
}

// noticeLine is the JSON form of an event that is not a frame.
type noticeLine struct {
	Conn      int       `json:"conn"`
	Event     string    `json:"event"`
	Time      time.Time `json:"time"`
	Client    string    `json:"client,omitempty"`
	Listener  string    `json:"listener,omitempty"`
	Upstream  string    `json:"upstream,omitempty"`
	Direction string    `json:"direction,omitempty"`
	Detail    string    `json:"detail,omitempty"`
	Count     int       `json:"count,omitempty"`
}

// frameHead is the part of a frame's line before the report's fields.
type frameHead struct {
	Conn        int    `json:"conn"`
	Event       string `json:"event"`
	Direction   string `json:"direction"`
	Client      string `json:"client"`
	Listener    string `json:"listener"`
	Upstream    string `json:"upstream"`
	Rewritten   bool   `json:"rewritten,omitempty"`
	OriginalHex string `json:"original_hex,omitempty"`
}

// AppendJSON appends the event's line of the JSON log, newline included.
// Every line has conn (0 for the proxy's own events), event and the
// endpoints it concerns; a frame's line has direction, rewritten and
// original_hex (the broker's bytes, when the proxy changed the frame),
// then the fields of [jsonr.AppendLine] (hex is what the receiver got).
func AppendJSON(dst []byte, e *Event) ([]byte, error) {
	return appendJSON(dst, e, nil)
}

// appendJSON is AppendJSON, a frame's line handed to sp in pieces when
// sp is set (see [jsonr.Spill]; what it returns is what sp did not take).
func appendJSON(dst []byte, e *Event, sp *jsonr.Spill) ([]byte, error) {
	if e.Kind == EventFrame && e.Frame != nil {
		h := frameHead{Conn: e.Conn, Event: e.Kind.String(), Direction: direction(e.Dir), Client: e.Client,
			Listener: e.Listener, Upstream: e.Upstream, Rewritten: e.Rewritten}
		if e.Rewritten {
			h.OriginalHex = hex.EncodeToString(e.Original)
		}
		head, err := json.Marshal(h)
		if err != nil {
			return dst, err
		}
		start := len(dst)
		// The frame's fields go on after the head's (which are never
		// none: conn is always there).
		dst = append(dst, head[:len(head)-1]...)
		line, err := jsonr.AppendLine(dst, e.Frame, jsonr.Options{Continue: true, Spill: sp})
		if err != nil {
			return dst[:start], err
		}
		return line, nil
	}
	// Details are the proxy's own words ("node 1 A -> B"): not HTML
	// escaped, so that they read as they are.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(noticeLine{Conn: e.Conn, Event: e.Kind.String(), Time: e.Time, Client: e.Client,
		Listener: e.Listener, Upstream: e.Upstream, Direction: direction(e.Dir), Detail: e.Detail, Count: e.Count}); err != nil {
		return dst, err
	}
	return append(dst, buf.Bytes()...), nil
}

// LineWriter writes whole lines under a lock, so that lines of concurrent
// writers never interleave, and a crash leaves at most the last line
// torn. Writes are not buffered across lines: a line is one Write call,
// but for a frame's line longer than spillAt, which goes in pieces as it
// is made (see [jsonr.Spill]) so that it never has to be whole in memory
// (a frame of compressible batches makes a line 80 times its size).
type LineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
	buf []byte // WriteEvent's line, reused
	// small counts the lines in a row that used less than a quarter of a
	// buffer larger than maxKeptLine.
	small int
	spill jsonr.Spill
}

// spillAt is how much of a frame's line a LineWriter gathers before it
// writes it.
const spillAt = 1 << 20

// NewLineWriter returns a LineWriter on w.
func NewLineWriter(w io.Writer) *LineWriter {
	l := &LineWriter{w: w}
	l.spill = jsonr.Spill{At: spillAt, Write: l.writeLocked}
	return l
}

// WriteLine writes b (one or more whole lines) with one Write call. After
// a failed write every later one fails with the same error.
func (l *LineWriter) WriteLine(b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writeLocked(b)
}

// A LineWriter keeps its line buffer for the next event: always when it
// is at most maxKeptLine, and a larger one (up to maxHeldLine) until
// releaseAfter lines in a row have each used less than a quarter of it.
// Regrowing the buffer for every large line (doubling up to it, the
// copies dropped at once) was most of the proxy's allocation, and so of
// its garbage collections, when frames decode to lines of megabytes.
// Since frames' lines go in pieces, what is held is a frame's fields and
// body (about four bytes a frame byte) and a piece.
const (
	maxKeptLine  = 1 << 20
	maxHeldLine  = 128 << 20
	releaseAfter = 1024
)

// keep decides whether the buffer of line b is kept for the next one.
func (l *LineWriter) keep(b []byte) {
	switch {
	case cap(b) <= maxKeptLine:
		l.buf, l.small = b, 0
	case cap(b) > maxHeldLine:
		l.buf, l.small = nil, 0
	case len(b) >= cap(b)/4:
		l.buf, l.small = b, 0
	case l.small+1 >= releaseAfter:
		l.buf, l.small = nil, 0
	default:
		l.buf = b
		l.small++
	}
}

func (l *LineWriter) writeLocked(b []byte) error {
	if l.err != nil {
		return l.err
	}
	n, err := l.w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	l.err = err
	return err
}

// WriteWith lets write give one event's output to the writer in as many
// Write calls as it likes, under the lock, so that nothing of another
// line comes between them (a frame's text with its grid and tree, which
// text.Frame writes a section at a time). After a failed write every
// later one fails with the same error.
func (l *LineWriter) WriteWith(write func(io.Writer) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	return write(lockedWriter{l})
}

// lockedWriter writes through a LineWriter whose lock its caller holds.
type lockedWriter struct{ l *LineWriter }

func (w lockedWriter) Write(b []byte) (int, error) {
	if err := w.l.writeLocked(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// WriteEvent writes the event's JSON line.
func (l *LineWriter) WriteEvent(e *Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	b, err := appendJSON(l.buf[:0], e, &l.spill)
	l.keep(b)
	if err != nil {
		return err
	}
	return l.writeLocked(b)
}
