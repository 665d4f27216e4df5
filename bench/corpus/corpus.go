// Package corpus builds the deterministic benchmark corpus: realistic (not
// smallest) Kafka frames, written by franz-go's kmsg so that they come from
// an implementation independent of ours.
//
// The workloads are
//
//   - produce: Produce requests, each carrying RecordBatch v2s of 100
//     records with 1 KiB values;
//   - fetch: Fetch responses with several batches per partition;
//   - metadata: Metadata responses describing 1,000 partitions;
//   - offsetcommit: OffsetCommit requests for 100 partitions;
//   - mixed: a request and a response of every API that both kmsg and the
//     spec know, at the highest and lowest common versions, with every field
//     filled and arrays of three elements.
//
// The package is used only by benchmarks, fuzz seeds and the programs under
// bench/; nothing in the manifester binary imports it.
package corpus

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ClientID is the client id written in every request header.
const ClientID = "bench-client"

// Frame is one encoded request or response frame, size prefix included.
type Frame struct {
	Request       bool
	Key, Version  int16
	CorrelationID int32
	// Bytes is the whole frame: int32 size, header, body.
	Bytes []byte
	// BodyOff is where the body starts in Bytes (after the header).
	BodyOff int
}

// Body returns the message body of the frame.
func (f *Frame) Body() []byte { return f.Bytes[f.BodyOff:] }

// Workload is a named list of frames.
type Workload struct {
	Name   string
	Frames []Frame
}

// Size returns the total number of bytes of the workload's frames.
func (w *Workload) Size() int {
	n := 0
	for i := range w.Frames {
		n += len(w.Frames[i].Bytes)
	}
	return n
}

// Versions says which versions of an API the decoder under test knows; the
// mixed workload uses versions in the intersection with kmsg's.
type Versions func(key int16) (lo, hi int16, ok bool)

// Build returns the five workloads. known restricts the mixed workload and
// the versions of the others to what the decoder under test supports.
func Build(known Versions) []Workload {
	g := &gen{rng: rand.New(rand.NewPCG(1, 2))}
	return []Workload{
		{Name: "produce", Frames: g.produce(known)},
		{Name: "fetch", Frames: g.fetch(known)},
		{Name: "metadata", Frames: g.metadata(known)},
		{Name: "offsetcommit", Frames: g.offsetCommit(known)},
		{Name: "mixed", Frames: g.mixed(known)},
	}
}

type gen struct {
	rng  *rand.Rand
	corr int32
	// codec, when not 0, is the compression of every batch's records
	// (the RecordBatch attribute), done by compress; their values are
	// then text (log lines), which compresses as records in the field
	// do, where random bytes would not.
	codec    int
	compress func(codec int, data []byte) []byte
}

// text returns n bytes of log-like text with random numbers in it.
func (g *gen) text(n int) []byte {
	var b []byte
	for len(b) < n {
		b = fmt.Appendf(b, "ts=%d level=info path=/api/v1/items/%d status=200 latency_ms=%d user=%d; ",
			1_700_000_000_000+g.rng.IntN(1e6), g.rng.IntN(1e5), g.rng.IntN(500), g.rng.IntN(1e4))
	}
	return b[:n]
}

func (g *gen) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.rng.Uint32())
	}
	return b
}

func (g *gen) uuid() [16]byte {
	var u [16]byte
	copy(u[:], g.bytes(16))
	return u
}

// version picks the highest version both kmsg (max) and the decoder know.
func version(known Versions, key, max int16) (int16, bool) {
	lo, hi, ok := known(key)
	if !ok || lo > max {
		return 0, false
	}
	return min(hi, max), true
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// batch returns a RecordBatch v2 of n records with valueSize-byte
// values, a 16-byte key and one header each, built with kmsg; its records
// are compressed when g.codec is set.
func (g *gen) batch(baseOffset int64, n, valueSize int) []byte {
	var recs []byte
	for i := 0; i < n; i++ {
		value := g.bytes
		if g.codec != 0 {
			value = g.text
		}
		r := kmsg.Record{
			TimestampDelta64: int64(i),
			OffsetDelta:      int32(i),
			Key:              []byte(fmt.Sprintf("key-%012d", baseOffset+int64(i))),
			Value:            value(valueSize),
			Headers:          []kmsg.Header{{Key: "trace", Value: g.bytes(8)}},
		}
		body := r.AppendTo(nil) // Length 0 is one varint byte
		r.Length = int32(len(body) - 1)
		recs = r.AppendTo(recs)
	}
	b := kmsg.RecordBatch{
		FirstOffset:          baseOffset,
		PartitionLeaderEpoch: 5,
		Magic:                2,
		LastOffsetDelta:      int32(n - 1),
		FirstTimestamp:       1_700_000_000_000,
		MaxTimestamp:         1_700_000_000_000 + int64(n-1),
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           int32(n),
		Records:              recs,
	}
	if g.codec != 0 {
		b.Attributes |= int16(g.codec)
		b.Records = g.compress(g.codec, recs)
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], castagnoli))
	return out
}

