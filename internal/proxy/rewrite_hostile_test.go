package proxy

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/testcert"
	"github.com/manifester/manifester/internal/testdeadline"
	"github.com/manifester/manifester/internal/testframes"
)

// TestNoNodePlaceholderLeftAlone: a FindCoordinator error
// (COORDINATOR_NOT_AVAILABLE, common while a group coordinator loads)
// carries Kafka's "no node" placeholder, node -1 at "" port -1. It is no
// broker address: the proxy opens no listener for it, forwards the
// response as the broker sent it, and does not take its empty host for a
// broker address shorter than the proxy's (which stops tail holding).
func TestNoNodePlaceholderLeftAlone(t *testing.T) {
	up := answerBroker(t, func(key int16, corr int32) []byte {
		r := kmsg.NewPtrFindCoordinatorResponse()
		r.Version = 3
		r.ErrorCode, r.NodeID, r.Host, r.Port = 15, -1, "", -1
		return testframes.Response(r, corr)
	})
	p, ev := start(t, up, nil)
	c := dial(t, p.Addr())
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorKey = 3, "group"
	got := roundTrip(t, c, req, 7).(*kmsg.FindCoordinatorResponse)
	if got.NodeID != -1 || got.Host != "" || got.Port != -1 {
		t.Errorf("the placeholder reached the client as node %d at %q port %d, want node -1 at \"\" port -1", got.NodeID, got.Host, got.Port)
	}
	if l := p.Listeners(); len(l) != 1 {
		t.Errorf("listeners %v, want only the first", l)
	}
	if p.tailsOff.Load() {
		t.Error("tail holding was stopped")
	}
	p.Close()
	for _, e := range ev.of(EventRewrite) {
		t.Errorf("rewrite event: %s", e.Detail)
	}
}

// TestAdvertisedProxyAddressLeftAlone: a broker that already advertises
// the proxy's own listeners (advertised.listeners set to the proxy) is
// left as it is: no listener forwarding to the proxy itself (a hop more
// at each Metadata, the next response advertising that listener in turn),
// and a pinned listener is not turned to forward to itself (a loop of
// connections).
func TestAdvertisedProxyAddressLeftAlone(t *testing.T) {
	var self atomic.Value
	self.Store([]kmsg.MetadataResponseBroker{})
	up := metadataBroker(t, func() []kmsg.MetadataResponseBroker {
		return self.Load().([]kmsg.MetadataResponseBroker)
	})
	pin := "127.0.0.1:" + strconv.Itoa(freePorts(t, 1))
	p, ev := start(t, up, func(c *Config) { c.BrokerListen = map[int32]string{1: pin} })
	c := dial(t, p.Addr())
	// Node 1's pinned listener opens, forwarding to the first broker.
	self.Store([]kmsg.MetadataResponseBroker{broker(1, up)})
	if got := askMetadata(t, c, 1); len(got) != 1 || addrOf(got[0]) != pin {
		t.Fatalf("brokers %v, want node 1 at %s", got, pin)
	}
	// Now the broker advertises the proxy: its first listener for node 0,
	// node 1's pinned one for node 1.
	want := []kmsg.MetadataResponseBroker{broker(0, p.Addr()), broker(1, pin)}
	self.Store(want)
	for corr := int32(2); corr < 4; corr++ {
		got := askMetadata(t, c, corr)
		if len(got) != 2 || addrOf(got[0]) != p.Addr() || addrOf(got[1]) != pin {
			t.Fatalf("brokers %v, want %v", got, want)
		}
	}
	p.mu.Lock()
	opened, pinnedTo := len(p.listeners)+len(p.byNode), p.byNode[1].upstream
	p.mu.Unlock()
	if opened != 2 || pinnedTo != up {
		t.Errorf("%d listeners, node 1's forwarding to %s; want 2, node 1's forwarding to %s", opened, pinnedTo, up)
	}
	// Node 1's listener still reaches the broker.
	c1 := dial(t, pin)
	if got := askMetadata(t, c1, 1); len(got) != 2 {
		t.Errorf("through node 1's listener: brokers %v", got)
	}
	p.Close()
	for _, e := range ev.of(EventRewrite) {
		if !strings.Contains(e.Detail, "(correlation id 1)") {
			t.Errorf("rewrite event: %s", e.Detail)
		}
	}
}

