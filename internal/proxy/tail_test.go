package proxy

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/testdeadline"
	"github.com/manifester/manifester/internal/testframes"
)

// bigFetch is a Fetch v16 exchange whose response is about 185 KB (5,000
// partitions), with the NodeEndpoints given (none when host is empty).
func bigFetch(corr int32, host string, port int32) (req, resp []byte) {
	var parts []kmsg.FetchResponseTopicPartition
	for i := range 5000 {
		p := kmsg.NewFetchResponseTopicPartition()
		p.Partition, p.HighWatermark, p.LastStableOffset, p.LogStartOffset = int32(i), int64(i)*1000, int64(i)*1000, 0
		parts = append(parts, p)
	}
	return fetch16(corr, parts, host, port)
}

// fetch16 is a Fetch v16 exchange whose response has one topic of the
// partitions given, with the NodeEndpoints given (none when host is
// empty).
func fetch16(corr int32, parts []kmsg.FetchResponseTopicPartition, host string, port int32) (req, resp []byte) {
	r := kmsg.NewPtrFetchRequest()
	r.Version = 16
	fr := kmsg.NewPtrFetchResponse()
	fr.Version = 16
	topic := kmsg.NewFetchResponseTopic()
	topic.TopicID = [16]byte{1, 2, 3}
	topic.Partitions = parts
	fr.Topics = []kmsg.FetchResponseTopic{topic}
	if host != "" {
		fr.Brokers = []kmsg.FetchResponseBroker{{NodeID: 1, Host: host, Port: port}}
	}
	return reqFrame(r, corr), testframes.Response(fr, corr)
}

// oneExchange starts a proxy before a broker that answers req with
// resp, sends req through it and reads the response the client gets.
func oneExchange(t *testing.T, req, resp []byte) (*Proxy, *events, net.Conn, []byte) {
	t.Helper()
	up := fakeBroker(t, func(c net.Conn) {
		io.ReadFull(c, make([]byte, len(req)))
		c.Write(resp)
	})
	p, ev := start(t, up, nil)
	c := dial(t, p.Addr())
	c.Write(req)
	got, err := readResponse(t, c)
	if err != nil {
		t.Fatal(err)
	}
	return p, ev, c, got
}

// rewrittenFetch reads got, a Fetch v16 response, with kmsg and checks
// that its NodeEndpoints name node 1 at the proxy listener standing for
// brokerHost:9092.
func rewrittenFetch(t *testing.T, p *Proxy, got []byte, brokerHost string) *kmsg.FetchResponse {
	t.Helper()
	fr := kmsg.NewPtrFetchResponse()
	fr.Version = 16
	if err := fr.ReadFrom(got[4+5:]); err != nil { // size, correlation id, header tags
		t.Fatalf("kmsg cannot read the rewritten response: %v", err)
	}
	want := p.Listeners()[net.JoinHostPort(brokerHost, "9092")]
	if len(fr.Brokers) != 1 || want == "" || net.JoinHostPort(fr.Brokers[0].Host, itoa(fr.Brokers[0].Port)) != want {
		t.Errorf("NodeEndpoints %+v, want node 1 at the proxy's listener %q", fr.Brokers, want)
	}
	return fr
}

func readResponse(t *testing.T, c net.Conn) ([]byte, error) {
	t.Helper()
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, err
	}
	b := make([]byte, 4+binary.BigEndian.Uint32(size[:]))
	copy(b, size[:])
	n, err := io.ReadFull(c, b[4:])
	return b[:4+n], err
}

// TestTailHeldFetchStreams: a Fetch v16 response, which can advertise
// broker addresses only in its last bytes (NodeEndpoints, a top-level
// tagged field), reaches the client as it arrives but for its tail: the
// broker here sends all but the last 32 KB and waits until the client has
// read what comes before the tail before it sends the rest, which a proxy
// holding the whole response would never let happen. It arrives
// unchanged.
func TestTailHeldFetchStreams(t *testing.T) {
	req, resp := bigFetch(7, "", 0)
	first := len(resp) - tailHold/2
	if len(resp) < 2*tailHold {
		t.Fatalf("the response is %d bytes, too small for the test", len(resp))
	}
	clientHas := make(chan struct{})
	up := fakeBroker(t, func(c net.Conn) {
		io.ReadFull(c, make([]byte, len(req)))
		c.Write(resp[:first])
		select {
		case <-clientHas:
		case <-time.After(time.Until(testdeadline.Deadline(t))):
		}
		c.Write(resp[first:])
	})
	p, ev := start(t, up, nil)
	c := dial(t, p.Addr())
	c.Write(req)
	got := make([]byte, len(resp))
	if _, err := io.ReadFull(c, got[:len(resp)-tailHold]); err != nil {
		t.Fatalf("the response's first %d bytes: %v (held until the broker sent the rest?)", len(resp)-tailHold, err)
	}
	close(clientHas)
	if _, err := io.ReadFull(c, got[len(resp)-tailHold:]); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, resp) {
		t.Error("the response was changed")
	}
	c.Close()
	p.Close()
	if f := ev.of(EventFrame); len(f) != 2 || f[1].Rewritten || f[1].Frame == nil || f[1].Frame.Error != "" {
		t.Errorf("frame events: %d, want the request and the response, decoded and not rewritten", len(f))
	}
}

