package jsonvalue

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
)

// TestRecordsObject builds a Produce request's records from the object
// form and reads the batch back with franz-go's kmsg parsers, checking the
// CRC with the standard library's Castagnoli table.
func TestRecordsObject(t *testing.T) {
	c := load(t, "4.3")
	api, _ := c.Reg.Lookup("Produce")
	js := `{"Acks":-1,"TimeoutMs":1000,"TopicData":[{"Name":"t","PartitionData":[{"Index":0,"Records":
		{"baseTimestamp":1700000000000,"producerId":7,"producerEpoch":1,"baseSequence":5,
		 "records":[{"key":"k0","value":"hello","headers":[{"key":"h","value":{"hex":"ff00"}}]},
		            {"value":null,"timestampDelta":25}]}}]}]}`
	val, err := Unmarshal(api.Request, 9, []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	body, err := c.EncodeBody(nil, api.Request, 9, &val)
	if err != nil {
		t.Fatal(err)
	}
	// The body decodes with our codec (CRCs and lengths checked) ...
	dec, _, err := c.DecodeBody(api.Request, 9, body, codec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(dec.Kids()[findField(t, api.Request.Body.Fields, "TopicData")].Kids()); n != 1 {
		t.Fatalf("%d topics", n)
	}
	// ... and kmsg reads the same request and batch.
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	if err := req.ReadFrom(body); err != nil {
		t.Fatal(err)
	}
	batchBytes := req.Topics[0].Partitions[0].Records
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(batchBytes); err != nil {
		t.Fatal(err)
	}
	if got := crc32.Checksum(batchBytes[21:], crc32.MakeTable(crc32.Castagnoli)); uint32(rb.CRC) != got {
		t.Errorf("CRC %08x, bytes give %08x", uint32(rb.CRC), got)
	}
	if int(rb.Length) != len(batchBytes)-12 || rb.Magic != 2 || rb.NumRecords != 2 || rb.LastOffsetDelta != 1 ||
		rb.FirstTimestamp != 1700000000000 || rb.MaxTimestamp != 1700000000025 || rb.ProducerID != 7 || rb.ProducerEpoch != 1 ||
		rb.FirstSequence != 5 || rb.PartitionLeaderEpoch != -1 || rb.Attributes != 0 {
		t.Errorf("batch header: %+v", rb)
	}
	recs := rb.Records
	var got []kmsg.Record
	for len(recs) > 0 {
		n, used := binary.Varint(recs)
		var r kmsg.Record
		if err := r.ReadFrom(recs[:used+int(n)]); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
		recs = recs[used+int(n):]
	}
	if len(got) != 2 || string(got[0].Key) != "k0" || string(got[0].Value) != "hello" || len(got[0].Headers) != 1 ||
		got[0].Headers[0].Key != "h" || string(got[0].Headers[0].Value) != "\xff\x00" ||
		got[1].Key != nil || got[1].Value != nil || got[1].TimestampDelta != 25 || got[1].OffsetDelta != 1 {
		t.Errorf("records: %+v", got)
	}
	// Printed back, records are hex, and that hex encodes to the same bytes.
	out, err := Marshal(api.Request, 9, &dec)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Unmarshal(api.Request, 9, out)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := c.EncodeBody(nil, api.Request, 9, &back)
	if string(again) != string(body) {
		t.Error("hex records do not re-encode to the same bytes")
	}

	for in, want := range map[string]string{
		`{"records":[{"key":"k","colour":"red"}]}`:  "records[0].colour: unknown field",
		`{"records":[{"headers":[{"value":"v"}]}]}`: "headers[0].key: null",
		`{"producerEpoch":40000}`:                   "producerEpoch: out of range",
		`{"records":[{"value":{"hex":"zz"}}]}`:      "records[0].value.hex",
		`{"baseOffset":0,"compression":"gzip"}`:     "compression: unknown field",
	} {
		_, err := Unmarshal(api.Request, 9, []byte(`{"TopicData":[{"PartitionData":[{"Records":`+in+`}]}]}`))
		var je *Error
		if !errors.As(err, &je) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", in, err, want)
		}
	}
}

func findField(t *testing.T, fs []*schema.Field, name string) int {
	for i, f := range fs {
		if f.Name == name {
			return i
		}
	}
	t.Fatalf("no field %s", name)
	return -1
}

// TestRecordsObjectNumbers: the integers of a records object are read as
// a body's are, an integral number in any form (1e3, 1000.0), and read by
// kmsg as that number; a fraction is refused saying so. With two bad keys,
// the error names the same one every time (the first in key order).
func TestRecordsObjectNumbers(t *testing.T) {
	c := load(t, "4.3")
	api, _ := c.Reg.Lookup("Produce")
	js := `{"TopicData":[{"Name":"t","PartitionData":[{"Records":
		{"baseOffset":1e3,"baseTimestamp":1.7e12,"producerEpoch":2.0,"records":[{"timestampDelta":2.5e1}]}}]}]}`
	val, err := Unmarshal(api.Request, 9, []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	body, err := c.EncodeBody(nil, api.Request, 9, &val)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	if err := req.ReadFrom(body); err != nil {
		t.Fatal(err)
	}
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(req.Topics[0].Partitions[0].Records); err != nil {
		t.Fatal(err)
	}
	if rb.FirstOffset != 1000 || rb.FirstTimestamp != 1700000000000 || rb.ProducerEpoch != 2 || rb.MaxTimestamp != 1700000000025 {
		t.Errorf("batch header: %+v", rb)
	}
	for in, want := range map[string]string{
		`{"baseOffset":1.5}`:                                           "Records.baseOffset: out of range: 1.5 is not an int64 (it has a fraction)",
		`{"records":[{"timestampDelta":1e30}]}`:                        "records[0].timestampDelta: out of range: 1e30 is not an int64 (beyond int64)",
		`{"producerEpoch":4e4}`:                                        "producerEpoch: out of range: 40000 is not an int16 (-32768..32767)",
		`{"zz":1,"baseOffset":"x","producerId":"y","transactional":1}`: "Records.baseOffset: wrong JSON type",
		`{"records":[{"value":1,"key":2,"zz":3}]}`:                     "records[0].key: wrong JSON type",
		`{"records":[{"headers":[{"value":1,"key":2}]}]}`:              "headers[0].key: wrong JSON type",
	} {
		for range 8 {
			_, err := Unmarshal(api.Request, 9, []byte(`{"TopicData":[{"PartitionData":[{"Records":`+in+`}]}]}`))
			var je *Error
			if !errors.As(err, &je) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v; want %q", in, err, want)
				break
			}
		}
	}
}

// TestRecordsObjectMaxTimestamp: the batch's maxTimestamp is the latest of
// its records' timestamps (baseTimestamp plus each timestampDelta, as
// kmsg reads them), also when every delta is negative; with no records it
// is the baseTimestamp.
func TestRecordsObjectMaxTimestamp(t *testing.T) {
	c := load(t, "4.3")
	api, _ := c.Reg.Lookup("Produce")
	for _, tc := range []struct {
		records string
		want    int64
	}{
		{`[{"timestampDelta":-5},{"timestampDelta":-10}]`, 1000 - 5},
		{`[{"timestampDelta":-5},{"timestampDelta":7}]`, 1000 + 7},
		{`[{}]`, 1000},
		{`[]`, 1000},
	} {
		js := `{"TopicData":[{"Name":"t","PartitionData":[{"Records":{"baseTimestamp":1000,"records":` + tc.records + `}}]}]}`
		val, err := Unmarshal(api.Request, 9, []byte(js))
		if err != nil {
			t.Fatal(err)
		}
		body, err := c.EncodeBody(nil, api.Request, 9, &val)
		if err != nil {
			t.Fatal(err)
		}
		req := kmsg.NewPtrProduceRequest()
		req.Version = 9
		if err := req.ReadFrom(body); err != nil {
			t.Fatal(err)
		}
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(req.Topics[0].Partitions[0].Records); err != nil {
			t.Fatal(err)
		}
		latest := rb.FirstTimestamp
		recs := rb.Records
		for i := 0; len(recs) > 0; i++ {
			n, used := binary.Varint(recs)
			var r kmsg.Record
			if err := r.ReadFrom(recs[:used+int(n)]); err != nil {
				t.Fatal(err)
			}
			if i == 0 || rb.FirstTimestamp+r.TimestampDelta64 > latest {
				latest = rb.FirstTimestamp + r.TimestampDelta64
			}
			recs = recs[used+int(n):]
		}
		if rb.MaxTimestamp != tc.want || latest != tc.want {
			t.Errorf("%s: maxTimestamp %d, records' latest %d, want %d", tc.records, rb.MaxTimestamp, latest, tc.want)
		}
	}
}

// TestRecordsLimit: records built from batch objects are counted against
// the bytes a frame can hold while they are built, and the read fails as
// soon as they pass them, naming the batch or record that did, before
// the bytes are built: a list of many small batch objects expands each 2
// bytes of JSON into a 61-byte batch. The limit here is small; the real
// one is math.MaxInt32.
func TestRecordsLimit(t *testing.T) {
	c := load(t, "4.3")
	api, _ := c.Reg.Lookup("Produce")
	produce := func(records string) []byte {
		return []byte(`{"Acks":1,"TopicData":[{"Name":"t","PartitionData":[{"Index":0,"Records":` + records + `}]}]}`)
	}
	const batch = 61 // an empty batch
	for _, tc := range []struct {
		records string
		limit   int64
		path    string // "" when it reads
	}{
		{`[{},{},{}]`, 3 * batch, ""},
		{`[{},{},{},{}]`, 3 * batch, "ProduceRequest.TopicData[0].PartitionData[0].Records[3]"},
		{`[{},{"records":[{},{}]},{}]`, 2*batch + 8, "ProduceRequest.TopicData[0].PartitionData[0].Records[1].records[1]"},
		{`{"records":[{"key":"k","value":"v"}]}`, batch + 9, ""}, // 8 bytes and its length
		{`{"records":[{"key":"k","value":"v"}]}`, batch + 8, "ProduceRequest.TopicData[0].PartitionData[0].Records.records[0]"},
		{`"` + strings.Repeat("00", 1000) + `"`, 0, ""}, // hex is not built
	} {
		in := produce(tc.records)
		val, err := unmarshalAt(api.Request, 9, in, 0, len(in), tc.limit)
		if tc.path == "" {
			if err != nil {
				t.Errorf("%s within %d: %v", tc.records, tc.limit, err)
			} else if _, err := c.EncodeBody(nil, api.Request, 9, &val); err != nil {
				t.Errorf("%s: %v", tc.records, err)
			}
			continue
		}
		if !errors.Is(err, ErrRange) || !strings.HasPrefix(err.Error(), tc.path+": ") || !strings.Contains(err.Error(), "more than a frame holds") {
			t.Errorf("%s within %d: %v, want the limit's error at %s", tc.records, tc.limit, err, tc.path)
		}
	}
	// A million batch objects, 3 MB of JSON, would be 61 MB of batches:
	// with a limit of 1 MB the read fails having allocated less than the
	// input's size.
	in := produce(repeatList(`{}`, 1_000_000))
	beyond, _, err := allocated(func() (codec.Value, error) { return unmarshalAt(api.Request, 9, in, 0, len(in), 1<<20) })
	if !errors.Is(err, ErrRange) || !strings.Contains(err.Error(), "Records[17189]: ") {
		t.Errorf("a million batches: %v", err)
	}
	if beyond > uint64(len(in)) {
		t.Errorf("a million batches: %d bytes allocated for %d bytes of JSON", beyond, len(in))
	}
}
