package report

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkDecode measures a full report (spans, body JSON, round trip) of
// a Metadata v12 request naming 100 topics.
func BenchmarkDecode(b *testing.B) {
	c := load(b)
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	for i := 0; i < 100; i++ {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr("topic-with-a-longish-name")
		req.Topics = append(req.Topics, t)
	}
	in := frame(req, 1)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if f := Decode(c, in, Options{Roundtrip: true}); !f.OK() {
			b.Fatal(f.Error)
		}
	}
}
