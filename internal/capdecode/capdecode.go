// Package capdecode turns the frames package capture reads into decode
// reports: a Reader, fed every capture.Event in capture order, makes each
// a Frame that carries what the event said (connection ends, time,
// latency, gap, the paired request or the requests near an unpaired
// response); Frame.Decode then decodes it on any goroutine into the
// report of the request or response it is.
//
// With package pipeline, the Frames of a capture decode on every core and
// come out in capture order (decode --pcap, see internal/cli).
package capdecode

import (
	"slices"
	"time"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/redact"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
)

// Reader makes the Frames of one capture's events; it is used from the
// goroutine that reads the capture.
type Reader struct {
	reg   *schema.Registry
	base  report.Options
	hints hints
	index int
	// orphans counts the responses without their request so far: after
	// report.FullSearches of them, their candidate searches are lean.
	orphans int
}

// NewReader returns a Reader for the events of one capture, decoded with
// the registry's APIs and base's Roundtrip, Limits and Lean settings (Kind,
// API and Version are set per frame; NewerAsWarning is always set: a
// capture may hold versions newer than the spec).
func NewReader(reg *schema.Registry, base report.Options) *Reader {
	base.NewerAsWarning = true
	return &Reader{reg: reg, base: base, hints: hints{conn: map[int][]report.Hint{}}}
}

// Frame is one frame of a capture, ready to decode.
type Frame struct {
	// Index numbers the frames of the capture from 0, in capture order.
	Index  int
	Offset int64  // in its direction's byte stream
	Data   []byte // the frame (the event's, kept), size prefix included
	Time   time.Time
	// Src and Dst are the sender's and receiver's addresses.
	Src, Dst string
	// TLS names the TLS session the frame was decrypted from, if any.
	TLS      string
	Response bool
	// Paired is set for a response whose request was captured.
	Paired bool
	// Latency is a paired response's time since its request, in µs.
	Latency *int64
	// Options are the report options for the frame: its kind, and a paired
	// response's API and version.
	Options report.Options
	// Cut, when set, says the frame was cut short (Data is its captured
	// start).
	Cut *report.Gap
	// Hints are the requests near an unpaired response, latest first.
	Hints []report.Hint
	// ReqKey and ReqVersion are the paired request's, for a response.
	ReqKey, ReqVersion int16
	// Skipped and Lost are the event's: bytes skipped (and never
	// captured) just before the frame.
	Skipped, Lost int64
}

// Frame makes the Frame of the next event of the capture (in the order
// capture.Read gives them), keeping its data (capture.Event.Keep: the
// reader's buffer of a frame assembled from several packets, a copy of
// one that lay in a single packet).
func (r *Reader) Frame(ev *capture.Event) *Frame {
	f := &Frame{Index: r.index, Offset: ev.Offset, Data: ev.Keep(), Time: ev.Time,
		Skipped: ev.Skipped, Lost: ev.Lost, Options: r.base, TLS: ev.Conn.TLS}
	r.index++
	if ev.Cut != nil {
		f.Cut = &report.Gap{Offset: ev.Cut.GapOffset, Size: ev.Cut.GapSize, FrameSize: ev.Cut.Size, Captured: ev.Cut.Captured, AtEnd: ev.Cut.AtEnd}
	}
	if ev.Dir == capture.ClientToServer {
		f.Src, f.Dst = ev.Conn.Client.String(), ev.Conn.Server.String()
		if key, v, _, ok := codec.PeekRequest(ev.Data); ok {
			r.hints.add(ev.Conn.ID, report.Hint{APIKey: key, Version: v})
		}
		return f
	}
	f.Src, f.Dst = ev.Conn.Server.String(), ev.Conn.Client.String()
	f.Options.Kind = schema.TypeResponse
	f.Response = true
	if ev.Request == nil {
		f.Hints = r.hints.near(ev.Conn.ID)
		f.Options.LeanSearch = r.orphans >= report.FullSearches
		r.orphans++
		return f
	}
	if api, ok := r.reg.API(ev.Request.APIKey); ok {
		f.Options.API, f.Options.Version = api, ev.Request.Version
	}
	f.ReqKey, f.ReqVersion = ev.Request.APIKey, ev.Request.Version
	lat := ev.Time.Sub(ev.Request.Time).Microseconds()
	f.Latency = &lat
	f.Paired = true
	return f
}

