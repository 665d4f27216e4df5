package report

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testframes"
)

// BenchmarkDecode measures a full report (spans, body JSON, round trip) of
// a Metadata v12 request naming 100 topics.
func BenchmarkDecode(b *testing.B) {
	c := testframes.Codec(b, "4.3")
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	for i := 0; i < 100; i++ {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr("topic-with-a-longish-name")
		req.Topics = append(req.Topics, t)
	}
	in := testframes.Request("kgo", req, 1)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if f := Decode(c, in, Options{Roundtrip: true}); !f.OK() {
			b.Fatal(f.Error)
		}
	}
}

// BenchmarkDecodeCompressed measures what a capture loop does with a
// Produce request of four zstd batches of 100 records (1 KiB values of
// text, as compressible as logs): the span tree decoded into a reused
// tree, the batches inflated into trees of their own.
func BenchmarkDecodeCompressed(b *testing.B) {
	c := testframes.Codec(b, "4.3")
	c.Decompress = compress.Decompressor()
	c.DecompressLimit = compress.LimitDecompressor()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		b.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 30000
	topic := kmsg.NewProduceRequestTopic()
	topic.Topic = "logs"
	for p := range 4 {
		var raw []byte
		for i := range 100 {
			r := kmsg.Record{OffsetDelta: int32(i), Key: fmt.Appendf(nil, "key-%06d", i),
				Value: bytes.Repeat(fmt.Appendf(nil, "GET /api/v1/items/%d 200 12ms user=%d; ", i, p), 40)[:1024]}
			r.Length = int32(len(r.AppendTo(nil)) - 1)
			raw = r.AppendTo(raw)
		}
		pp := kmsg.NewProduceRequestTopicPartition()
		pp.Partition = int32(p)
		pp.Records = records.AppendBatch(nil, &records.Batch{Attributes: 4, LastOffsetDelta: 99, NumRecords: 100,
			ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Records: enc.EncodeAll(raw, nil)})
		topic.Partitions = append(topic.Partitions, pp)
	}
	req.Topics = append(req.Topics, topic)
	in := testframes.Request("kgo", req, 1)
	tree := &span.Tree{}
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		f := Decode(c, in, Options{Tree: tree, Lean: true})
		if !f.OK() {
			b.Fatal(f.Error)
		}
		if f.Decoded.SpanTree().Len() == 0 {
			b.Fatal("no tree")
		}
	}
}
