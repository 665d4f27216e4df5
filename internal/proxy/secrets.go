package proxy

import (
	"github.com/manifester/manifester/internal/redact"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
)

// decodeRedacted decodes a frame that a connection's redact.Stream has
// redacted and gives its report the structure of the redacted auth bytes
// (or, for a raw token of a legacy SaslHandshake v0 exchange, a report of
// its own: it has no Kafka header).
func (p *Proxy) decodeRedacted(b []byte, opts report.Options, plan *redact.Plan) *report.Frame {
	if plan != nil && plan.Raw {
		return redact.RawReport(b, plan, opts.Kind == schema.TypeResponse)
	}
	f := p.decode(b, opts)
	plan.Apply(f)
	return f
}

// decodeRaw reports on a raw SASL token of the legacy SaslHandshake v0
// exchange (no Kafka header): data is the token as logged, redacted (as
// plan says) unless Config.ShowSecrets.
func (p *Proxy) decodeRaw(it *item, data []byte, plan *redact.Plan) *Event {
	c := it.conn
	fromServer := it.kind == kindRawResponse
	e := &Event{Kind: EventFrame, Time: it.at, Data: data, Dir: "request"}
	e.Conn, e.Client, e.Listener, e.Upstream = c.base.Conn, c.base.Client, c.base.Listener, c.base.Upstream
	f := redact.RawReport(data, plan, fromServer)
	f.Src, f.Dst = c.base.Client, c.base.Upstream
	if fromServer {
		e.Dir = "response"
		f.Src, f.Dst = c.base.Upstream, c.base.Client
	}
	at := it.at
	f.Time = &at
	f.Index, f.Offset = it.index, it.offset
	e.Frame = f
	return e
}
