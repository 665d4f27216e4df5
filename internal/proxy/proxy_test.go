package proxy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testdeadline"
	"github.com/manifester/manifester/internal/testframes"
	"github.com/manifester/manifester/internal/testshared"
)

var specDir = testshared.SpecPath("4.3")

var (
	regOnce sync.Once
	testReg *schema.Registry
	regErr  error
)

func testCodec(t testing.TB) *codec.Codec {
	t.Helper()
	testshared.Dir(t)
	regOnce.Do(func() { testReg, regErr = schema.Load(specDir) })
	if regErr != nil {
		t.Fatal(regErr)
	}
	return codec.New(testReg)
}

// reqFrame and respFrame encode with kmsg, an independent encoder.
func reqFrame(r kmsg.Request, corr int32) []byte {
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("proxy-test")).AppendRequest(nil, r, corr)
}

func heartbeat(corr int32) ([]byte, []byte) {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version, req.Group, req.MemberID = 4, "group", "member"
	resp := kmsg.NewPtrHeartbeatResponse()
	resp.Version = 4
	return reqFrame(req, corr), testframes.Response(resp, corr)
}

func metadata(corr int32, host string, port int32) ([]byte, []byte) {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 12
	resp.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 1, Host: host, Port: port}}
	return reqFrame(req, corr), testframes.Response(resp, corr)
}

// fakeBroker accepts one connection and runs fn on it.
func fakeBroker(t *testing.T, fn func(c net.Conn)) string {
	t.Helper()
	ln := loopbackListener(t)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		fn(c)
	}()
	return ln.Addr().String()
}

type events struct {
	mu  sync.Mutex
	all []*Event
}

func (e *events) sink(ev *Event) { e.mu.Lock(); e.all = append(e.all, ev); e.mu.Unlock() }

