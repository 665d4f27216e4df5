package proxy

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
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
		dst = append(dst, head[:len(head)-1]...)
		// The report's object goes on in place: its "{" becomes the ","
		// after the head's fields (or goes, when the object is empty).
		mark := len(dst)
		dst, err = jsonr.AppendLine(dst, e.Frame, jsonr.Options{})
		if err != nil {
			return dst[:start], err
		}
		body := dst[mark:]
		if len(body) < 2 || body[0] != '{' {
			return dst[:start], errors.New("proxy: a frame's JSON is not an object")
		}
		if body[1] == '}' {
			return append(dst[:mark], body[1:]...), nil
		}
		body[0] = ','
		return dst, nil
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

// LineWriter writes whole lines: each with one Write call, under a lock,
// so that lines of concurrent writers never interleave, and a crash
// leaves at most the last line torn. Writes are not buffered across
// lines.
type LineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
	buf []byte // WriteEvent's line, reused
	// small counts the lines in a row that used less than a quarter of a
	// buffer larger than maxKeptLine.
	small int
}

// NewLineWriter returns a LineWriter on w.
func NewLineWriter(w io.Writer) *LineWriter { return &LineWriter{w: w} }

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

// WriteEvent writes the event's JSON line.
func (l *LineWriter) WriteEvent(e *Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, err := AppendJSON(l.buf[:0], e)
	l.keep(b)
	if err != nil {
		return err
	}
	return l.writeLocked(b)
}
