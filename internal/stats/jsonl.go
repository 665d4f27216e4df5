package stats

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/manifester/manifester/internal/frames"
	"github.com/manifester/manifester/internal/lineread"
	"github.com/manifester/manifester/internal/textenc"
)

// jsonFrame is what a JSON line of `decode --pcap --format json` or of
// the proxy's log holds that the figures need.
type jsonFrame struct {
	Event   *string         `json:"event"`
	Conn    json.RawMessage `json:"conn"`
	Kind    string          `json:"kind"`
	APIKey  *int16          `json:"api_key"`
	API     string          `json:"api"`
	Version *int16          `json:"version"`
	// RequestVersion is set on a response read at another version than
	// its request's (an ApiVersions answer read as v0): it is counted
	// under its request's version, as a capture counts it.
	RequestVersion *int16          `json:"request_version"`
	ClientID       *string         `json:"client_id"`
	Size           int             `json:"size"`
	Src            string          `json:"src"`
	Dst            string          `json:"dst"`
	LatencyMicros  *int64          `json:"latency_us"`
	Error          string          `json:"error"`
	Body           json.RawMessage `json:"body"`
}

// maxLineSize is the largest size a frame line may give: an int32 size
// prefix's most and the prefix itself.
const maxLineSize = math.MaxInt32 + 4

// maxJSONLine bounds the length of a line: more than the longest line
// decode writes (its output budget's ceiling, 1 GiB, and the frame's hex).
const maxJSONLine = 3 << 29

// JSONLinesStats counts what [ReadJSONLines] read.
type JSONLinesStats struct {
	Frames int64 // frame lines
	Events int64 // event lines (open, close, fault, ...), not counted as frames
}

// Admit decides, for [ReadJSONLinesWith], whether a frame line (its
// JSON) is added. An error stops the read; it is returned with the
// line's number.
type Admit func(line []byte) (bool, error)

// ReadJSONLines reads JSON lines of `decode --pcap --format json` or of
// the proxy's --log (with or without their "conn" and "event" fields) and
// adds a record per frame line. A response counts as paired when it
// carries latency_us (both writers set it exactly then). Error codes come
// from the body: every field whose name ends in "ErrorCode". A line that
// is not JSON, or a frame line without its kind, is an error naming the
// line. Memory is bounded by the longest line (at most 1.5 GiB; a line
// that cannot be a JSON object is refused at its first byte).
func ReadJSONLines(r io.Reader, add func(*Record)) (JSONLinesStats, error) {
	return ReadJSONLinesWith(r, nil, add, nil)
}

// ReadJSONLinesWith is ReadJSONLines adding only the frame lines admit
// admits (every one when admit is nil); it is asked about each frame
// line once, in order, after the line is read as a frame (Frames counts
// them all; the admit function counts what it refused). closed, when
// set, is told of each connection a line says has ended (the proxy log's
// "close" events): conn is the [Record.Conn] its frames had, and the
// number the log gave it. With [Aggregator.Close] and a listing
// aggregator ([NewListing]), memory is then bounded by the connections
// open at once, as with a capture; without close events (decode --pcap's
// lines) every connection's row is kept to the end.
func ReadJSONLinesWith(r io.Reader, admit Admit, add func(*Record), closed func(conn string, n int)) (JSONLinesStats, error) {
	var st JSONLinesStats
	// After a byte order mark (Notepad's, PowerShell's): UTF-8, or UTF-16
	// transcoded as it is read.
	br := textenc.NewBufReader(bufio.NewReaderSize(r, 1<<16), 1<<16)
	// Without a "conn" field, a connection is its pair of endpoints.
	for line := 1; ; line++ {
		b, err := lineread.ObjectLine(br, maxJSONLine)
		if errors.Is(err, lineread.ErrTooLong) {
			return st, fmt.Errorf("line %d: %w", line, err)
		}
		if len(bytes.TrimSpace(b)) > 0 {
			if perr := readLine(b, admit, add, closed, &st); perr != nil {
				return st, fmt.Errorf("line %d: %w", line, perr)
			}
		}
		if errors.Is(err, io.EOF) {
			return st, nil
		}
		if err != nil {
			return st, fmt.Errorf("line %d: %w", line, err)
		}
	}
}

