package report

import (
	"bytes"
	"compress/gzip"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/testframes"
)

// gzipBatch is a RecordBatch v2 (kmsg) of attributes gzip holding data
// as its compressed records, claiming count records, with a right CRC.
func gzipBatch(data []byte, count int32) []byte {
	kb := kmsg.RecordBatch{Magic: 2, Attributes: 1, LastOffsetDelta: count - 1, ProducerID: -1, ProducerEpoch: -1,
		FirstSequence: -1, NumRecords: count, Records: data}
	kb.Length = int32(len(kb.AppendTo(nil)) - 12)
	raw := kb.AppendTo(nil)
	kb.CRC = int32(crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return kb.AppendTo(nil)
}

// TestCorruptCompressedBatchWarns: a Produce request (kmsg) whose gzip
// batch does not inflate, or whose inflated records are fewer than it
// claims, decodes (the frame is well-formed) with a warning that says
// so, where, and how many: the tree's flag alone is not shown without
// -v. A good batch beside them adds nothing.
func TestCorruptCompressedBatchWarns(t *testing.T) {
	c := inflating(t)
	rec := kmsg.Record{Key: []byte("k"), Value: []byte("v")}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1)
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(rec.AppendTo(nil))
	w.Close()
	good := gzipBatch(z.Bytes(), 1)
	notGzip := gzipBatch([]byte("not gzip at all"), 1)
	short := gzipBatch(z.Bytes(), 3) // one record inflated, three claimed

	frame := func(batches ...[]byte) []byte {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 9, -1, 1000
		tp := kmsg.NewProduceRequestTopic()
		tp.Topic = "orders"
		for i, b := range batches {
			pp := kmsg.NewProduceRequestTopicPartition()
			pp.Partition, pp.Records = int32(i), b
			tp.Partitions = append(tp.Partitions, pp)
		}
		req.Topics = append(req.Topics, tp)
		return testframes.Request("c", req, 1)
	}
	if r := Decode(c, frame(good), Options{}); r.Error != "" || r.Warning != "" {
		t.Fatalf("good batch: error %q, warning %q", r.Error, r.Warning)
	}
	for _, tc := range []struct {
		name    string
		batches [][]byte
		want    []string
	}{
		{"not gzip", [][]byte{good, notGzip}, []string{"1 compressed batch did not inflate or decode", "PartitionData[1].Records[0]: cannot decompress", "compressed"}},
		{"fewer records", [][]byte{short}, []string{"1 compressed batch did not inflate or decode", "its inflated records do not decode"}},
		{"both", [][]byte{notGzip, good, short}, []string{"2 compressed batches did not inflate or decode", "PartitionData[0]"}},
	} {
		r := Decode(c, frame(tc.batches...), Options{})
		if r.Error != "" {
			t.Errorf("%s: error %q; the frame is well-formed", tc.name, r.Error)
		}
		for _, w := range tc.want {
			if !strings.Contains(r.Warning, w) {
				t.Errorf("%s: warning %q lacks %q", tc.name, r.Warning, w)
			}
		}
	}
}
