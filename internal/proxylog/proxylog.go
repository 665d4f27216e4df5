// Package proxylog reads back the JSON lines that `manifester proxy`
// writes (--log, --format json) and that `decode --format json` writes:
// each frame line is decoded again from its hex, with the line's API and
// version for a response and SASL secrets redacted, into the report and
// the proxy event it stands for, so that a log can be shown as the live
// traffic was.
package proxylog

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/proxy"
	"github.com/manifester/manifester/internal/redact"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
)

// Line is what is read of one line of a log.
type Line struct {
	Conn        int    `json:"conn"`
	Event       string `json:"event"`
	Direction   string `json:"direction"`
	Client      string `json:"client"`
	Listener    string `json:"listener"`
	Upstream    string `json:"upstream"`
	Rewritten   bool   `json:"rewritten"`
	OriginalHex string `json:"original_hex"`
	Detail      string `json:"detail"`
	Index       int    `json:"index"`
	Offset      int64  `json:"offset"`
	Kind        string `json:"kind"`
	APIKey      *int16 `json:"api_key"`
	API         string `json:"api"`
	Version     *int16 `json:"version"`
	// RequestVersion is set on a response the proxy read at another
	// version than its request's (an ApiVersions answer read as v0).
	RequestVersion *int16     `json:"request_version"`
	Hex            *string    `json:"hex"`
	Time           *time.Time `json:"time"`
	Src            string     `json:"src"`
	Dst            string     `json:"dst"`
	Latency        *int64     `json:"latency_us"`
}

// RawTokenAPI is the api of a frame line for a raw SASL token of the
// legacy SaslHandshake v0 exchange (see redact.RawReport).
const RawTokenAPI = "SaslHandshake-v0-token"

// Parse reads one line.
func Parse(line []byte) (*Line, error) {
	var l Line
	if err := json.Unmarshal(line, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// IsFrame reports whether the line is a frame (it has hex and is no
// other event).
func (l *Line) IsFrame() bool { return l.Hex != nil && (l.Event == "" || l.Event == "frame") }

// Decode decodes the hex of a frame line, with the line's API and version
// for a response, its SASL secrets redacted by the stream of its
// connection in conns (frames of a connection in order), within the budget
// lim (zero fields take the defaults). A response without its API and
// version is reported with the response schemas that explain it, from a
// search in proportion to its size alone when leanSearch is set (for the
// lines of an input after its first report.FullSearches searches, as
// [report.Options.LeanSearch]). It returns the frame's report and the
// proxy event the line stands for.
func (l *Line) Decode(c *codec.Codec, conns *redact.Conns, lim budget.Limits, leanSearch bool) (*report.Frame, *proxy.Event, error) {
	if l.Hex == nil {
		return nil, nil, fmt.Errorf("not a frame line")
	}
	b, err := hex.DecodeString(*l.Hex)
	if err != nil {
		return nil, nil, fmt.Errorf("hex: %w", err)
	}
	var orig []byte
	if l.Rewritten {
		if orig, err = hex.DecodeString(l.OriginalHex); err != nil {
			return nil, nil, fmt.Errorf("original_hex: %w", err)
		}
	}
	ro := report.Options{Roundtrip: false, Limits: lim, LeanSearch: leanSearch}
	fromServer := l.Kind == "response"
	if fromServer {
		ro.Kind = schema.TypeResponse
		if l.APIKey != nil && l.Version != nil {
			if api, ok := c.Reg.API(*l.APIKey); ok {
				ro.API, ro.Version = api, *l.Version
			}
		}
	}
	var fr *report.Frame
	switch {
	case l.API == RawTokenAPI:
		data, plan := conns.Stream(l.Conn).Raw(b, fromServer) // a nil stream shows secrets
		fr = redact.RawReport(data, plan, fromServer)
	case fromServer && ro.API != nil && l.RequestVersion != nil:
		// Read as the proxy read it: at its request's version, by
		// report.Response's rule (an ApiVersions answer read as v0,
		// which holds no secrets).
		data, plan := conns.Frame(l.Conn, c, b, ro)
		fr = report.Response(c, data, ro.API, *l.RequestVersion, ro)
		plan.Apply(fr)
	default:
		data, plan := conns.Frame(l.Conn, c, b, ro)
		fr = redact.DecodeRedacted(c, data, ro, plan)
	}
	fr.Index, fr.Offset, fr.Time, fr.Src, fr.Dst, fr.LatencyMicros = l.Index, l.Offset, l.Time, l.Src, l.Dst, l.Latency
	e := &proxy.Event{Kind: proxy.EventFrame, Conn: l.Conn, Client: l.Client, Listener: l.Listener, Upstream: l.Upstream,
		Dir: l.Kind, Rewritten: l.Rewritten, Original: orig, Frame: fr, Data: fr.Bytes}
	return fr, e, nil
}

// StartsWithBrace peeks past up to 4 KiB of leading white space for a
// "{": whether the input can be a log rather than hex. A byte order mark
// comes before (UTF-8, or UTF-16 whose characters it then reads:
// PowerShell 5's ">" writes that); textenc.NewReader reads such input.
func StartsWithBrace(r *bufio.Reader) bool {
	start, unit, le := 0, 1, false
	if b, _ := r.Peek(1); len(b) == 1 {
		switch b[0] {
		case 0xef:
			if b, _ := r.Peek(3); len(b) == 3 && b[1] == 0xbb && b[2] == 0xbf {
				start = 3
			}
		case 0xff, 0xfe:
			if b, _ := r.Peek(2); len(b) == 2 && (b[0] == 0xff && b[1] == 0xfe || b[0] == 0xfe && b[1] == 0xff) {
				start, unit, le = 2, 2, b[0] == 0xff
			}
		}
	}
	for n := start + unit; n <= start+4096*unit; n += unit {
		b, _ := r.Peek(n)
		if len(b) < n {
			return false
		}
		c := b[n-1]
		if unit == 2 {
			lo, hi := b[n-2], b[n-1]
			if !le {
				lo, hi = hi, lo
			}
			if hi != 0 {
				return false
			}
			c = lo
		}
		switch c {
		case ' ', '\t', '\r', '\n':
		case '{':
			return true
		default:
			return false
		}
	}
	return false
}
