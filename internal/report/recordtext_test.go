package report

import (
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// plainProduce is a Produce v9 request with one uncompressed RecordBatch
// v2 of the given records, built with kmsg.
func plainProduce(recs []kmsg.Record) []byte {
	var area []byte
	for i := range recs {
		recs[i].OffsetDelta = int32(i)
		recs[i].Length = int32(len(recs[i].AppendTo(nil)) - 1)
		area = recs[i].AppendTo(area)
	}
	rb := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: int32(len(recs) - 1), ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: int32(len(recs)), Records: area}
	batch := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(batch[8:], uint32(len(batch)-12))
	binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], crc32.MakeTable(crc32.Castagnoli)))
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 1000
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = "t"
	p := kmsg.NewProduceRequestTopicPartition()
	p.Records = batch
	tp.Partitions = append(tp.Partitions, p)
	req.Topics = append(req.Topics, tp)
	return frame(req, 9)
}

func TestRecordContentsAsText(t *testing.T) {
	c := load(t)
	b := plainProduce([]kmsg.Record{
		{Key: []byte("user-1"), Value: []byte("Zürich\t\"q\"\n"), Headers: []kmsg.Header{{Key: "trace", Value: []byte("abc\u200d")}, {Key: "bin", Value: []byte{0, 1, 0xff}}}},
		{Key: []byte{0xff, 0xfe}, Value: []byte("\x1b[31mred")}, // not UTF-8; ESC: both stay hex
		{Key: nil, Value: []byte{}},                             // null key; empty value is text
	})
	f := Decode(c, b, Options{})
	if f.Error != "" {
		t.Fatal(f.Error)
	}
	var sb strings.Builder
	if err := Text(&sb, f, true); err != nil {
		t.Fatal(err)
	}
	out := strings.Join(strings.Fields(sb.String()), " ")
	for _, want := range []string{
		`key bytes = "user-1" 0x757365722d31 (varint len=6)`,
		`value bytes = "Zürich\t\"q\"\n" 0x5ac3bc72696368092271220a (varint len=12)`,
		`headerValue bytes = "abc\u200d" 0x616263e2808d (varint len=6)`,
		`headerValue bytes = 0x0001ff (varint len=3)`,
		`key bytes = 0xfffe (varint len=2)`,
		`value bytes = 0x1b5b33316d726564 (varint len=8)`,
		`key bytes = null (varint len=-1)`,
		`value bytes = "" 0x (varint len=0)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text tree lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}

}