// RecordBatch returns a deterministic RecordBatch v2 of n records with
// valueSize-byte values, as the workloads use.
func RecordBatch(seed uint64, n, valueSize int) []byte {
	g := &gen{rng: rand.New(rand.NewPCG(seed, 2))}
	return g.batch(0, n, valueSize)
}

// CompressedRecordBatch is RecordBatch with values of log-like text and
// its records compressed with codec by compress, as CompressedExchanges'
// batches are.
func CompressedRecordBatch(seed uint64, n, valueSize, codec int, compress func(codec int, data []byte) []byte) []byte {
	g := &gen{rng: rand.New(rand.NewPCG(seed, 2)), codec: codec, compress: compress}
	return g.batch(0, n, valueSize)
}

func (g *gen) request(r kmsg.Request) Frame {
	g.corr++
	b := kmsg.NewRequestFormatter(kmsg.FormatterClientID(ClientID)).AppendRequest(nil, r, g.corr)
	off := 4 + 2 + 2 + 4 + 2 + len(ClientID)
	if r.IsFlexible() {
		off++
	}
	return Frame{Request: true, Key: r.Key(), Version: r.GetVersion(), CorrelationID: g.corr, Bytes: b, BodyOff: off}
}

func (g *gen) response(r kmsg.Response) Frame {
	g.corr++
	return ResponseFrame(r, g.corr)
}

// ResponseFrame frames a kmsg response with correlation id corr: size,
// correlation id, the flexible header's empty tagged fields, the body.
func ResponseFrame(r kmsg.Response, corr int32) Frame {
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	// ApiVersions responses keep header v0 so old clients can read them.
	if r.IsFlexible() && r.Key() != 18 {
		b = append(b, 0)
	}
	off := len(b)
	b = r.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return Frame{Key: r.Key(), Version: r.GetVersion(), CorrelationID: corr, Bytes: b, BodyOff: off}
}

func (g *gen) produce(known Versions) []Frame {
	req := kmsg.NewPtrProduceRequest()
	v, ok := version(known, req.Key(), req.MaxVersion())
	if !ok {
		return nil
	}
	var out []Frame
	for f := 0; f < 4; f++ {
		req := kmsg.NewPtrProduceRequest()
		req.SetVersion(v)
		req.Acks = -1
		req.TimeoutMillis = 30000
		t := kmsg.NewProduceRequestTopic()
		t.Topic = "orders"
		t.TopicID = g.uuid()
		for p := int32(0); p < 2; p++ {
			pp := kmsg.NewProduceRequestTopicPartition()
			pp.Partition = p
			pp.Records = g.batch(int64(f*100), 100, 1024)
			t.Partitions = append(t.Partitions, pp)
		}
		req.Topics = append(req.Topics, t)
		out = append(out, g.request(req))
	}
	return out
}

func (g *gen) fetch(known Versions) []Frame {
	resp := kmsg.NewPtrFetchResponse()
	v, ok := version(known, resp.Key(), resp.MaxVersion())
	if !ok {
		return nil
	}
	var out []Frame
	for f := 0; f < 4; f++ {
		resp := kmsg.NewPtrFetchResponse()
		resp.SetVersion(v)
		resp.SessionID = 42
		for ti := 0; ti < 2; ti++ {
			t := kmsg.NewFetchResponseTopic()
			t.Topic = fmt.Sprintf("events-%d", ti)
			t.TopicID = g.uuid()
			for p := int32(0); p < 2; p++ {
				pp := kmsg.NewFetchResponseTopicPartition()
				pp.Partition = p
				pp.HighWatermark = 100_000
				pp.LastStableOffset = 100_000
				pp.LogStartOffset = 0
				pp.PreferredReadReplica = -1
				for b := 0; b < 3; b++ {
					pp.RecordBatches = append(pp.RecordBatches, g.batch(int64(b*25), 25, 1024)...)
				}
				t.Partitions = append(t.Partitions, pp)
			}
			resp.Topics = append(resp.Topics, t)
		}
		out = append(out, g.response(resp))
	}
	return out
}

