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