// TestManyRewrittenBrokersThroughStream: a response naming thousands of
// node ids at one short address, rewritten to a longer proxy address,
// grows past Config.MaxBuffer, and so would its rewrite event's list of
// every address replaced. The decoding side across the job stream takes
// both (a record over its limit stopped the decoding process, and with
// it the proxy), and the event names a few addresses and counts the rest.
func TestManyRewrittenBrokersThroughStream(t *testing.T) {
	const n = 4000
	brokers := make([]kmsg.MetadataResponseBroker, n)
	for i := range brokers {
		brokers[i] = kmsg.MetadataResponseBroker{NodeID: int32(i), Host: "a", Port: 1}
	}
	up := metadataBroker(t, func() []kmsg.MetadataResponseBroker { return brokers })
	throughStream = true
	p, ev := start(t, up, func(c *Config) { c.MaxBuffer, c.AdvertiseHost = 64<<10, "proxy-advertised-host.example" })
	throughStream = false
	got := askMetadata(t, dial(t, p.Addr()), 1)
	if len(got) != n || got[n-1].Host != "proxy-advertised-host.example" {
		t.Fatalf("%d brokers, the last at %s", len(got), addrOf(got[len(got)-1]))
	}
	p.Close() // DecodeStream's error, if any, fails the test
	var rewritten bool
	for _, e := range ev.of(EventFrame) {
		rewritten = rewritten || e.Rewritten
	}
	if !rewritten {
		t.Error("no rewritten frame was logged")
	}
	var rw []*Event
	for _, e := range ev.of(EventRewrite) {
		if strings.Contains(e.Detail, "(correlation id 1)") {
			rw = append(rw, e)
		}
	}
	if len(rw) != 1 {
		t.Fatalf("%d rewrite events of the response, want 1", len(rw))
	}
	if d := rw[0].Detail; len(d) > 4096 || !strings.Contains(d, "node 0 a:1 -> proxy-advertised-host.example:") || !strings.Contains(d, "and 3984 more") {
		t.Errorf("rewrite event of %d bytes: %.300s ... %s", len(d), d, d[max(0, len(d)-200):])
	}
}

// TestConnectionLoop: a broker address that leads back to the proxy's
// own listener under another name (a pinned listener's node advertised
// at "localhost:PORT", an --upstream naming the proxy itself) makes the
// proxy dial itself. The loop is cut at once and said, where each
// connection dialled the next until the connection limit (and the
// process's file descriptors) ran out.
func TestConnectionLoop(t *testing.T) {
	port := freePorts(t, 2)
	pin := "127.0.0.1:" + strconv.Itoa(port)
	up := metadataBroker(t, func() []kmsg.MetadataResponseBroker {
		return []kmsg.MetadataResponseBroker{{NodeID: 1, Host: "localhost", Port: int32(port)}}
	})
	self := "127.0.0.1:" + strconv.Itoa(port+1)
	var tlsClient *tls.Config // set by a case that serves TLS
	for _, tc := range []struct {
		name     string
		upstream string
		mod      func(*Config)
		through  string
	}{
		{"pinned", up, func(c *Config) { c.BrokerListen = map[int32]string{1: pin} }, pin},
		{"upstream", "localhost:" + strconv.Itoa(port+1), func(c *Config) { c.Listen = self }, self},
		{"upstream TLS", "localhost:" + strconv.Itoa(port+1), func(c *Config) {
			certs := testcert.New(t, "proxy")
			var err error
			if c.TLS, err = ServerTLS(certs.ServerCert, certs.ServerKey); err != nil {
				t.Fatal(err)
			}
			if c.UpstreamTLS, err = UpstreamTLS(certs.CAFile, "", "", ""); err != nil {
				t.Fatal(err)
			}
			c.Listen = self
			tlsClient = certs.ClientConfig(false)
			tlsClient.ServerName = "localhost"
		}, self},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ev := start(t, tc.upstream, func(c *Config) { tc.mod(c); c.MaxConns = 50 })
			stay := 0 // connections that stay open
			if tc.name == "pinned" {
				askMetadata(t, dial(t, p.Addr()), 1)
				stay = 1
			}
			var c net.Conn = dial(t, tc.through)
			if tlsClient != nil {
				tcn := tls.Client(c, tlsClient)
				tlsClient = nil
				if err := tcn.Handshake(); err != nil {
					t.Fatal(err)
				}
				c = tcn
			}
			req, _ := heartbeat(1)
			c.Write(req)
			if b, err := io.ReadAll(c); err != nil || len(b) != 0 {
				t.Errorf("the client read %d bytes, %v; want an end of stream", len(b), err)
			}
			c.Close()
			// The loop's connections end of themselves (Close would cut
			// a dial still under way, the proxy's to itself).
			for deadline := testdeadline.Deadline(t); ; time.Sleep(time.Millisecond) {
				p.mu.Lock()
				n := len(p.conns)
				p.mu.Unlock()
				if n == stay || time.Now().After(deadline) {
					break
				}
			}
			p.Close()
			// Which end of each of the proxy's connections to itself sees
			// the loop depends on the scheduling (mostly the first, the
			// client's, or the next); never the limit's 50.
			if n := len(ev.of(EventOpen)); n > 20 {
				t.Errorf("%d connections opened for one client", n)
			}
			faultsContaining(t, ev, "connection loop: the broker address localhost:")
			for _, e := range ev.of(EventFault) {
				if !strings.Contains(e.Detail, "connection loop") {
					t.Errorf("fault: %s", e.Detail)
				}
			}
		})
	}
}