func (e *events) of(k EventKind) []*Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*Event
	for _, ev := range e.all {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

func start(t *testing.T, upstream string, mod func(*Config)) (*Proxy, *events) {
	t.Helper()
	ev := &events{}
	cfg := Config{Listen: "127.0.0.1:0", Upstream: upstream, Codec: testCodec(t), Sink: ev.sink, Roundtrip: true, DialTimeout: 2 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	if throughStream {
		decodeThroughStream(t, &cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, ev
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

func faultsContaining(t *testing.T, ev *events, want string) {
	t.Helper()
	var details []string
	for _, e := range ev.of(EventFault) {
		details = append(details, e.Detail)
		if strings.Contains(e.Detail, want) {
			return
		}
	}
	t.Errorf("no fault mentioning %q; faults: %q", want, details)
}

func TestUpstreamRefuses(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	p, ev := start(t, dead, nil)
	c := dial(t, p.Addr())
	req, _ := heartbeat(1)
	c.Write(req)
	if n, err := io.ReadAll(c); err != nil || len(n) != 0 {
		t.Errorf("client read %d bytes, err %v; want a clean close", len(n), err)
	}
	p.Close()
	faultsContaining(t, ev, "refused")
	if len(ev.of(EventClose)) != 1 {
		t.Errorf("want one close event, got %d", len(ev.of(EventClose)))
	}
}

// TestUpstreamDropsMidFrame: the broker sends part of a response and
// closes. The client gets exactly those bytes, then EOF; the fault is
// logged. Both for a response that streams through (Heartbeat) and one
// held for rewriting (Metadata).
func TestUpstreamDropsMidFrame(t *testing.T) {
	for _, tc := range []struct {
		name      string
		req, resp []byte
	}{
		{"streamed", func() []byte { r, _ := heartbeat(7); return r }(), func() []byte { _, r := heartbeat(7); return r }()},
		{"held", func() []byte { r, _ := metadata(7, "b1", 9092); return r }(), func() []byte { _, r := metadata(7, "b1", 9092); return r }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			partial := tc.resp[:len(tc.resp)-3]
			up := fakeBroker(t, func(c net.Conn) {
				buf := make([]byte, len(tc.req))
				if _, err := io.ReadFull(c, buf); err != nil {
					return
				}
				c.Write(partial)
			})
			p, ev := start(t, up, nil)
			c := dial(t, p.Addr())
			c.Write(tc.req)
			got, err := io.ReadAll(c)
			if err != nil || !bytes.Equal(got, partial) {
				t.Errorf("client got %d bytes (err %v), want the %d the broker sent", len(got), err, len(partial))
			}
			p.Close()
			faultsContaining(t, ev, "broker closed in the middle of a")
		})
	}
}

// TestClientDropsMidFrame: the client sends part of a request and closes;
// the broker gets exactly those bytes, then EOF.
func TestClientDropsMidFrame(t *testing.T) {
	req, _ := heartbeat(3)
	partial := req[:len(req)-5]
	got := make(chan []byte, 1)
	up := fakeBroker(t, func(c net.Conn) {
		b, _ := io.ReadAll(c)
		got <- b
	})
	p, ev := start(t, up, nil)
	c := dial(t, p.Addr())
	c.Write(partial)
	c.Close()
	select {
	case b := <-got:
		if !bytes.Equal(b, partial) {
			t.Errorf("broker got %d bytes, want the %d the client sent", len(b), len(partial))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("broker never saw the client's close")
	}
	p.Close()
	faultsContaining(t, ev, "client closed in the middle of a request frame")
}

// TestCloseMidFrame: the proxy stops while a request frame is half
// forwarded. The frame cut short is the stop's doing, not the client's:
// no fault, and the connection's close event says what was cut.
func TestCloseMidFrame(t *testing.T) {
	req, _ := heartbeat(3)
	partial := req[:len(req)-5]
	got := make(chan []byte, 1)
	up := fakeBroker(t, func(c net.Conn) {
		b := make([]byte, len(partial))
		io.ReadFull(c, b)
		got <- b
		io.Copy(io.Discard, c)
	})
	p, ev := start(t, up, nil)
	c := dial(t, p.Addr())
	c.Write(partial)
	select {
	case b := <-got:
		if !bytes.Equal(b, partial) {
			t.Errorf("broker got %x, want the %d bytes the client sent", b, len(partial))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the broker never got the client's bytes")
	}
	p.Close()
	for _, f := range ev.of(EventFault) {
		t.Errorf("fault when the proxy stopped: %s", f.Detail)
	}
	closes := ev.of(EventClose)
	want := fmt.Sprintf("the proxy stopped with a request frame cut short (%d of %d bytes forwarded)", len(partial), len(req))
	if len(closes) != 1 || !strings.Contains(closes[0].Detail, want) {
		var details []string
		for _, e := range closes {
			details = append(details, e.Detail)
		}
		t.Errorf("close events %q, want one saying %q", details, want)
	}
}

// TestClientGoesAway: a client that sends a Fetch and closes before the
// response comes (a consumer stopping mid-poll) is an ordinary end, not
// a fault: the close event says which response it did not get.
func TestClientGoesAway(t *testing.T) {
	req, resp := bigFetch(5, "", 0)
	up := fakeBroker(t, func(c net.Conn) {
		io.ReadFull(c, make([]byte, len(req)))
		io.Copy(io.Discard, c) // until the proxy passes on the client's close
		for range 20 {
			if _, err := c.Write(resp); err != nil {
				return
			}
		}
	})
	p, ev := start(t, up, nil)
	c := dial(t, p.Addr())
	c.Write(req)
	c.Close()
	deadline := testdeadline.Deadline(t)
	for len(ev.of(EventClose)) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	p.Close()
	for _, f := range ev.of(EventFault) {
		t.Errorf("fault: %s", f.Detail)
	}
	closes := ev.of(EventClose)
	if len(closes) != 1 || !strings.Contains(closes[0].Detail, "the client went away before") {
		var details []string
		for _, e := range closes {
			details = append(details, e.Detail)
		}
		t.Errorf("close events %q, want one saying the client went away", details)
	}
}

// TestUndecodableFrames: a request and an address-advertising response
// that do not decode pass through untouched, and are logged with errors.
func TestUndecodableFrames(t *testing.T) {
	req, resp := metadata(9, "b1", 9092)
	// Corrupt the body's last byte (tagged-field count of a flexible
	// message): 0x05 claims five tagged fields that are not there.
	badReq := bytes.Clone(req)
	badReq[len(badReq)-1] = 0x05
	badResp := bytes.Clone(resp)
	badResp[len(badResp)-1] = 0x05
	gotReq := make(chan []byte, 1)
	up := fakeBroker(t, func(c net.Conn) {
		b := make([]byte, len(badReq))
		io.ReadFull(c, b)
		gotReq <- b
		c.Write(badResp)
	})
	p, ev := start(t, up, nil)
	c := dial(t, p.Addr())
	c.Write(badReq)
	b := make([]byte, len(badResp))
	if _, err := io.ReadFull(c, b); err != nil || !bytes.Equal(b, badResp) {
		t.Errorf("client got %x (err %v), want the broker's bytes untouched", b, err)
	}
	if r := <-gotReq; !bytes.Equal(r, badReq) {
		t.Errorf("broker got %x, want the client's bytes untouched", r)
	}
	c.Close()
	p.Close()
	faultsContaining(t, ev, "did not decode, forwarded untouched")
	frames := ev.of(EventFrame)
	if len(frames) != 2 {
		t.Fatalf("%d frame events, want 2", len(frames))
	}
	for _, f := range frames {
		if f.Frame.Error == "" {
			t.Errorf("%s: no error reported for a corrupt frame", f.Frame.Summary())
		}
	}
}

// TestRewrite: Metadata brokers are replaced by proxy listeners, one per
// broker, and the response still reads (with kmsg) with every other field
// unchanged.
func TestRewrite(t *testing.T) {
	other, _ := net.Listen("tcp", "127.0.0.1:0")
	defer other.Close()
	oh, op, _ := net.SplitHostPort(other.Addr().String())
	pn, _ := strconv.Atoi(op)
	port := int32(pn)
	req, resp := metadata(5, oh, port)
	up := fakeBroker(t, func(c net.Conn) {
		b := make([]byte, len(req))
		io.ReadFull(c, b)
		c.Write(resp)
	})
	p, ev := start(t, up, nil)
	c := dial(t, p.Addr())
	c.Write(req)
	var size [4]byte
	io.ReadFull(c, size[:])
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	got := kmsg.NewPtrMetadataResponse()
	got.Version = 12
	if err := got.ReadFrom(body[5:]); err != nil {
		t.Fatalf("kmsg cannot read the rewritten response: %v", err)
	}
	listeners := p.Listeners()
	want := listeners[other.Addr().String()]
	if want == "" {
		t.Fatalf("no listener opened for broker %s: %v", other.Addr(), listeners)
	}
	if b := got.Brokers[0]; net.JoinHostPort(b.Host, itoa(b.Port)) != want || b.NodeID != 1 {
		t.Errorf("broker advertised as %d %s:%d, want node 1 at %s", b.NodeID, b.Host, b.Port, want)
	}
	c.Close()
	p.Close()
	var rewritten bool
	for _, e := range ev.of(EventFrame) {
		if e.Rewritten {
			rewritten = true
			if !bytes.Equal(e.Original, resp) {
				t.Error("the event's Original is not the broker's response")
			}
		}
	}
	if !rewritten {
		t.Error("no frame event says it was rewritten")
	}

	// With NoRewrite the response passes unchanged.
	up2 := fakeBroker(t, func(c net.Conn) {
		b := make([]byte, len(req))
		io.ReadFull(c, b)
		c.Write(resp)
	})
	p2, _ := start(t, up2, func(c *Config) { c.NoRewrite = true })
	c2 := dial(t, p2.Addr())
	c2.Write(req)
	b := make([]byte, len(resp))
	if _, err := io.ReadFull(c2, b); err != nil || !bytes.Equal(b, resp) {
		t.Errorf("--no-rewrite changed the response")
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

// TestBytesInOrderWhenDecodingFallsBehind pipelines many requests of
// random sizes through a proxy whose decode queue holds one frame: every
// byte arrives in order both ways, and the skipped decodes are reported.
func TestBytesInOrderWhenDecodingFallsBehind(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var reqs, resps bytes.Buffer
	for i := int32(0); i < 300; i++ {
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Version, hb.Group, hb.MemberID = 4, strings.Repeat("g", rng.Intn(3000)), "m"
		reqs.Write(reqFrame(hb, i))
		_, r := heartbeat(i)
		resps.Write(r)
	}
	gotReqs := make(chan []byte, 1)
	up := fakeBroker(t, func(c net.Conn) {
		done := make(chan struct{})
		go func() {
			// Answer in small writes while the requests still arrive.
			wr := rand.New(rand.NewSource(2))
			rb := resps.Bytes()
			for len(rb) > 0 {
				n := min(len(rb), 1+wr.Intn(700))
				if _, err := c.Write(rb[:n]); err != nil {
					break
				}
				rb = rb[n:]
			}
			close(done)
		}()
		b, _ := io.ReadAll(c)
		gotReqs <- b
		<-done
	})
	p, ev := start(t, up, func(c *Config) { c.QueueFrames = 1; c.Roundtrip = false })
	c := dial(t, p.Addr())
	go func() {
		cr := rand.New(rand.NewSource(3))
		rb := reqs.Bytes()
		for len(rb) > 0 {
			n := min(len(rb), 1+cr.Intn(5000))
			c.Write(rb[:n])
			rb = rb[n:]
		}
		c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(got, resps.Bytes()) {
		t.Errorf("client got %d response bytes (err %v), want %d identical", len(got), err, resps.Len())
	}
	if r := <-gotReqs; !bytes.Equal(r, reqs.Bytes()) {
		t.Errorf("broker got %d request bytes, want %d identical", len(r), reqs.Len())
	}
	p.Close()
	decoded := len(ev.of(EventFrame))
	skipped := 0
	for _, e := range ev.of(EventSkipped) {
		skipped += e.Count
	}
	if decoded+skipped != 600 {
		t.Errorf("%d frames decoded + %d skipped, want 600", decoded, skipped)
	}
	if len(ev.of(EventFault)) != 0 {
		t.Errorf("faults: %v", ev.of(EventFault)[0].Detail)
	}
}

// TestSummaryMode: with Config.Summary frames are reported from the plain
// decode (no tree), with the same identity, and a frame that does not
// decode still gets the full report with its error and partial tree.
func TestSummaryMode(t *testing.T) {
	req, resp := heartbeat(11)
	bad := bytes.Clone(req)
	bad[len(bad)-1] = 5
	_, resp2 := heartbeat(12)
	up := fakeBroker(t, func(c net.Conn) {
		b := make([]byte, len(req)+len(bad))
		io.ReadFull(c, b)
		c.Write(resp)
		c.Write(resp2)
	})
	p, ev := start(t, up, func(c *Config) { c.Summary = true })
	c := dial(t, p.Addr())
	bad[11] = 12 // correlation id 12
	c.Write(req)
	c.Write(bad)
	b := make([]byte, len(resp)+len(resp2))
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatal(err)
	}
	c.Close()
	p.Close()
	frames := ev.of(EventFrame)
	if len(frames) != 4 {
		t.Fatalf("%d frames, want 4", len(frames))
	}
	for i, e := range frames {
		f := e.Frame
		if f.API != "Heartbeat" || f.Version != 4 {
			t.Errorf("frame %d: %s v%d", i, f.API, f.Version)
		}
		corrupt := e.Dir == "request" && f.CorrelationID == 12
		switch {
		case corrupt && (f.Error == "" || f.SpanTree() == nil):
			t.Errorf("corrupt request: error %q, tree %v", f.Error, f.SpanTree() != nil)
		case !corrupt && (f.Error != "" || f.SpanTree() != nil || f.Roundtrip == nil || !*f.Roundtrip):
			t.Errorf("frame %d: error %q, tree %v, roundtrip %v; want a clean summary without tree", i, f.Error, f.SpanTree() != nil, f.Roundtrip)
		}
	}
}

// TestNotKafka: bytes that are not Kafka frames (an HTTP request and
// answer) still pass unchanged both ways; framing stops and says so.
func TestNotKafka(t *testing.T) {
	req := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	resp := []byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
	gotReq := make(chan []byte, 1)
	up := fakeBroker(t, func(c net.Conn) {
		b := make([]byte, len(req))
		io.ReadFull(c, b)
		gotReq <- b
		c.Write(resp)
	})
	p, ev := start(t, up, nil)
	c := dial(t, p.Addr())
	c.Write(req)
	b := make([]byte, len(resp))
	if _, err := io.ReadFull(c, b); err != nil || !bytes.Equal(b, resp) {
		t.Errorf("client got %q (err %v)", b, err)
	}
	if r := <-gotReq; !bytes.Equal(r, req) {
		t.Errorf("broker got %q", r)
	}
	c.Close()
	p.Close()
	faultsContaining(t, ev, "request size prefix 1195725856 is out of range")
	faultsContaining(t, ev, "response size prefix")
}
