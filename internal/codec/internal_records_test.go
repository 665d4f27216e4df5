package codec_test

import (
	"encoding/binary"
	"hash/crc32"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/recschema"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testshared"
)

// recordsRoot is where tests read Kafka's record schemas (never copied).
var recordsRoot = testshared.Join("kafka-records")

// recordsCodec is a fresh 4.3 codec with the 4.3 record schemas.
func recordsCodec(t testing.TB) *codec.Codec {
	t.Helper()
	testshared.Dir(t)
	reg, err := schema.Load(filepath.Join(specRoot, "4.3"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := recschema.Load(filepath.Join(recordsRoot, "4.3"))
	if err != nil {
		t.Fatal(err)
	}
	c := codec.New(reg)
	c.SetRecordSchemas(recs)
	return c
}

// kmsgBatch builds a RecordBatch v2 of the given key/value pairs (nil is
// null) with kmsg's Record and RecordBatch types; lengths and the CRC are
// computed here.
func kmsgBatch(kvs ...[]byte) []byte { return kmsgBatchAttrs(0, kvs...) }

// kmsgBatchAttrs is kmsgBatch with batch attributes (0x20: control).
func kmsgBatchAttrs(attrs int16, kvs ...[]byte) []byte {
	var area []byte
	for i := 0; i+1 < len(kvs); i += 2 {
		r := kmsg.Record{OffsetDelta: int32(i / 2), Key: kvs[i], Value: kvs[i+1]}
		enc := r.AppendTo(nil)
		r.Length = int32(len(enc) - 1)
		area = r.AppendTo(area)
	}
	kb := kmsg.RecordBatch{Magic: 2, Attributes: attrs, LastOffsetDelta: int32(len(kvs)/2 - 1), ProducerID: -1, ProducerEpoch: -1,
		FirstSequence: -1, NumRecords: int32(len(kvs) / 2), Records: area}
	raw := kb.AppendTo(nil)
	kb.Length = int32(len(raw) - 12)
	raw = kb.AppendTo(nil)
	kb.CRC = int32(crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return kb.AppendTo(nil)
}

// produceFrame frames a kmsg Produce v12 request (flexible, topic names)
// with request header v2.
func produceFrame(topic string, batch []byte) []byte {
	req := kmsg.NewProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 12, -1, 1000
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = topic
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Partition, pp.Records = 0, batch
	tp.Partitions = append(tp.Partitions, pp)
	req.Topics = append(req.Topics, tp)
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint16(b, 0)  // Produce
	b = binary.BigEndian.AppendUint16(b, 12) // v12
	b = binary.BigEndian.AppendUint32(b, 9)  // correlation id
	b = binary.BigEndian.AppendUint16(b, 0)  // client id ""
	b = append(b, 0)                         // no header tags
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// fetchFrame frames a kmsg Fetch v12 response (topic names) carrying batch.
func fetchFrame(topic string, batch []byte) []byte {
	resp := kmsg.NewFetchResponse()
	resp.Version = 12
	tp := kmsg.NewFetchResponseTopic()
	tp.Topic = topic
	pp := kmsg.NewFetchResponseTopicPartition()
	pp.HighWatermark, pp.RecordBatches = 10, batch
	tp.Partitions = append(tp.Partitions, pp)
	resp.Topics = append(resp.Topics, tp)
	return responseFrame(1, true, 9, resp.AppendTo(nil))
}

// recordNodes returns the key and value rows of every record, in order.
func recordNodes(t *span.Tree) (keys, values []row) {
	t.Walk(t.Root(), func(id span.ID, _ int) {
		if t.Name(id) == "Record" && t.Type(id) == "Record v2" {
			for _, k := range (row{t, id}).Kids() {
				switch k.Name() {
				case "key":
					keys = append(keys, k)
				case "value":
					values = append(values, k)
				}
			}
		}
	})
	return keys, values
}

// fieldsOf lists "name=value" of a record struct row's children.
func fieldsOf(n row) string {
	var parts []string
	for _, k := range n.Kids() {
		parts = append(parts, k.Name()+k.ValueText())
	}
	return strings.Join(parts, " ")
}

func checkFrameTree(t *testing.T, f *codec.Frame, size int, kind schema.MessageType) {
	t.Helper()
	if probs := checkTree(f.SpanTree(), size); len(probs) > 0 {
		t.Errorf("tree does not tile:\n%s", strings.Join(probs, "\n"))
	}
	if probs := checkCategories(f.SpanTree(), kind); len(probs) > 0 {
		t.Errorf("categories:\n%s", strings.Join(probs, "\n"))
	}
}

// TestConsumerOffsetsRecords writes __consumer_offsets records with kmsg's
// OffsetCommitKey/Value and GroupMetadataKey (a tombstone), carries them in
// a Produce request and a Fetch response, and checks the decoded nodes:
// the record type names the schema by its apiKey, the value's version
// selects its version, every field holds what kmsg wrote, and the leaves
// tile the frame.
func TestConsumerOffsetsRecords(t *testing.T) {
	c := recordsCodec(t)
	key := (&kmsg.OffsetCommitKey{Version: 1, Group: "grp", Topic: "orders", Partition: 3}).AppendTo(nil)
	val := (&kmsg.OffsetCommitValue{Version: 3, Offset: 42, LeaderEpoch: 5, Metadata: "m", CommitTimestamp: 1700000000000}).AppendTo(nil)
	gkey := (&kmsg.GroupMetadataKey{Version: 2, Group: "grp"}).AppendTo(nil)
	batch := kmsgBatch(key, val, gkey, nil)

	for _, tc := range []struct {
		name  string
		frame []byte
		kind  schema.MessageType
	}{
		{"Produce v12", produceFrame("__consumer_offsets", batch), schema.TypeRequest},
		{"Fetch v12", fetchFrame("__consumer_offsets", batch), schema.TypeResponse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f *codec.Frame
			var err error
			if tc.kind == schema.TypeRequest {
				f, err = c.DecodeRequest(tc.frame, codec.Options{Spans: true})
			} else {
				api, _ := c.Reg.API(1)
				f, err = c.DecodeResponse(tc.frame, api, 12, codec.Options{Spans: true})
			}
			if err != nil {
				t.Fatal(err)
			}
			checkFrameTree(t, f, len(tc.frame), tc.kind)
			keys, vals := recordNodes(f.SpanTree())
			if len(keys) != 2 || len(vals) != 2 {
				t.Fatalf("%d keys, %d values", len(keys), len(vals))
			}
			k := keys[0]
			if k.Type() != "OffsetCommitKey" || len(k.Kids()) != 3 || k.Kids()[0].Name() != "length" || k.Kids()[1].Name() != "type" ||
				k.Kids()[1].ValueText() != "= 1 (OffsetCommitKey)" || k.Kids()[2].Name() != "OffsetCommitKey" {
				t.Fatalf("key node %s with %d children", k.Type(), len(k.Kids()))
			}
			if got := fieldsOf(k.Kids()[2]); got != `group= "grp" (int16 len=3) topic= "orders" (int16 len=6) partition= 3` {
				t.Errorf("OffsetCommitKey fields: %s", got)
			}
			v := vals[0]
			if v.Type() != "OffsetCommitValue" || v.Kids()[1].Name() != "version" || v.Kids()[1].Int() != 3 || v.Kids()[2].Name() != "OffsetCommitValue" {
				t.Fatalf("value node %s", v.Type())
			}
			if got := fieldsOf(v.Kids()[2]); !strings.HasPrefix(got, `offset= 42 leaderEpoch= 5 metadata= "m" (int16 len=1) commitTimestamp= 1700000000000`) {
				t.Errorf("OffsetCommitValue v3 fields: %s", got)
			}
			bodyCat := span.CatRequestBody
			if tc.kind == schema.TypeResponse {
				bodyCat = span.CatResponseBody
			}
			for _, n := range v.Kids()[2].Kids() {
				if n.Cat() != bodyCat {
					t.Errorf("field %s has category %v, want %v", n.Name(), n.Cat(), bodyCat)
				}
			}
			if keys[1].Type() != "GroupMetadataKey" || vals[1].Note() != "tombstone" || !vals[1].Null() {
				t.Errorf("second record: key %s, value note %q", keys[1].Type(), vals[1].Note())
			}
		})
	}

	// Another topic's records stay bytes; --records-topic forces the
	// interpretation.
	frame := produceFrame("orders", batch)
	f, err := c.DecodeRequest(frame, codec.Options{Spans: true})
	if err != nil {
		t.Fatal(err)
	}
	if keys, _ := recordNodes(f.SpanTree()); keys[0].Type() != "bytes" || len(keys[0].Kids()) != 0 {
		t.Errorf("orders key decoded as %s", keys[0].Type())
	}
	c.RecordsTopic = "__consumer_offsets"
	f, err = c.DecodeRequest(frame, codec.Options{Spans: true})
	if err != nil {
		t.Fatal(err)
	}
	if keys, _ := recordNodes(f.SpanTree()); keys[0].Type() != "OffsetCommitKey" {
		t.Errorf("forced: key decoded as %s", keys[0].Type())
	}
	checkFrameTree(t, f, len(frame), schema.TypeRequest)
}

// TestTransactionStateRecords: kmsg's TxnMetadataKey/Value in
// __transaction_state, a flexible value version with tagged fields.
func TestTransactionStateRecords(t *testing.T) {
	c := recordsCodec(t)
	key := (&kmsg.TxnMetadataKey{Version: 0, TransactionalID: "tx"}).AppendTo(nil)
	val := (&kmsg.TxnMetadataValue{Version: 1, ProducerID: 77, ProducerEpoch: 2, TimeoutMillis: 60000, State: 1,
		Topics:              []kmsg.TxnMetadataValueTopic{{Topic: "t", Partitions: []int32{0, 4}}},
		LastUpdateTimestamp: 5, StartTimestamp: 4, PreviousProducerID: 76, NextProducerID: 78, ClientTransactionVersion: 2, NextProducerEpoch: 3}).AppendTo(nil)
	frame := produceFrame("__transaction_state", kmsgBatch(key, val))
	f, err := c.DecodeRequest(frame, codec.Options{Spans: true})
	if err != nil {
		t.Fatal(err)
	}
	checkFrameTree(t, f, len(frame), schema.TypeRequest)
	keys, vals := recordNodes(f.SpanTree())
	if keys[0].Type() != "TransactionLogKey" || vals[0].Type() != "TransactionLogValue" {
		t.Fatalf("key %s, value %s", keys[0].Type(), vals[0].Type())
	}
	got := fieldsOf(vals[0].Kids()[2])
	for _, want := range []string{"ProducerId= 77", "ProducerEpoch= 2", "TransactionTimeoutMs= 60000", "TransactionStatus= 1",
		"TransactionPartitions= 1 element", "TransactionLastUpdateTimestampMs= 5", "TransactionStartTimestampMs= 4", "tagged_fields= 4"} {
		if !strings.Contains(got, want) {
			t.Errorf("TransactionLogValue v1 lacks %q: %s", want, got)
		}
	}
	var tagged []string
	vt := vals[0].t
	vt.Walk(vals[0].id, func(id span.ID, _ int) {
		if strings.HasPrefix(vt.Type(id), "tag ") {
			tagged = append(tagged, vt.Name(id))
		}
	})
	if strings.Join(tagged, " ") != "PreviousProducerId NextProducerId ClientTransactionVersion NextProducerEpoch" {
		t.Errorf("tagged fields: %v", tagged)
	}
}

// TestClusterMetadataRecords hand-builds __cluster_metadata records (no
// peer writes them) and checks them field by field against the spec:
// frame version 1, api key 2 (TopicRecord), version 0, then the fields of
// TopicRecord v0 in spec order; a record whose body is cut short is
// flagged, shown raw, and does not fail the frame.
func TestClusterMetadataRecords(t *testing.T) {
	c := recordsCodec(t)
	_, mod := c.RecordSchemas().ForTopic("__cluster_metadata")
	topicRec, ok := mod.Metadata(2)
	if !ok || topicRec.Name != "TopicRecord" {
		t.Fatalf("api key 2 is %v", topicRec)
	}
	// TopicRecord v0 (flexible): compact string "t", uuid, no tags.
	id := []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	good := append(append([]byte{1, 2, 0, 0x02, 't'}, id...), 0)
	cut := []byte{1, 2, 0, 0x02, 't', 0, 1}
	cutName := []byte{1, 2, 0, 0x05, 't'} // a name of 4 bytes, one there
	frame := fetchFrame("__cluster_metadata", kmsgBatch(nil, good, nil, cut, nil, cutName))
	api, _ := c.Reg.API(1)
	f, err := c.DecodeResponse(frame, api, 12, codec.Options{Spans: true})
	if err != nil {
		t.Fatal(err)
	}
	checkFrameTree(t, f, len(frame), schema.TypeResponse)
	keys, vals := recordNodes(f.SpanTree())
	if len(vals) != 3 || !keys[0].Null() {
		t.Fatalf("%d values", len(vals))
	}
	v := vals[0]
	var framing []string
	for _, k := range v.Kids()[:4] {
		framing = append(framing, k.Name()+k.ValueText())
	}
	if got := strings.Join(framing, " "); got != "length= 22 frame_version= 1 api_key= 2 (TopicRecord) version= 0" {
		t.Errorf("framing: %s", got)
	}
	body := v.Kids()[4]
	if v.Type() != "TopicRecord" || body.Name() != "TopicRecord" || body.Off() != v.Off()+4 || body.Len() != len(good)-3 {
		t.Fatalf("body %s [%d, %d]", body.Name(), body.Off(), body.Len())
	}
	// The fields in the order, and with the types, the spec gives.
	var wire []*schema.Field
	for _, fld := range topicRec.Body.Fields {
		if fld.Versions.Contains(0) && !fld.IsTagged(0) {
			wire = append(wire, fld)
		}
	}
	if len(body.Kids()) != len(wire)+1 {
		t.Fatalf("%d children for %d fields", len(body.Kids()), len(wire))
	}
	for i, fld := range wire {
		if body.Kids()[i].Name() != fld.Name || body.Kids()[i].Type() != fld.Type.Name {
			t.Errorf("child %d is %s %s, the spec says %s %s", i, body.Kids()[i].Name(), body.Kids()[i].Type(), fld.Name, fld.Type.Name)
		}
	}
	if got := fieldsOf(body); got != `Name= "t" (compact, len+1=2) TopicId= 00010203-0405-0607-0809-0a0b0c0d0e0f tagged_fields= 0` {
		t.Errorf("TopicRecord fields: %s", got)
	}
	bad := vals[1]
	if bad.Flag() == "" || !strings.Contains(bad.Flag(), "not a valid TopicRecord v0") {
		t.Errorf("cut record flag: %q", bad.Flag())
	}
	if last := bad.Kids()[len(bad.Kids())-1]; last.Name() != "undecoded" && last.Name() != "TopicRecord" {
		t.Errorf("cut record ends with %s", last.Name())
	}
	// A name cut after its prefix shows the prefix alone, not "".
	if got := fieldsOf(bad.Kids()[4]); got != `Name= "t" (compact, len+1=2)` {
		t.Errorf("cut record's fields: %s", got)
	}
	if got := fieldsOf(vals[2].Kids()[4]); got != `Nameno value (compact, len+1=5)` {
		t.Errorf("record cut in its name: %s", got)
	}
}

// FuzzInternalRecords puts arbitrary keys and values in the records of
// each internal topic: decoding never fails the frame for them, never
// panics, and the leaves still tile the frame.
func FuzzInternalRecords(f *testing.F) {
	f.Add(uint8(0), (&kmsg.OffsetCommitKey{Version: 1, Group: "g"}).AppendTo(nil), (&kmsg.OffsetCommitValue{Version: 4}).AppendTo(nil))
	f.Add(uint8(1), (&kmsg.TxnMetadataKey{TransactionalID: "t"}).AppendTo(nil), (&kmsg.TxnMetadataValue{Version: 1}).AppendTo(nil))
	f.Add(uint8(3), []byte(nil), []byte{1, 2, 0, 2, 't', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint8(2), []byte{0, 0, 0, 1, 'x'}, []byte{0, 0})
	c := recordsCodec(f)
	topics := recschema.Topics()
	f.Fuzz(func(t *testing.T, which uint8, key, value []byte) {
		frame := produceFrame(topics[int(which)%len(topics)], kmsgBatch(key, value))
		fr, err := c.DecodeRequest(frame, codec.Options{Spans: true})
		if err != nil {
			t.Fatalf("the frame is well-formed: %v", err)
		}
		if probs := checkTree(fr.SpanTree(), len(frame)); len(probs) > 0 {
			t.Fatalf("tree does not tile:\n%s", strings.Join(probs, "\n"))
		}
	})
}

// TestControlRecords: the control batches of internal topics (a commit
// marker in __consumer_offsets, a KRaft version record in
// __cluster_metadata) read as their control record types, with kmsg's
// ControlRecordKey and EndTxnMarker writing the bytes.
func TestControlRecords(t *testing.T) {
	c := recordsCodec(t)
	commit := (&kmsg.ControlRecordKey{Version: 0, Type: kmsg.ControlRecordKeyTypeCommit}).AppendTo(nil)
	marker := (&kmsg.EndTxnMarker{Version: 0, CoordinatorEpoch: 12}).AppendTo(nil)
	kraftKey := (&kmsg.ControlRecordKey{Version: 0, Type: 5}).AppendTo(nil)
	kraftVal := []byte{0, 0, 0, 0, 0, 1, 0} // value v0 (flexible): Version 0, KRaftVersion 1, no tags
	for _, tc := range []struct {
		topic      string
		key, value []byte
		want       string
	}{
		{"__consumer_offsets", commit, marker, "CoordinatorEpoch= 12"},
		{"__cluster_metadata", kraftKey, kraftVal, "Version= 0 KRaftVersion= 1 tagged_fields= 0"},
	} {
		frame := fetchFrame(tc.topic, kmsgBatchAttrs(0x20, tc.key, tc.value))
		api, _ := c.Reg.API(1)
		f, err := c.DecodeResponse(frame, api, 12, codec.Options{Spans: true})
		if err != nil {
			t.Fatal(err)
		}
		checkFrameTree(t, f, len(frame), schema.TypeResponse)
		keys, vals := recordNodes(f.SpanTree())
		if keys[0].Type() != "ControlRecordTypeSchema" || !strings.Contains(fieldsOf(keys[0].Kids()[2]), "Type= ") {
			t.Errorf("%s: control key %s", tc.topic, keys[0].Type())
		}
		if got := fieldsOf(vals[0].Kids()[2]); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: control value %s: %s", tc.topic, vals[0].Type(), got)
		}
	}
}

// TestShareGroupStateRecords hand-builds a __share_group_state record (no
// peer writes them) and checks it field by field: a ShareUpdateKey (record
// type 1: a classic string, a uuid, an int32) and a flexible
// ShareUpdateValue v0 with one state batch and its tagged field.
func TestShareGroupStateRecords(t *testing.T) {
	c := recordsCodec(t)
	id := etUUID
	key := append(append([]byte{0, 1, 0, 1, 'g'}, id...), 0, 0, 0, 5)
	val := etHex(t, "00 00 | 00 00 00 01 | 00 00 00 02 | 00 00 00 00 00 00 00 10"+ // v0, SnapshotEpoch 1, LeaderEpoch 2, StartOffset 16
		"| 02 | 00 00 00 00 00 00 00 10 | 00 00 00 00 00 00 00 13 | 01 | 00 02 | 00"+ // one batch: 16-19, state 1, count 2, no tags
		"| 01 | 00 04 00 00 00 09") // one tag: 0 (DeliveryCompleteCount), 4 bytes, 9
	frame := produceFrame("__share_group_state", kmsgBatch(key, val))
	f, err := c.DecodeRequest(frame, codec.Options{Spans: true})
	if err != nil {
		t.Fatal(err)
	}
	checkFrameTree(t, f, len(frame), schema.TypeRequest)
	keys, vals := recordNodes(f.SpanTree())
	if got := fieldsOf(keys[0].Kids()[2]); keys[0].Type() != "ShareUpdateKey" || got != `GroupId= "g" (int16 len=1) TopicId= 00112233-4455-6677-8899-aabbccddeeff Partition= 5` {
		t.Errorf("key %s: %s", keys[0].Type(), got)
	}
	body := vals[0].Kids()[2]
	if got := fieldsOf(body); vals[0].Type() != "ShareUpdateValue" || got != "SnapshotEpoch= 1 LeaderEpoch= 2 StartOffset= 16 StateBatches= 1 element tagged_fields= 1" {
		t.Errorf("value %s: %s", vals[0].Type(), got)
	}
	batch := body.Kids()[3].Kids()[1]
	if got := fieldsOf(batch); got != "FirstOffset= 16 LastOffset= 19 DeliveryState= 1 DeliveryCount= 2 tagged_fields= 0" {
		t.Errorf("state batch: %s", got)
	}
	if tag := body.Kids()[4].Kids()[1]; tag.Name() != "DeliveryCompleteCount" || !strings.Contains(fieldsOf(tag), "DeliveryCompleteCount= 9") {
		t.Errorf("tagged field %s: %s", tag.Name(), fieldsOf(tag))
	}
}
