package proxy

import (
	"github.com/manifester/manifester/internal/testframes"

	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// heartbeatBroker answers every request frame on any number of
// connections with a Heartbeat response of the same correlation id. Each
// connection's end is reported on the returned channel (nil for a clean
// end of stream).
func heartbeatBroker(t *testing.T) (string, chan error) {
	t.Helper()
	ends := make(chan error, 100)
	addr := serveConns(t, func(c net.Conn) {
		for {
			body, err := readFrame(c)
			if err == nil && len(body) < 8 {
				err = io.ErrUnexpectedEOF
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil // a clean end of stream
				}
				ends <- err
				return
			}
			_, resp := heartbeat(int32(binary.BigEndian.Uint32(body[4:8])))
			if _, err := c.Write(resp); err != nil {
				ends <- err
				return
			}
		}
	})
	return addr, ends
}

// exchange sends a Heartbeat request and checks the response.
func exchange(c net.Conn, corr int32) error {
	req, resp := heartbeat(corr)
	if _, err := c.Write(req); err != nil {
		return err
	}
	got := make([]byte, len(resp))
	if _, err := io.ReadFull(c, got); err != nil {
		return err
	}
	if !bytes.Equal(got, resp) {
		return fmt.Errorf("response % x, want % x", got, resp)
	}
	return nil
}