func readLine(b []byte, admit Admit, add func(*Record), closed func(string, int), st *JSONLinesStats) error {
	var f jsonFrame
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	if f.Event != nil && f.Kind == "" {
		st.Events++
		if *f.Event == "close" && closed != nil {
			// The proxy numbers connections from 1; its own events have 0.
			if n, err := strconv.Atoi(string(f.Conn)); err == nil && n > 0 {
				closed("conn "+string(f.Conn), n)
			}
		}
		return nil
	}
	if f.Size < 0 || f.Size > maxLineSize {
		return fmt.Errorf("size %d: want 0 to %d (a frame's int32 size prefix and the prefix itself)", f.Size, maxLineSize)
	}
	rec := Record{Size: f.Size, ClientID: f.ClientID, API: f.API}
	if f.ClientID != nil && f.Kind == "request" && strings.ContainsRune(*f.ClientID, utf8.RuneError) {
		// The line's text lost bytes that are not UTF-8 (each became a
		// U+FFFD); the frame's hex kept them.
		if id, ok := hexClientID(b); ok {
			rec.ClientID = &id
		}
	}
	switch f.Kind {
	case "request":
		rec.Client, rec.Server = f.Src, f.Dst
	case "response":
		rec.Response = true
		rec.Client, rec.Server = f.Dst, f.Src
	case "entry":
		return errors.New(`kind "entry": a log segment's entry (decode --segment); stats summarises traffic, requests and responses`)
	default:
		return fmt.Errorf("kind %s: want request or response", quoteShort(f.Kind))
	}
	rec.Conn = "addr " + rec.Client + " " + rec.Server
	if len(f.Conn) > 0 && string(f.Conn) != "null" {
		rec.Conn = "conn " + string(f.Conn)
	}
	if f.APIKey != nil {
		rec.APIKey = *f.APIKey
	}
	if f.Version != nil {
		rec.Version = *f.Version
	}
	if f.RequestVersion != nil && f.Kind == "response" {
		rec.Version = *f.RequestVersion
	}
	if rec.Response {
		rec.Paired = f.LatencyMicros != nil && f.APIKey != nil && f.Version != nil
		if f.LatencyMicros != nil {
			rec.LatencyMicros = *f.LatencyMicros
		}
		rec.Undecoded = rec.Paired && f.Error != ""
		if len(f.Body) > 0 {
			errs, err := bodyErrors(f.Body)
			if err != nil {
				return fmt.Errorf("body: %w", err)
			}
			rec.Errors = errs
		}
	} else if f.APIKey == nil || f.Version == nil {
		return errors.New("a request line without api_key and version")
	}
	st.Frames++
	if admit != nil {
		ok, err := admit(b)
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
	}
	add(&rec)
	return nil
}

// hexClientID reads the client id of a request line from its "hex" (the
// int16-prefixed string after size, key, version and correlation id),
// decoding only that much of it: false when the line has no hex or the
// hex does not hold it.
func hexClientID(line []byte) (string, bool) {
	var h struct {
		Hex string `json:"hex"`
	}
	if json.Unmarshal(line, &h) != nil || len(h.Hex) < 28 {
		return "", false
	}
	// Only the header's first 14 bytes, then as many as the id has.
	head, err := hex.DecodeString(h.Hex[:28])
	if err != nil {
		return "", false
	}
	n := int(int16(binary.BigEndian.Uint16(head[12:14])))
	if b, err := hex.DecodeString(h.Hex[:min(len(h.Hex), 28+2*max(n, 0))]); err == nil {
		if id := frames.PeekClientID(b); id != nil {
			return *id, true
		}
	}
	return "", false
}

// bodyErrors returns the values of the fields named ...ErrorCode in a
// body's JSON, in order.
func bodyErrors(body json.RawMessage) ([]int16, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var out []int16
	// In an object, keys and values alternate; a stack says which comes.
	type level struct{ object, wantKey bool }
	var stack []level
	lastKey := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		isValue := len(stack) > 0 && stack[len(stack)-1].object && !stack[len(stack)-1].wantKey
		if len(stack) > 0 && stack[len(stack)-1].object {
			top := &stack[len(stack)-1]
			if top.wantKey {
				if s, ok := tok.(string); ok {
					lastKey = s
					top.wantKey = false
					continue
				}
			} else {
				top.wantKey = true
			}
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, level{object: true, wantKey: true})
			case '[':
				stack = append(stack, level{})
			case '}', ']':
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					// the closed container was a value: a key comes next
					stack[len(stack)-1].wantKey = true
				}
			}
		case json.Number:
			if isValue && strings.HasSuffix(lastKey, "ErrorCode") {
				if n, err := strconv.ParseInt(t.String(), 10, 16); err == nil {
					out = append(out, int16(n))
				}
			}
		}
	}
}

// maxQuoted is the most of a line's string an error quotes.
const maxQuoted = 40

// quoteShort quotes s for an error, cut after maxQuoted bytes: a line of
// up to 1.5 GiB is not repeated whole (and escaped) in its error.
func quoteShort(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:maxQuoted]) + fmt.Sprintf("... (%d bytes)", len(s))
}