// TestTailRewritePadded: a tail-held Fetch response whose NodeEndpoints
// name a broker by a name longer than the proxy's address is rewritten
// in place: the same length (the bytes already forwarded stand), the
// shortfall made up by an unknown top-level tagged field of zeros, which
// kmsg reads and keeps; the proxy's listener is what the client is told.
func TestTailRewritePadded(t *testing.T) {
	const brokerHost = "broker-one.kafka.example.internal"
	req, resp := bigFetch(8, brokerHost, 9092)
	p, ev, c, got := oneExchange(t, req, resp)
	if len(got) != len(resp) {
		t.Fatalf("%d bytes forwarded, want the broker's %d", len(got), len(resp))
	}
	if !bytes.Equal(got[:len(got)-tailHold], resp[:len(resp)-tailHold]) {
		t.Error("bytes before the tail changed")
	}
	fr := rewrittenFetch(t, p, got, brokerHost)
	if len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 5000 || fr.Topics[0].Partitions[4999].HighWatermark != 4999000 {
		t.Error("the partitions did not come through")
	}
	pad := fr.UnknownTags
	if pad.Len() != 1 {
		t.Errorf("unknown tags %d, want the one padding field", pad.Len())
	}
	pad.Each(func(tag uint32, data []byte) {
		if tag != 127 && tag != 16383 && tag != 2097151 || bytes.ContainsFunc(data, func(r rune) bool { return r != 0 }) {
			t.Errorf("padding tag %d of %d bytes, want one of padTags, zeros", tag, len(data))
		}
	})
	c.Close()
	p.Close()
	rewrites := ev.of(EventRewrite)
	if len(rewrites) != 1 || !strings.Contains(rewrites[0].Detail, brokerHost) {
		t.Errorf("rewrite events %v, want one naming %s", rewrites, brokerHost)
	}
}

// TestTailRewriteMisfit: a broker named by an address shorter than the
// proxy's cannot be rewritten within the bytes already forwarded: the
// client connection is closed before the broker's address can reach it,
// a fault says why, and from then on those responses are held whole:
// the client, reconnected, gets the response rewritten (longer).
func TestTailRewriteMisfit(t *testing.T) {
	req, resp := bigFetch(9, "b", 9092)
	up := serveConns(t, func(c net.Conn) {
		if _, err := io.ReadFull(c, make([]byte, len(req))); err != nil {
			return
		}
		c.Write(resp)
		io.Copy(io.Discard, c)
	})
	p, ev := start(t, up, nil)
	c := dial(t, p.Addr())
	c.Write(req)
	if got, err := readResponse(t, c); err == nil {
		t.Fatalf("the client got a whole response (%d bytes) that cannot hold the proxy's address", len(got))
	} else if len(got) > len(resp)-tailHold {
		t.Errorf("the client got %d bytes, past the %d before the tail", len(got), len(resp)-tailHold)
	}
	c.Close()

	c2 := dial(t, p.Addr())
	c2.Write(req)
	got, err := readResponse(t, c2)
	if err != nil {
		t.Fatalf("after the misfit: %v", err)
	}
	fr := kmsg.NewPtrFetchResponse()
	fr.Version = 16
	if err := fr.ReadFrom(got[4+5:]); err != nil {
		t.Fatal(err)
	}
	want := p.Listeners()[net.JoinHostPort("b", "9092")]
	if len(fr.Brokers) != 1 || net.JoinHostPort(fr.Brokers[0].Host, itoa(fr.Brokers[0].Port)) != want || len(got) <= len(resp) {
		t.Errorf("held whole: NodeEndpoints %+v in %d bytes, want the listener %q in more than %d", fr.Brokers, len(got), want, len(resp))
	}
	c2.Close()
	p.Close()
	faultsContaining(t, ev, "held whole from now on")
}

// TestTailOnlyAPIs: the responses whose every broker address is under a
// top-level tagged field, and only those, are tail-held.
func TestTailOnlyAPIs(t *testing.T) {
	c := testCodec(t)
	tail := tailTable(c.Reg, holdTable(c.Reg))
	for _, tc := range []struct {
		key, version int16
		want         bool
	}{
		{0, 9, false}, {0, 10, true}, // Produce NodeEndpoints: v10+, tagged
		{1, 15, false}, {1, 16, true}, // Fetch NodeEndpoints: v16+, tagged
		{3, 12, false}, // Metadata brokers: in the body
		{10, 3, false}, // FindCoordinator: the body is the address
		{10, 4, false}, // FindCoordinator: in the body
		{60, 0, false}, // DescribeCluster: in the body
		{12, 4, false}, // Heartbeat: nothing held
	} {
		if got := tail[holdKey{tc.key, tc.version}] != nil; got != tc.want {
			t.Errorf("API %d v%d: tail-held %v, want %v", tc.key, tc.version, got, tc.want)
		}
	}
}

