package proxy

import (
	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/topicnames"
)

// nameTopics shows, beside every topic id of a decoded frame, the name an
// earlier response of this proxy session (Metadata, DescribeTopicPartitions,
// CreateTopics) gave it, and learns the names a response gives. It runs on
// the decoding goroutine, which sees frames in order.
func (p *Proxy) nameTopics(f *report.Frame, response bool) {
	if f == nil || f.Decoded == nil {
		return
	}
	if p.names == nil {
		p.names = topicnames.New()
	}
	p.namedSeq++
	if p.names.Annotate(f.Decoded.Root, p.namedSeq) > 0 {
		f.Decoded.RootEdited() // TRANSITIONAL: until topic names edit the span.Tree
		if f.Tree != nil {
			f.Tree = page.FromSpan(f.Decoded.Root) // made before the notes were
		}
	}
	if response && f.Error == "" {
		p.names.Learn(f.Decoded, p.namedSeq)
	}
}