// Forget drops what r keeps of connection conn (it has ended: see
// capture.Options.Closed); its requests stay among the capture's hints.
func (r *Reader) Forget(conn int) { delete(r.hints.conn, conn) }

// Frames is the number of Frames made so far.
func (r *Reader) Frames() int { return r.index }

// Decode decodes the frame's Data with c (safe on any goroutine) into its
// report, with the frame's place, time, ends and latency. plan, when not
// nil, is what redaction did to Data: a raw SASL token is reported as
// such, and the redacted auth bytes' structure is added to the tree.
func (f *Frame) Decode(c *codec.Codec, plan *redact.Plan) *report.Frame {
	var r *report.Frame
	o := f.Options
	switch {
	case plan != nil && plan.Raw:
		r = redact.RawReport(f.Data, plan, f.Response)
	case f.Cut != nil:
		r = report.Cut(c, f.Data, o.Kind, o.API, o.Version, *f.Cut, o)
	case f.Response && !f.Paired:
		r = report.Orphan(c, f.Data, f.Hints, o)
	case f.Response && o.API != nil:
		r = report.Response(c, f.Data, o.API, o.Version, o)
	case f.Response:
		r = report.UnknownAPIResponse(f.Data, f.ReqKey, f.ReqVersion, o)
	default:
		r = report.Decode(c, f.Data, o)
	}
	plan.Apply(r)
	r.Index, r.Offset = f.Index, f.Offset
	t := f.Time
	r.Time, r.Src, r.Dst, r.TLS, r.LatencyMicros = &t, f.Src, f.Dst, f.TLS, f.Latency
	r.Skipped, r.Lost = f.Skipped, f.Lost
	return r
}

// hints remembers the latest requests per connection and over the whole
// capture: the neighbours that rank the candidates of a response whose
// request was not captured.
type hints struct {
	conn map[int][]report.Hint
	all  []report.Hint
}

// hintsKept is how many requests hints keeps per connection and overall.
const hintsKept = 8

func (t *hints) add(conn int, h report.Hint) {
	push := func(l []report.Hint) []report.Hint {
		if len(l) > 0 && l[0] == h {
			return l
		}
		l = append([]report.Hint{h}, l...)
		return l[:min(len(l), hintsKept)]
	}
	t.conn[conn] = push(t.conn[conn])
	t.all = push(t.all)
}

// near returns the connection's latest requests, then the capture's.
func (t *hints) near(conn int) []report.Hint {
	return append(slices.Clone(t.conn[conn]), t.all...)
}

// Verifier confirms frame boundaries found by resynchronisation (see
// capture.Options.Verify): the frame must decode cleanly. A response
// whose request was not captured (the first bytes of a capture that starts
// mid-connection) must decode and re-encode as some response of the spec.
func Verifier(c *codec.Codec) func([]byte, capture.Dir, *capture.Request) bool {
	return func(b []byte, d capture.Dir, req *capture.Request) bool {
		if d == capture.ClientToServer {
			_, err := c.DecodeRequest(b, codec.Options{})
			return err == nil
		}
		if req == nil {
			cs, _ := report.Candidates(c, b, nil)
			return len(cs) > 0
		}
		api, ok := c.Reg.API(req.APIKey)
		if !ok {
			return false
		}
		_, err := c.DecodeResponse(b, api, req.Version, codec.Options{})
		return err == nil
	}
}

// Options are the capture.Options of a capture decoded with c: the given
// ports, the spec's APIs and versions as the known requests, and Verifier.
func Options(c *codec.Codec, ports []int) capture.Options {
	reg := c.Reg
	return capture.Options{
		Ports:  ports,
		Known:  func(key, v int16) bool { api, ok := reg.API(key); return ok && api.Request.Valid.Contains(v) },
		Verify: Verifier(c),
	}
}