// TestTailOffAfterLongerListener: a Metadata response names a broker by
// an address shorter than the proxy's listener for it. From then on a
// Fetch response naming that broker in its NodeEndpoints is held whole
// and rewritten (longer than the broker's), on the same connection: no
// connection is closed and no fault is logged, where without what the
// Metadata rewrite taught the proxy the tail would not have fitted
// (TestTailRewriteMisfit). An event says why tail holding stopped.
func TestTailOffAfterLongerListener(t *testing.T) {
	mreq, mresp := metadata(1, "b", 9092)
	req, resp := bigFetch(2, "b", 9092)
	up := fakeBroker(t, func(c net.Conn) {
		io.ReadFull(c, make([]byte, len(mreq)))
		c.Write(mresp)
		io.ReadFull(c, make([]byte, len(req)))
		c.Write(resp)
		io.Copy(io.Discard, c)
	})
	p, ev := start(t, up, nil)
	c := dial(t, p.Addr())
	c.Write(mreq)
	if _, err := readResponse(t, c); err != nil {
		t.Fatalf("metadata: %v", err)
	}
	c.Write(req)
	got, err := readResponse(t, c)
	if err != nil {
		t.Fatalf("the fetch after the metadata: %v", err)
	}
	fr := kmsg.NewPtrFetchResponse()
	fr.Version = 16
	if err := fr.ReadFrom(got[4+5:]); err != nil {
		t.Fatal(err)
	}
	want := p.Listeners()[net.JoinHostPort("b", "9092")]
	if len(fr.Brokers) != 1 || want == "" || net.JoinHostPort(fr.Brokers[0].Host, itoa(fr.Brokers[0].Port)) != want || len(got) <= len(resp) {
		t.Errorf("NodeEndpoints %+v in %d bytes, want the listener %q in more than the broker's %d", fr.Brokers, len(got), want, len(resp))
	}
	c.Close()
	p.Close()
	if f := ev.of(EventFault); len(f) != 0 {
		t.Errorf("faults %q, want none", f[0].Detail)
	}
	var off int
	for _, e := range ev.of(EventRewrite) {
		if strings.Contains(e.Detail, "held whole from now on") && strings.Contains(e.Detail, "node 1 b:9092") {
			off++
		}
	}
	if off != 1 {
		t.Errorf("%d events saying tail holding stopped, want 1", off)
	}
	for k, tl := range p.tail {
		if tl.Load() {
			t.Errorf("API %d v%d still tail-held", k.key, k.version)
		}
	}
}

// TestRewriteCorruptBatch: a Fetch response whose record batch is
// corrupt (its CRC wrong) still has its broker addresses rewritten: the
// forwarder reads the fields around the records only (it neither checks
// nor inflates batches), so a bad batch cannot let the broker's address
// through. The decoding side still reports the bad CRC.
func TestRewriteCorruptBatch(t *testing.T) {
	const brokerHost = "broker-one.kafka.example.internal"
	batch := make([]byte, 61)
	binary.BigEndian.PutUint32(batch[8:], 49) // batch length: 61 - 12
	batch[16] = 2                             // magic
	binary.BigEndian.PutUint32(batch[17:], 0xdeadbeef)
	part := kmsg.NewFetchResponseTopicPartition()
	part.RecordBatches = batch
	req, resp := fetch16(11, []kmsg.FetchResponseTopicPartition{part}, brokerHost, 9092)
	p, ev, c, got := oneExchange(t, req, resp)
	if bytes.Contains(got, []byte(brokerHost)) {
		t.Error("the broker's own address reached the client")
	}
	back := rewrittenFetch(t, p, got, brokerHost)
	if len(back.Topics) != 1 || len(back.Topics[0].Partitions) != 1 || !bytes.Equal(back.Topics[0].Partitions[0].RecordBatches, batch) {
		t.Error("the record batch did not come through unchanged")
	}
	c.Close()
	p.Close()
	for _, f := range ev.of(EventFault) {
		t.Errorf("fault: %s", f.Detail)
	}
	var sawCRC bool
	for _, f := range ev.of(EventFrame) {
		if f.Frame != nil && strings.Contains(f.Frame.Error, "CRC") {
			sawCRC = true
		}
	}
	if !sawCRC {
		t.Error("no frame event reports the batch's bad CRC")
	}
}
