package jsonr

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/testframes"
)

// TestJSONCaptureFields: the fields captures add are written exactly as
// encoding/json writes them.
func TestJSONCaptureFields(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	meta := func(f *report.Frame) {
		f.Skipped, f.Lost = 1500, 1448
		f.Warning, f.Note = "cut <by> a gap & more", "read as v0"
		v := int16(4)
		f.RequestVersion = &v
		f.Gap = &report.Gap{Offset: 1 << 40, Size: 1448, FrameSize: -1, Captured: 20, AtEnd: true}
		f.Candidates = []report.Candidate{{APIKey: 5, Name: "StopReplica", Version: 0}, {APIKey: 12, Name: "Heartbeat", Version: 4}}
		f.CandidatesIncomplete = true
	}
	checkLine(t, c, "capture fields", testframes.Request("kgo", testframes.CreateTopics(7), 3), report.Options{Roundtrip: true}, meta)
	checkLine(t, c, "gap only", testframes.Request("kgo", testframes.CreateTopics(2), 3), report.Options{}, func(f *report.Frame) { f.Gap = &report.Gap{Size: 1, FrameSize: 90} })
}

// TestOrphanLine: a response without its request names no API: its line
// has no api_key, version and header_version, and is otherwise
// encoding/json's.
func TestOrphanLine(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	hb := kmsg.NewPtrHeartbeatResponse()
	hb.Version, hb.ErrorCode = 4, 27
	md := kmsg.NewPtrMetadataResponse()
	md.Version = 12
	topic := "orders"
	md.Topics = []kmsg.MetadataResponseTopic{{Topic: &topic, Partitions: []kmsg.MetadataResponseTopicPartition{{Partition: 1, Leader: 1, Replicas: []int32{1}}}}}
	for _, b := range [][]byte{testframes.Response(hb, 9), testframes.Response(md, 9)} {
		for _, hints := range [][]report.Hint{nil, {{APIKey: 12, Version: 4}}} {
			want := report.Orphan(c, b, hints, report.Options{})
			for _, lean := range []bool{false, true} {
				f := report.Orphan(c, b, hints, report.Options{Lean: lean})
				if !f.APIUnknown || len(f.Candidates) == 0 {
					t.Fatalf("not an orphan with candidates: %+v", f)
				}
				line, err := AppendLine(nil, f, Options{})
				if err != nil {
					t.Fatal(err)
				}
				var got, ref map[string]any
				if err := json.Unmarshal(line, &got); err != nil {
					t.Fatal(err)
				}
				want.Hex = hex.EncodeToString(b)
				json.Unmarshal(refLine(t, want, false), &ref)
				for _, k := range []string{"api_key", "version", "header_version"} {
					if _, ok := got[k]; ok {
						t.Errorf("orphan line has %q", k)
					}
					delete(ref, k)
				}
				if diff := cmp.Diff(ref, got); diff != "" {
					t.Errorf("orphan line (-encoding/json without api_key and version +AppendLine):\n%s", diff)
				}
			}
		}
	}
}

// TestNewerAsWarningLine: a request at a version newer than the spec has
// its header in the tree and no body.
func TestNewerAsWarningLine(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version, req.ClientSoftwareName, req.ClientSoftwareVersion = 4, "x", "1"
	b := testframes.Request("kgo", req, 77)
	b[7] = 9
	f := report.Decode(c, b, report.Options{NewerAsWarning: true, Lean: true})
	if f.Warning == "" || f.Error != "" {
		t.Fatalf("%+v", f)
	}
	line, _ := AppendLine(nil, f, Options{})
	if bytes.Contains(line, []byte(`"body"`)) || !bytes.Contains(line, []byte(`"name":"correlation_id"`)) {
		t.Errorf("line: %s", line)
	}
}

// TestCutHeaderLine: a frame cut before its header was captured whole
// names no API.
func TestCutHeaderLine(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	b := testframes.Request("kgo", testframes.CreateTopics(7), 5)
	f := report.Cut(c, b[:9], 0, nil, 0, report.Gap{Offset: 9, Size: 100, FrameSize: int64(len(b)), Captured: 9}, report.Options{Lean: true})
	line, _ := AppendLine(nil, f, Options{})
	if !f.APIUnknown || bytes.Contains(line, []byte(`"api_key"`)) || !json.Valid(line) {
		t.Errorf("%s", line)
	}
}