// TestNoLoopForASharedPort: a client on the proxy's machine whose local
// port is also that of one of the proxy's broker connections (Linux
// shares an ephemeral port among connections to different destinations)
// is no loop: only the two ends of one connection, both addresses
// swapped, are.
func TestNoLoopForASharedPort(t *testing.T) {
	up, _ := heartbeatBroker(t)
	p, ev := start(t, up, nil)
	ln := loopbackListener(t)
	from := ln.Addr().(*net.TCPAddr) // a port free once ln is closed
	ln.Close()
	// The proxy's connection to another broker, from that port.
	client, _ := net.Pipe()
	other := newConn(p, p.boot, client, 1000, "127.0.0.1:9")
	other.upstream, _ = net.Pipe()
	p.mu.Lock()
	p.dialled[connKey(from, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9})] = other
	p.mu.Unlock()
	d := net.Dialer{LocalAddr: from, Timeout: 2 * time.Second}
	c, err := d.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := exchange(c, 1); err != nil {
		t.Errorf("the client from %s: %v", from, err)
	}
	p.mu.Lock()
	clear(p.dialled)
	p.mu.Unlock()
	c.Close()
	p.Close()
	for _, e := range ev.of(EventFault) {
		t.Errorf("fault: %s", e.Detail)
	}
}

// TestNewerVersionSaid: a response of an address-advertising API at a
// version newer than the spec (a proxy given an older --spec than its
// cluster and clients) cannot be decoded to rewrite its addresses: it is
// forwarded as it came, and an error says once that its addresses reach
// the client unrewritten (the client may then bypass the proxy).
func TestNewerVersionSaid(t *testing.T) {
	_, resp := metadata(0, "10.0.0.1", 9092)
	up := answerBroker(t, func(key int16, corr int32) []byte {
		b := append([]byte(nil), resp...)
		binary.BigEndian.PutUint32(b[4:], uint32(corr))
		return b
	})
	p, ev := start(t, up, nil)
	c := dial(t, p.Addr())
	for corr := int32(1); corr <= 2; corr++ {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		b := reqFrame(req, corr)
		binary.BigEndian.PutUint16(b[6:], 14) // Metadata v14, newer than 4.3's 0-13
		c.Write(b)
		got := make([]byte, len(resp))
		if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got[8:], resp[8:]) {
			t.Fatalf("response %d: %v, or not as the broker sent it", corr, err)
		}
	}
	c.Close()
	p.Close()
	n := 0
	for _, e := range ev.of(EventFault) {
		if strings.Contains(e.Detail, "Metadata v14") && strings.Contains(e.Detail, "unrewritten") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d errors about Metadata v14 responses, want 1", n)
	}
}
