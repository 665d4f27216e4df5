package proxy

import (
	"net"
	"time"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/pairing"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
)

type itemKind uint8

const (
	kindEvent itemKind = iota
	kindRequest
	kindResponse
	kindRawRequest  // a raw SASL token after a SaslHandshake v0, from the client
	kindRawResponse // and from the broker
)

// item is one entry of the decoding queue.
type item struct {
	kind      itemKind
	conn      *conn
	ev        *Event    // kindEvent
	data      []byte    // the frame as forwarded
	body      frameBody // or its copy, while queued (data is nil then)
	original  []byte    // before rewriting
	rewritten bool
	req       pairing.Request // for a response: its request
	paired    bool
	at        time.Time
	index     int   // frame number in its direction of the connection
	offset    int64 // where the frame starts in that direction's stream
	reserved  int   // queue bytes reserved for it
}

// event queues a non-frame event of the proxy's own (not of a
// connection) without ever blocking the caller.
func (p *Proxy) event(e *Event) { p.q.event(nil, e, false) }

// decodeLoop decodes queued frames and delivers events: in order for each
// connection, the connections in turn.
func (p *Proxy) decodeLoop() {
	defer p.decodeWG.Done()
	lowerPriority()
	for {
		it, cq, skipped, dropped, ok := p.q.next()
		if !ok {
			return
		}
		if skipped > 0 || dropped > 0 {
			p.deliver(skippedEvent(cq.c, skipped, dropped))
		}
		if it == nil {
			continue
		}
		if it.kind == kindEvent {
			p.deliver(it.ev)
			continue
		}
		if it.data == nil {
			it.data = it.body.take()
		}
		p.deliver(p.decodeItem(it))
		p.q.release(cq, it.reserved)
	}
}

func (p *Proxy) deliver(e *Event) {
	if p.cfg.Sink != nil {
		p.cfg.Sink(e)
	}
}

// frameLimits is the budget of each proxied frame's decode and of its log
// line: package budget's defaults, proportional to the frame's size
// (inflated bytes across all its batches, tree nodes, text or JSON).
// The frame is always forwarded whole; only what is decoded and logged
// is bounded, and the log line says where a limit was reached.
var frameLimits = budget.Limits{}

// decodeItem decodes one frame into its event.
func (p *Proxy) decodeItem(it *item) *Event {
	if it.kind == kindRawRequest || it.kind == kindRawResponse {
		return p.decodeRaw(it)
	}
	c := it.conn
	e := &Event{Kind: EventFrame, Time: it.at, Data: it.data, Original: it.original, Rewritten: it.rewritten}
	e.Conn, e.Client, e.Listener, e.Upstream = c.base.Conn, c.base.Client, c.base.Listener, c.base.Upstream
	opts := report.Options{Roundtrip: p.cfg.Roundtrip, Limits: frameLimits}
	at := it.at
	var f *report.Frame
	if it.kind == kindRequest {
		e.Dir = "request"
		data, plan := c.secrets.Request(p.cfg.Codec, it.data)
		e.Data = data
		f = p.decodeRedacted(data, opts, plan)
		f.Src, f.Dst = c.base.Client, c.base.Upstream
	} else {
		e.Dir = "response"
		opts.Kind = schema.TypeResponse
		if api, ok := p.reg.API(it.req.APIKey); ok && it.paired {
			opts.API, opts.Version = api, it.req.Version
		}
		data, plan := c.secrets.Response(p.cfg.Codec, it.data, opts.API, opts.Version)
		e.Data = data
		f = p.decodeRedacted(data, opts, plan)
		f.Src, f.Dst = c.base.Upstream, c.base.Client
		if it.paired {
			lat := it.req.Latency(it.at)
			f.LatencyMicros = &lat
		}
	}
	f.Time = &at
	f.Index, f.Offset = it.index, it.offset
	p.nameTopics(f, it.kind == kindResponse)
	e.Frame = f
	return e
}

// decode reports on one frame: fully (span tree, body JSON), or with
// Config.Summary only what a summary line needs, falling back to the full
// report for a frame that does not decode.
func (p *Proxy) decode(b []byte, opts report.Options) *report.Frame {
	if !p.cfg.Summary {
		return report.Decode(p.cfg.Codec, b, opts)
	}
	c := p.cfg.Codec
	var f *codec.Frame
	var err error
	switch {
	case opts.Kind == schema.TypeResponse && opts.API != nil:
		f, err = c.DecodeResponse(b, opts.API, opts.Version, codec.Options{})
	case opts.Kind != schema.TypeResponse:
		f, err = c.DecodeRequest(b, codec.Options{})
	default:
		err = codec.ErrUnknownAPI
	}
	if err != nil || f == nil || f.API == nil {
		return report.Decode(c, b, opts)
	}
	kind := schema.TypeRequest
	if opts.Kind == schema.TypeResponse {
		kind = schema.TypeResponse
	}
	r := &report.Frame{Kind: kind.String(), APIKey: f.API.Key, API: f.API.Name, Version: f.Version,
		CorrelationID: f.CorrelationID, Size: len(b), HeaderVersion: f.HeaderVersion, Bytes: b, Decoded: f}
	if kind == schema.TypeRequest && f.HeaderVersion >= 1 && !f.ClientIDNull {
		id := string(f.ClientID)
		r.ClientID = &id
	}
	if opts.Roundtrip {
		ok, d := report.Check(c, f, b)
		r.Roundtrip, r.RoundtripDiff = &ok, d
	}
	return r
}

func joinHostPort(host, port string) string { return net.JoinHostPort(host, port) }