func (g *gen) metadata(known Versions) []Frame {
	resp := kmsg.NewPtrMetadataResponse()
	v, ok := version(known, resp.Key(), resp.MaxVersion())
	if !ok {
		return nil
	}
	resp.SetVersion(v)
	for b := int32(0); b < 5; b++ {
		br := kmsg.NewMetadataResponseBroker()
		br.NodeID = b
		br.Host = fmt.Sprintf("broker-%d.kafka.internal.example.com", b)
		br.Port = 9092
		rack := fmt.Sprintf("rack-%d", b%3)
		br.Rack = &rack
		resp.Brokers = append(resp.Brokers, br)
	}
	cluster := "manifester-bench-cluster"
	resp.ClusterID = &cluster
	resp.ControllerID = 1
	for ti := 0; ti < 20; ti++ {
		t := kmsg.NewMetadataResponseTopic()
		name := fmt.Sprintf("topic-%03d-with-a-realistic-name", ti)
		t.Topic = &name
		t.TopicID = g.uuid()
		t.AuthorizedOperations = -2147483648
		for p := int32(0); p < 50; p++ {
			pp := kmsg.NewMetadataResponseTopicPartition()
			pp.Partition = p
			pp.Leader = p % 5
			pp.LeaderEpoch = 7
			pp.Replicas = []int32{p % 5, (p + 1) % 5, (p + 2) % 5}
			pp.ISR = []int32{p % 5, (p + 1) % 5, (p + 2) % 5}
			t.Partitions = append(t.Partitions, pp)
		}
		resp.Topics = append(resp.Topics, t)
	}
	return []Frame{g.response(resp)}
}

func (g *gen) offsetCommit(known Versions) []Frame {
	req := kmsg.NewPtrOffsetCommitRequest()
	v, ok := version(known, req.Key(), req.MaxVersion())
	if !ok {
		return nil
	}
	var out []Frame
	for f := 0; f < 4; f++ {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.SetVersion(v)
		req.Group = "payments-consumer-group"
		req.Generation = 12
		req.MemberID = "consumer-1-7f8e9a1b-2c3d-4e5f-8091-a2b3c4d5e6f7"
		for ti := 0; ti < 10; ti++ {
			t := kmsg.NewOffsetCommitRequestTopic()
			t.Topic = fmt.Sprintf("payments-%02d", ti)
			t.TopicID = g.uuid()
			for p := int32(0); p < 10; p++ {
				pp := kmsg.NewOffsetCommitRequestTopicPartition()
				pp.Partition = p
				pp.Offset = int64(f*1000) + int64(p)*17
				pp.LeaderEpoch = 3
				meta := "committed by bench"
				pp.Metadata = &meta
				t.Partitions = append(t.Partitions, pp)
			}
			req.Topics = append(req.Topics, t)
		}
		out = append(out, g.request(req))
	}
	return out
}

// mixed builds a request and a response of every API, at the highest and
// lowest versions both sides know, with every field filled.
func (g *gen) mixed(known Versions) []Frame {
	var out []Frame
	for key := int16(0); key < 200; key++ {
		req := kmsg.RequestForKey(key)
		if req == nil {
			continue
		}
		lo, hi, ok := known(key)
		if !ok {
			continue
		}
		hi = min(hi, req.MaxVersion())
		if lo > hi {
			continue
		}
		for _, v := range []int16{hi, lo} {
			req := kmsg.RequestForKey(key)
			req.SetVersion(v)
			g.fill(reflect.ValueOf(req).Elem(), "", 0)
			req.SetVersion(v)
			resp := req.ResponseKind()
			resp.SetVersion(v)
			g.fill(reflect.ValueOf(resp).Elem(), "", 0)
			resp.SetVersion(v)
			out = append(out, g.request(req), g.response(resp))
			if lo == hi {
				break
			}
		}
	}
	return out
}