// TestConnectionLimit: with MaxConns 2, a third client is closed cleanly
// (an end of stream, no bytes, no reset) and the refusal logged; once one
// of the two closes, a new client is served.
func TestConnectionLimit(t *testing.T) {
	up, _ := heartbeatBroker(t)
	p, ev := start(t, up, func(c *Config) { c.MaxConns = 2 })
	c1, c2 := dial(t, p.Addr()), dial(t, p.Addr())
	for i, c := range []net.Conn{c1, c2} {
		if err := exchange(c, int32(i+1)); err != nil {
			t.Fatalf("client %d: %v", i+1, err)
		}
	}
	c3 := dial(t, p.Addr())
	req, _ := heartbeat(3)
	c3.Write(req)
	if b, err := io.ReadAll(c3); err != nil || len(b) != 0 {
		t.Fatalf("third client read %d bytes, err %v; want a clean close", len(b), err)
	}

	c1.Close()
	// The slot frees once the proxy has seen c1 end; until then a new
	// client may still be refused, so try until one is served.
	served := false
	for i := 0; i < 200 && !served; i++ {
		c := dial(t, p.Addr())
		if err := exchange(c, 100); err == nil {
			served = true
		} else {
			c.Close()
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !served {
		t.Fatal("no client served after one of the two closed")
	}
	if err := exchange(c2, 4); err != nil {
		t.Errorf("second client after the refusals: %v", err)
	}
	p.Close() // delivers every event
	faultsContaining(t, ev, "connection limit 2 reached: refusing client "+c3.LocalAddr().String())
}

// TestIdleTimeout: a connection with no bytes either way is closed on
// both sides with an end of stream, and logged.
func TestIdleTimeout(t *testing.T) {
	up, ends := heartbeatBroker(t)
	p, ev := start(t, up, func(c *Config) { c.IdleTimeout = 200 * time.Millisecond })
	c := dial(t, p.Addr()) // its deadline (10 s) ends the test if the proxy never closes
	if err := exchange(c, 1); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(c); err != nil || len(b) != 0 {
		t.Fatalf("client read %d bytes, err %v; want an end of stream from the idle close", len(b), err)
	}
	select {
	case err := <-ends:
		if err != nil {
			t.Errorf("broker side ended with %v, want an end of stream", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the broker side was never closed")
	}
	p.Close()
	faultsContaining(t, ev, "no bytes either way for 200ms: closing both sides")
	closes := ev.of(EventClose)
	if len(closes) != 1 || !strings.Contains(closes[0].Detail, "idle timeout") {
		t.Errorf("close events %v, want one saying idle timeout", closes)
	}
}

// TestIdleTimeoutOneWay: bytes flowing one way only (requests the broker
// never answers) keep the connection open past the idle timeout; every
// byte reaches the broker.
func TestIdleTimeoutOneWay(t *testing.T) {
	req, _ := heartbeat(1)
	const n = 30
	got := make(chan []byte, 1)
	up := fakeBroker(t, func(c net.Conn) {
		b := make([]byte, n*len(req))
		k, _ := io.ReadFull(c, b)
		got <- b[:k]
		io.ReadAll(c) // until the proxy closes
	})
	// Writes 100 ms apart against a 1 s idle timeout: only a stall of
	// 900 ms on a loaded machine could look idle.
	p, ev := start(t, up, func(c *Config) { c.IdleTimeout = time.Second })
	c := dial(t, p.Addr())
	for i := 0; i < n; i++ { // 3 s of one-way traffic, 3 idle timeouts
		if _, err := c.Write(req); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case b := <-got:
		if !bytes.Equal(b, bytes.Repeat(req, n)) {
			t.Errorf("broker got %d bytes, want %d: the connection was cut while requests flowed", len(b), n*len(req))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("broker never got the requests")
	}
	// Now nothing flows: the idle close comes.
	if _, err := io.ReadAll(c); err != nil {
		t.Errorf("client: %v, want an end of stream", err)
	}
	p.Close()
	if fs := ev.of(EventFault); len(fs) != 1 || !strings.Contains(fs[0].Detail, "no bytes either way") {
		var d []string
		for _, f := range fs {
			d = append(d, f.Detail)
		}
		t.Errorf("faults %q, want only the idle close", d)
	}
}

// allocated runs fn and returns the bytes the process allocated meanwhile.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLyingSizePrefix: frames whose size prefix claims far more than is
// sent (2 GB, or 60 MB on a response held for rewriting) are forwarded
// byte for byte, logged, and cost allocations in proportion to the bytes
// that came, not to the claim.
func TestLyingSizePrefix(t *testing.T) {
	const payload = 1 << 20
	const budget = 16 << 20 // the 1 MiB sent, the test's own copies, slack
	filler := bytes.Repeat([]byte("manifester"), payload/10)
	mdReq, _ := metadata(7, "b1", 9092)
	hbReq, _ := heartbeat(7)
	lying := func(size uint32, corr bool) []byte {
		b := binary.BigEndian.AppendUint32(nil, size)
		if corr {
			b = binary.BigEndian.AppendUint32(b, 7)
		}
		return append(b, filler...)
	}
	twoGBRequest := append(binary.BigEndian.AppendUint32(nil, 0x7ffffff0), hbReq[4:]...)
	twoGBRequest = append(twoGBRequest, filler...)
	for _, tc := range []struct {
		name      string
		req, resp []byte // resp nil: the request lies
		fault     string
	}{
		{"request claiming 2 GB", twoGBRequest, nil, "request size prefix 2147483632 is out of range"},
		{"streamed response claiming 2 GB", hbReq, lying(0x7ffffff0, true), "response size prefix 2147483632 is out of range"},
		{"held response claiming 60 MB", mdReq, lying(60<<20, true), "broker closed in the middle of a Metadata response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gotReq := make(chan []byte, 1)
			up := fakeBroker(t, func(c net.Conn) {
				if tc.resp == nil {
					b, _ := io.ReadAll(c)
					gotReq <- b
					return
				}
				b := make([]byte, len(tc.req))
				io.ReadFull(c, b)
				gotReq <- b
				c.Write(tc.resp)
			})
			p, ev := start(t, up, nil)
			var got []byte
			var err error
			n := allocated(func() {
				c := dial(t, p.Addr())
				c.Write(tc.req)
				if tc.resp == nil {
					c.(*net.TCPConn).CloseWrite()
				}
				got, err = io.ReadAll(c)
				<-gotReq
			})
			if tc.resp != nil && (err != nil || !bytes.Equal(got, tc.resp)) {
				t.Errorf("client got %d bytes (err %v), want the %d the broker sent", len(got), err, len(tc.resp))
			}
			if n > budget {
				t.Errorf("%d bytes allocated forwarding %d, want at most %d", n, len(tc.req)+len(tc.resp), budget)
			}
			p.Close()
			faultsContaining(t, ev, tc.fault)
		})
	}
	// The request case checks the bytes too.
	t.Run("request bytes unchanged", func(t *testing.T) {
		got := make(chan []byte, 1)
		up := fakeBroker(t, func(c net.Conn) { b, _ := io.ReadAll(c); got <- b })
		p, _ := start(t, up, nil)
		c := dial(t, p.Addr())
		c.Write(twoGBRequest)
		c.(*net.TCPConn).CloseWrite()
		if b := <-got; !bytes.Equal(b, twoGBRequest) {
			t.Errorf("broker got %d bytes, want the %d the client sent", len(b), len(twoGBRequest))
		}
	})
}

// TestFrameOverBufferCap: honest frames larger than MaxBuffer are
// forwarded unchanged without decoding (logged as skipped; a Metadata
// response then keeps the broker's addresses, which is logged as a
// fault), and framing goes on: the next exchange on the connection is
// decoded.
func TestFrameOverBufferCap(t *testing.T) {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("topic-%d", i)
		req.Topics = append(req.Topics, kmsg.MetadataRequestTopic{Topic: &name})
	}
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 12
	for i := int32(0); i < 100; i++ {
		resp.Brokers = append(resp.Brokers, kmsg.MetadataResponseBroker{NodeID: i, Host: fmt.Sprintf("broker-%d.example", i), Port: 9092})
	}
	mdReq, mdResp := reqFrame(req, 1), testframes.Response(resp, 1)
	hbReq, hbResp := heartbeat(2)
	if len(mdReq) <= 1024 || len(mdResp) <= 1024 {
		t.Fatalf("metadata request and response of %d and %d bytes are not over the 1024-byte cap", len(mdReq), len(mdResp))
	}
	gotReq := make(chan []byte, 1)
	up := fakeBroker(t, func(c net.Conn) {
		b := make([]byte, len(mdReq))
		io.ReadFull(c, b)
		gotReq <- b
		c.Write(mdResp)
		b = make([]byte, len(hbReq))
		io.ReadFull(c, b)
		c.Write(hbResp)
		io.ReadAll(c)
	})
	p, ev := start(t, up, func(c *Config) { c.MaxBuffer = 1024 })
	c := dial(t, p.Addr())
	c.Write(mdReq)
	got := make([]byte, len(mdResp))
	if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, mdResp) {
		t.Fatalf("metadata response over the cap: got %d bytes (err %v), want the broker's %d unchanged", len(got), err, len(mdResp))
	}
	if b := <-gotReq; !bytes.Equal(b, mdReq) {
		t.Errorf("metadata request over the cap reached the broker changed")
	}
	if err := exchange(c, 2); err != nil {
		t.Fatal(err)
	}
	c.Close()
	p.Close()
	faultsContaining(t, ev, fmt.Sprintf("Metadata response of %d bytes is larger than the buffer cap (1024 bytes): forwarded as it arrives, broker addresses not rewritten", len(mdResp)))
	skipped := ev.of(EventSkipped)
	if wantSkip := fmt.Sprintf("Metadata request of %d bytes is larger than the buffer cap (1024 bytes): forwarded as it arrives, not decoded", len(mdReq)); len(skipped) != 1 || skipped[0].Detail != wantSkip {
		t.Errorf("skipped events %v, want one: %s", skipped, wantSkip)
	}
	var decoded []string
	for _, e := range ev.of(EventFrame) {
		if e.Frame.Error != "" {
			t.Errorf("%s %s: %s", e.Dir, e.Frame.API, e.Frame.Error)
		}
		decoded = append(decoded, e.Dir+" "+e.Frame.API)
	}
	want := []string{"request Heartbeat", "response Heartbeat"}
	if strings.Join(decoded, ",") != strings.Join(want, ",") {
		t.Errorf("decoded %q, want %q (the big frames forwarded undecoded, framing intact after them)", decoded, want)
	}
}

// TestCutShortFramesFreeQueueSpace: requests that claim almost the whole
// decode queue (64 MiB by default) and stop after 1 KiB reserve that
// space, which must come back when their connections end; otherwise the
// first would leave no room and every later frame would be skipped,
// undecoded.
func TestCutShortFramesFreeQueueSpace(t *testing.T) {
	ends := make(chan struct{}, 10)
	up := serveConns(t, func(c net.Conn) {
		var size [4]byte
		if _, err := io.ReadFull(c, size[:]); err == nil && binary.BigEndian.Uint32(size[:]) < 1<<20 {
			// An honest client: answer one Heartbeat.
			body := make([]byte, binary.BigEndian.Uint32(size[:]))
			io.ReadFull(c, body)
			_, resp := heartbeat(int32(binary.BigEndian.Uint32(body[4:8])))
			c.Write(resp)
		}
		io.Copy(io.Discard, c)
		c.Close() // before saying so (serveConns closes it again, harmlessly)
		ends <- struct{}{}
	})
	p, ev := start(t, up, nil)
	hb, _ := heartbeat(1)
	lie := append(binary.BigEndian.AppendUint32(nil, DefaultQueueBytes-4-16), hb[4:]...)
	lie = append(lie, make([]byte, 1024)...)
	for i := 0; i < 2; i++ {
		c := dial(t, p.Addr())
		c.Write(lie)
		c.Close()
		<-ends
	}
	c := dial(t, p.Addr())
	if err := exchange(c, 9); err != nil {
		t.Fatal(err)
	}
	c.Close()
	<-ends
	p.Close()
	if s := ev.of(EventSkipped); len(s) != 0 {
		t.Errorf("frames skipped: %q (queue space of a cut-short frame not given back)", s[0].Detail)
	}
	var decoded int
	for _, e := range ev.of(EventFrame) {
		if e.Frame.API == "Heartbeat" && e.Frame.CorrelationID == 9 {
			decoded++
		}
	}
	if decoded != 2 {
		t.Errorf("%d frames of the honest Heartbeat exchange decoded, want 2", decoded)
	}
	p.q.mu.Lock()
	q := p.q.bytes
	p.q.mu.Unlock()
	if q != 0 {
		t.Errorf("%d bytes of decode-queue space still reserved after every connection ended", q)
	}
}

// TestTooManyDecodeWorkers: New refuses more decode workers than
// MaxDecodeWorkers (each may keep an OS thread, and the Go runtime ends
// a process past 10,000 of them).
func TestTooManyDecodeWorkers(t *testing.T) {
	_, err := New(Config{Listen: "127.0.0.1:0", Upstream: "127.0.0.1:9", Codec: testCodec(t), DecodeWorkers: MaxDecodeWorkers + 1})
	if err == nil || !strings.Contains(err.Error(), "DecodeWorkers") {
		t.Errorf("New with %d decode workers: %v; want an error naming DecodeWorkers", MaxDecodeWorkers+1, err)
	}
}

// TestOutOfRangePrefixAt: a size prefix out of range is said with where
// it is, the byte of the sender's stream its frame starts at (after a
// good exchange, so not 0), as bad input is.
func TestOutOfRangePrefixAt(t *testing.T) {
	hbReq, hbResp := heartbeat(1)
	bad := []byte{0x7f, 0xff, 0xff, 0xf0, 0, 12, 0, 4, 0, 0, 0, 2}
	up := fakeBroker(t, func(c net.Conn) {
		b := make([]byte, len(hbReq)+len(bad))
		io.ReadFull(c, b)
		c.Write(append(append([]byte(nil), hbResp...), bad...))
		io.Copy(io.Discard, c)
	})
	p, ev := start(t, up, nil)
	c := dial(t, p.Addr())
	c.Write(append(append([]byte(nil), hbReq...), bad...))
	got := make([]byte, len(hbResp)+len(bad))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	c.Close()
	p.Close()
	faultsContaining(t, ev, fmt.Sprintf("request size prefix 2147483632 is out of range (at byte %d of the client's stream)", len(hbReq)))
	faultsContaining(t, ev, fmt.Sprintf("response size prefix 2147483632 is out of range (at byte %d of the broker's stream)", len(hbResp)))
}