// TestLineClean: a clean frame's line is one line with the header facts,
// the tree and the round trip, and no error.
func TestLineClean(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	f := report.Decode(c, testframes.Request("kgo", testframes.CreateTopics(7), 42), report.Options{Roundtrip: true})
	var line bytes.Buffer
	if err := Line(&line, f); err != nil {
		t.Fatal(err)
	}
	if bytes.Count(line.Bytes(), []byte("\n")) != 1 {
		t.Errorf("Line wrote %d lines", bytes.Count(line.Bytes(), []byte("\n")))
	}
	var m map[string]any
	if err := json.Unmarshal(line.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"kind", "api_key", "version", "correlation_id", "tree", "roundtrip", "body"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON line lacks %q", k)
		}
	}
	if _, ok := m["error"]; ok {
		t.Errorf("clean frame has an error key")
	}
}

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
	return testframes.Request("kgo", req, 9)
}

// TestRecordContentsJSON: record keys, values and header values that read
// as text are written as a string value with their hex kept beside it;
// binary ones as hex, once.
func TestRecordContentsJSON(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	b := plainProduce([]kmsg.Record{
		{Key: []byte("user-1"), Value: []byte("Zürich\t\"q\"\n"), Headers: []kmsg.Header{{Key: "trace", Value: []byte("abc\u200d")}, {Key: "bin", Value: []byte{0, 1, 0xff}}}},
		{Key: []byte{0xff, 0xfe}, Value: []byte("\x1b[31mred")}, // not UTF-8; ESC: both stay hex
		{Key: nil, Value: []byte{}},                             // null key; empty value is text
	})
	checkLine(t, c, "plain produce", b, report.Options{}, nil)
	f := report.Decode(c, b, report.Options{Lean: true})
	if f.Error != "" {
		t.Fatal(f.Error)
	}
	line, err := AppendLine(nil, f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type node struct {
		Name     string
		Path     string
		Value    json.RawMessage
		Hex      string
		Children []*node
	}
	var got struct{ Tree *node }
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatal(err)
	}
	// In document order: the name, the typed value, the hex kept beside
	// text, of every record key, value and header value.
	var texts []string
	var walk func(n *node)
	walk = func(n *node) {
		if n.Name == "key" || n.Name == "value" || n.Name == "headerValue" {
			var v *string
			if err := json.Unmarshal(n.Value, &v); err != nil {
				t.Errorf("%s: value %s: %v", n.Path, n.Value, err)
			}
			s := "null"
			if v != nil {
				s = *v
			}
			texts = append(texts, n.Name+" "+s+" | "+n.Hex)
		}
		for _, k := range n.Children {
			walk(k)
		}
	}
	walk(got.Tree)
	want := []string{
		"key user-1 | 757365722d31",
		"value Zürich\t\"q\"\n | 5ac3bc72696368092271220a",
		"headerValue abc\u200d | 616263e2808d",
		"headerValue 0001ff | ", // binary: hex as the value, no second copy
		"key fffe | ",
		"value 1b5b33316d726564 | ",
		"key null | ",
		"value  | ", // empty text
	}
	if diff := cmp.Diff(want, texts); diff != "" {
		t.Errorf("record contents (-want +got):\n%s", diff)
	}
}

// TestAsResponseLine: a response decoded as a request (its kind not given)
// fails, and with MaybeResponse names the responses that explain it, in
// its line as encoding/json writes the field; a request that fails for
// want of bytes names none.
func TestAsResponseLine(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	ct := kmsg.NewPtrCreateTopicsResponse()
	ct.Version = 5
	rt := kmsg.NewCreateTopicsResponseTopic()
	rt.Topic = "orders"
	ct.Topics = append(ct.Topics, rt)
	b := testframes.Response(ct, 3)
	f := report.Decode(c, b, report.Options{MaybeResponse: true})
	if f.OK() || !slices.Contains(f.AsResponse, report.Candidate{APIKey: 19, Name: "CreateTopics", Version: 5}) {
		t.Fatalf("error %q, as response %v", f.Error, f.AsResponse)
	}
	checkLine(t, c, "as response", b, report.Options{MaybeResponse: true}, nil)
	if f := report.Decode(c, b, report.Options{}); len(f.AsResponse) != 0 {
		t.Errorf("without MaybeResponse: %v", f.AsResponse)
	}
	if f := report.Decode(c, testframes.Request("kgo", testframes.CreateTopics(7), 3)[:30], report.Options{MaybeResponse: true}); f.OK() || len(f.AsResponse) != 0 {
		t.Errorf("a cut request: error %q, as response %v", f.Error, f.AsResponse)
	}
}