// fill sets every field of v to a plausible non-zero value: strings, byte
// blobs (a valid RecordBatch for records fields), uuids, and arrays of three
// elements (one below depth 3).
func (g *gen) fill(v reflect.Value, name string, depth int) {
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		if t.Name() == "Tags" {
			return
		}
		for i := 0; i < v.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() || f.Name == "Version" {
				continue
			}
			g.fill(v.Field(i), f.Name, depth)
		}
	case reflect.Pointer:
		if depth > 4 {
			return
		}
		p := reflect.New(v.Type().Elem())
		g.fill(p.Elem(), name, depth+1)
		v.Set(p)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if name == "Records" || name == "RecordBatches" {
				v.SetBytes(g.batch(0, 3, 64))
			} else {
				v.SetBytes(g.bytes(12))
			}
			return
		}
		n := 3
		if depth >= 3 {
			n = 1
		}
		if depth > 5 {
			return
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n; i++ {
			g.fill(s.Index(i), name, depth+1)
		}
		v.Set(s)
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			v.Index(i).SetUint(uint64(byte(g.rng.Uint32())))
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("%s-%d", name, g.rng.IntN(1000)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(g.rng.IntN(100)))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(g.rng.IntN(100)))
	case reflect.Float64:
		v.SetFloat(float64(g.rng.IntN(1000)) / 8)
	}
}

// Exchange is a request and the response to it (same API, version and
// correlation id).
type Exchange struct {
	Request, Response Frame
}

// Exchanges returns request/response pairs covering the workloads: the
// Produce and OffsetCommit requests with filled responses, the Fetch and
// Metadata responses with filled requests, and every mixed pair. Capture
// and proxy benchmarks replay them.
func Exchanges(known Versions) []Exchange {
	return exchanges(&gen{rng: rand.New(rand.NewPCG(3, 4))}, known)
}

// CompressedExchanges is [Exchanges] with every batch's records compressed
// by compress with codec (the RecordBatch attribute: 1 gzip, 2 snappy,
// 3 lz4, 4 zstd), and their values text rather than random bytes, so
// that they compress as records in the field do.
func CompressedExchanges(known Versions, codec int, compress func(codec int, data []byte) []byte) []Exchange {
	return exchanges(&gen{rng: rand.New(rand.NewPCG(3, 4)), codec: codec, compress: compress}, known)
}

func exchanges(g *gen, known Versions) []Exchange {
	var out []Exchange
	pairReq := func(fs []Frame) {
		for _, f := range fs {
			resp := kmsg.ResponseForKey(f.Key)
			resp.SetVersion(f.Version)
			g.fill(reflect.ValueOf(resp).Elem(), "", 0)
			resp.SetVersion(f.Version)
			r := g.response(resp)
			out = append(out, Exchange{Request: f, Response: withCorrelation(r, f.CorrelationID)})
		}
	}
	pairResp := func(fs []Frame) {
		for _, f := range fs {
			req := kmsg.RequestForKey(f.Key)
			req.SetVersion(f.Version)
			g.fill(reflect.ValueOf(req).Elem(), "", 0)
			req.SetVersion(f.Version)
			r := g.request(req)
			out = append(out, Exchange{Request: r, Response: withCorrelation(f, r.CorrelationID)})
		}
	}
	pairReq(g.produce(known))
	pairResp(g.fetch(known))
	pairResp(g.metadata(known))
	pairReq(g.offsetCommit(known))
	m := g.mixed(known)
	for i := 0; i+1 < len(m); i += 2 {
		out = append(out, Exchange{Request: m[i], Response: withCorrelation(m[i+1], m[i].CorrelationID)})
	}
	return out
}

// withCorrelation returns f with its correlation id (header and field) set
// to corr, in a copy of its bytes.
func withCorrelation(f Frame, corr int32) Frame {
	f.Bytes = append([]byte(nil), f.Bytes...)
	f.CorrelationID = corr
	at := 4
	if f.Request {
		at = 8
	}
	binary.BigEndian.PutUint32(f.Bytes[at:], uint32(corr))
	return f
}
