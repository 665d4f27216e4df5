package proxy

import (
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/topicnames"
)

// nameTopics shows, beside every topic id of a decoded frame, the name an
// earlier response of this proxy session (Metadata, DescribeTopicPartitions,
// CreateTopics) gave it, and learns the names a response gives, both from
// the frame's tree (the one decode). It runs on the decoding pipeline's
// emitter, which sees frames in the order the feeder took them.
func (p *Proxy) nameTopics(f *report.Frame, response bool) {
	if f == nil || f.Decoded == nil {
		return
	}
	if p.names == nil {
		p.names = topicnames.New()
	}
	p.namedSeq++
	t := f.SpanTree()
	p.names.Annotate(t, p.namedSeq)
	if response && f.Error == "" && f.Decoded.API != nil {
		p.names.LearnTree(t, f.Decoded.API.Response, f.Decoded.Version, p.namedSeq)
	}
}
