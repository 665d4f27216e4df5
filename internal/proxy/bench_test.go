package proxy

import (
	"github.com/manifester/manifester/internal/testframes"

	"encoding/binary"
	"hash/crc32"
	"io"
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// batch1K is a record batch of n records of 1 KiB (encoded by kmsg, its
// length and CRC computed here).
func batch1K(n int) []byte {
	var recs []byte
	for i := range n {
		rec := kmsg.Record{Key: []byte("k"), Value: make([]byte, 1024), OffsetDelta: int32(i)}
		rec.Length = int32(len(rec.AppendTo(nil)) - 1)
		recs = rec.AppendTo(recs)
	}
	batch := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: int32(n - 1), ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: int32(n), Records: recs}
	b := batch.AppendTo(nil)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// produce1K is a Produce v11 request carrying one record of 1 KiB (a
// batch encoded by kmsg, its CRC computed here) and its response, which
// the proxy holds and inspects for broker addresses (NodeEndpoints).
func produce1K(corr int32) ([]byte, []byte) {
	b := batch1K(1)
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 11, -1, 1000
	topic := kmsg.NewProduceRequestTopic()
	topic.Topic = "t"
	part := kmsg.NewProduceRequestTopicPartition()
	part.Records = b
	topic.Partitions = append(topic.Partitions, part)
	req.Topics = append(req.Topics, topic)
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 11
	rt := kmsg.NewProduceResponseTopic()
	rt.Topic = "t"
	rt.Partitions = append(rt.Partitions, kmsg.NewProduceResponseTopicPartition())
	resp.Topics = append(resp.Topics, rt)
	return reqFrame(req, corr), testframes.Response(resp, corr)
}

// echoBroker answers every request with resp (its correlation id set).
func echoBroker(b *testing.B, resp []byte) string {
	return serveConns(b, func(c net.Conn) {
		out := append([]byte(nil), resp...)
		var size [4]byte
		buf := make([]byte, 0, 4096) // reused: the benchmark counts allocations
		for {
			if _, err := io.ReadFull(c, size[:]); err != nil {
				return
			}
			buf = append(buf[:0], make([]byte, binary.BigEndian.Uint32(size[:]))...)
			if _, err := io.ReadFull(c, buf); err != nil {
				return
			}
			copy(out[4:8], buf[4:8]) // the correlation id
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	})
}

// BenchmarkRoundTrip is one produce request and its response, one at a
// time, directly to a broker and through the proxy, with the JSON log
// written (to nowhere) or only summaries: the proxy's cost per round trip
// is the difference. Allocations count the whole process, the decoding
// goroutine's included.
func BenchmarkRoundTrip(b *testing.B) {
	req, resp := produce1K(1)
	up := echoBroker(b, resp)
	run := func(b *testing.B, addr string) {
		b.ReportAllocs()
		roundTrips(b, addr, req, len(resp))
	}
	b.Run("direct", func(b *testing.B) { run(b, up) })
	for _, mode := range []struct {
		name    string
		summary bool
		sink    func(*Event)
	}{
		{"summary", true, func(*Event) {}},
		{"jsonlog", false, func(e *Event) { AppendJSON(nil, e) }},
	} {
		b.Run(mode.name, func(b *testing.B) {
			p, err := New(Config{Upstream: up, Codec: testCodec(b), Summary: mode.summary, Sink: mode.sink, ListenerIdle: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			run(b, p.Addr())
		})
	}
}

// BenchmarkForward is the forwarding path alone: a produce request and
// its response framed, paired, copied for decoding and forwarded (to a
// sink), the response inspected for broker addresses; the decode queue is
// drained without decoding, so what is measured is the work and the
// allocations of the forwarding goroutines per round trip.
func BenchmarkForward(b *testing.B) {
	req, resp := produce1K(1)
	cdc := testCodec(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	cfg := Config{Codec: cdc, MaxFrame: DefaultMaxFrame, MaxBuffer: DefaultMaxBuffer, QueueBytes: DefaultQueueBytes, QueueFrames: DefaultQueueFrames}
	rw := *cdc
	rw.Decompress, rw.DecompressLimit = nil, nil
	p := &Proxy{cfg: cfg, reg: cdc.Reg, rewrite: holdTable(cdc.Reg), rewriter: &rw, q: newDecodeQueue(cfg.QueueBytes, cfg.QueueFrames),
		listeners: map[string]*listener{}, byNode: map[int32]*listener{}, conns: map[*conn]bool{}}
	p.boot = &listener{ln: ln, node: -1}
	c := newConn(p, p.boot, &sinkConn{}, 1, "127.0.0.1:1")
	sc := c.client.(*sinkConn)
	fr, rs := &framer{}, &respState{}
	drain := func() {
		for {
			p.q.mu.Lock()
			n := p.q.ready.len()
			p.q.mu.Unlock()
			if n == 0 {
				return
			}
			it, cq, _, _, _ := p.q.next()
			if it != nil && it.kind != kindEvent {
				it.body.drop() // the decoder gives the chunks back
				p.q.release(cq, it.reserved)
			}
		}
	}
	b.SetBytes(int64(len(req) + len(resp)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		binary.BigEndian.PutUint32(req[8:], uint32(i))
		binary.BigEndian.PutUint32(resp[4:], uint32(i))
		c.frameRequests(fr, req)
		if err := c.frameResponses(rs, resp); err != nil {
			b.Fatal(err)
		}
		sc.buf.Reset()
		drain()
	}
	b.StopTimer()
	if c.pending.Len() != 0 || fr.mid() || rs.size != 0 {
		b.Fatalf("%d requests unpaired, framing mid-frame", c.pending.Len())
	}
}

// BenchmarkFetchRoundTrip is one Fetch v16 request and its response of
// about 1 MB (64 batches of 16 records of 1 KiB, no NodeEndpoints), one
// at a time, through the proxy: held whole until its last byte before it
// is forwarded ("whole", as every address-advertising response was), or
// forwarded as it arrives but for its last tailHold bytes ("tail").
func BenchmarkFetchRoundTrip(b *testing.B) {
	r := kmsg.NewPtrFetchRequest()
	r.Version = 16
	fr := kmsg.NewPtrFetchResponse()
	fr.Version = 16
	topic := kmsg.NewFetchResponseTopic()
	p := kmsg.NewFetchResponseTopicPartition()
	for range 64 {
		p.RecordBatches = append(p.RecordBatches, batch1K(16)...)
	}
	topic.Partitions = append(topic.Partitions, p)
	fr.Topics = []kmsg.FetchResponseTopic{topic}
	req, resp := reqFrame(r, 1), testframes.Response(fr, 1)
	up := echoBroker(b, resp)
	for _, tail := range []bool{false, true} {
		name := map[bool]string{false: "whole", true: "tail"}[tail]
		b.Run(name, func(b *testing.B) {
			p, err := New(Config{Upstream: up, Codec: testCodec(b), Summary: true, Sink: func(*Event) {}, ListenerIdle: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			p.tail[holdKey{1, 16}].Store(tail)
			roundTrips(b, p.Addr(), req, len(resp))
		})
	}
}

// roundTrips sends req to addr b.N times, each with the next correlation
// id, and reads each response (of size bytes), checking it answers.
func roundTrips(b *testing.B, addr string, req []byte, size int) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	got := make([]byte, size)
	b.SetBytes(int64(len(req) + size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		binary.BigEndian.PutUint32(req[8:], uint32(i))
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, got); err != nil {
			b.Fatal(err)
		}
		if int32(binary.BigEndian.Uint32(got[4:])) != int32(i) {
			b.Fatalf("response %d answers %d", i, binary.BigEndian.Uint32(got[4:]))
		}
	}
}
