package report

import (
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/page"
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
	checkLine(t, c, "plain produce", b, Options{}, nil)
	f := Decode(c, b, Options{})
	if f.Error != "" {
		t.Fatal(f.Error)
	}

	// JSON: text as a string, with the hex kept. (Package render/text
	// checks the text tree.)
	line, err := AppendJSON(nil, f, JSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Tree *page.Node }
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatal(err)
	}
	// Record keys, values and header values: the typed value (a string:
	// the text, or the hex of binary bytes) and the hex kept beside text.
	texts := map[string]string{}
	var walk func(n *page.Node)
	walk = func(n *page.Node) {
		if strings.Contains(n.Path, "Record[") && (strings.HasSuffix(n.Path, ".key") || strings.HasSuffix(n.Path, ".value") || strings.HasSuffix(n.Path, ".headerValue")) {
			var v *string
			if err := json.Unmarshal(n.Typed, &v); err != nil {
				t.Errorf("%s: value %s: %v", n.Path, n.Typed, err)
			}
			if v == nil {
				texts[n.Path] = "null | " + n.Hex
			} else {
				texts[n.Path] = *v + " | " + n.Hex
			}
		}
		for _, k := range n.Children {
			walk(k)
		}
	}
	walk(got.Tree)
	const rec = "ProduceRequest.TopicData.TopicProduceData[0].PartitionData.PartitionProduceData[0].Records.RecordBatch[0]."
	want := map[string]string{
		rec + "Record[0].key":                   "user-1 | 757365722d31",
		rec + "Record[0].value":                 "Zürich\t\"q\"\n | 5ac3bc72696368092271220a",
		rec + "Record[0].Header[0].headerValue": "abc\u200d | 616263e2808d",
		rec + "Record[0].Header[1].headerValue": "0001ff | ", // binary: hex as the value, no second copy
		rec + "Record[1].key":                   "fffe | ",
		rec + "Record[1].value":                 "1b5b33316d726564 | ",
		rec + "Record[2].key":                   "null | ",
		rec + "Record[2].value":                 " | ", // empty text
	}
	if len(texts) != len(want) {
		t.Errorf("text nodes: %v", texts)
	}
	for p, w := range want {
		if texts[p] != w {
			t.Errorf("%s: %q, want %q", p, texts[p], w)
		}
	}
}
