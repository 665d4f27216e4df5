package proxy

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	rtext "github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/testcert"
)

// roundTrip sends req (encoded by kmsg) and reads its response with kmsg.
func roundTrip(t *testing.T, c net.Conn, req kmsg.Request, corr int32) kmsg.Response {
	t.Helper()
	if _, err := c.Write(reqFrame(req, corr)); err != nil {
		t.Fatalf("writing %s: %v", kmsg.NameForKey(req.Key()), err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatalf("reading the %s response: %v", kmsg.NameForKey(req.Key()), err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatal(err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != corr {
		t.Fatalf("correlation id %d, want %d", got, corr)
	}
	body = body[4:]
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() && req.Key() != 18 {
		body = body[1:] // empty header tags
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatalf("%s response: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp
}

func tlsCluster(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(2)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// metadataThrough asks for metadata on c and checks that every broker
// is advertised at a listener of p.
func metadataThrough(t *testing.T, p *Proxy, c net.Conn, corr int32) *kmsg.MetadataResponse {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 12
	resp := roundTrip(t, c, req, corr).(*kmsg.MetadataResponse)
	if len(resp.Brokers) != 2 {
		t.Fatalf("%d brokers, want 2", len(resp.Brokers))
	}
	mine := map[string]bool{}
	for _, a := range p.Listeners() {
		mine[a] = true
	}
	for _, b := range resp.Brokers {
		if a := net.JoinHostPort(b.Host, fmt.Sprint(b.Port)); !mine[a] {
			t.Errorf("broker %d advertised at %s, not a proxy listener (%v)", b.NodeID, a, p.Listeners())
		}
	}
	return resp
}

// TestTLSBothSidesWithSASL: a client speaks TLS to the proxy, the proxy
// speaks mutual TLS to a kfake cluster that requires SASL; a hand-written
// SaslHandshake and SaslAuthenticate (PLAIN) authenticate, Metadata names
// the proxy's listeners, and a TLS connection to a broker's listener
// works too. No byte of the password is in any event.
func TestTLSBothSidesWithSASL(t *testing.T) {
	// No four digits in a row: holdsPiece looks for every four bytes of
	// it, and events hold timestamps and ports ("...899987611Z" held 9876).
	const password = "pl41n-Secret-k9x6"
	brokerCerts, proxyCerts := testcert.New(t, "broker"), testcert.New(t, "proxy")
	cl := tlsCluster(t, kfake.TLS(brokerCerts.ServerConfig(true)), kfake.EnableSASL(), kfake.Superuser("PLAIN", "alice", password))
	up, err := UpstreamTLS(brokerCerts.CAFile, "", brokerCerts.ClientCert, brokerCerts.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ServerTLS(proxyCerts.ServerCert, proxyCerts.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	p, ev := start(t, cl.ListenAddrs()[0], func(c *Config) { c.TLS, c.UpstreamTLS = srv, up })
	conn, err := tls.Dial("tcp", p.Addr(), proxyCerts.ClientConfig(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "PLAIN"
	if r := roundTrip(t, conn, hs, 1).(*kmsg.SASLHandshakeResponse); r.ErrorCode != 0 {
		t.Fatalf("SaslHandshake: error %d", r.ErrorCode)
	}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 2, []byte("\x00alice\x00"+password)
	if r := roundTrip(t, conn, auth, 2).(*kmsg.SASLAuthenticateResponse); r.ErrorCode != 0 {
		t.Fatalf("SaslAuthenticate: error %d %v", r.ErrorCode, r.ErrorMessage)
	}
	md := metadataThrough(t, p, conn, 3)
	// The second broker's listener serves TLS as well (and the proxy
	// authenticates nothing itself: the new connection must do SASL).
	other := net.JoinHostPort(md.Brokers[1].Host, fmt.Sprint(md.Brokers[1].Port))
	c2, err := tls.Dial("tcp", other, proxyCerts.ClientConfig(false))
	if err != nil {
		t.Fatal(err)
	}
	c2.SetDeadline(time.Now().Add(20 * time.Second))
	if r := roundTrip(t, c2, hs, 1).(*kmsg.SASLHandshakeResponse); r.ErrorCode != 0 {
		t.Fatalf("SaslHandshake on broker 2: error %d", r.ErrorCode)
	}
	c2.Close()
	conn.Close()
	p.Close()
	if f := ev.of(EventFault); len(f) > 0 {
		t.Errorf("faults: %s", f[0].Detail)
	}
	frames := 0
	for _, e := range ev.all {
		line, err := AppendJSON(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		if e.Frame != nil {
			frames++
			rtext.Frame(&text, e.Frame, true, rtext.Style{})
		}
		for _, out := range [][]byte{line, text.Bytes(), e.Data, e.Original} {
			if holdsPiece(out, password) {
				t.Fatalf("%s event holds a piece of the password:\n%s", e.Kind, out)
			}
		}
	}
	if frames < 8 {
		t.Errorf("%d frames decoded, want at least 8", frames)
	}
	var sawAuth bool
	for _, e := range ev.of(EventFrame) {
		if e.Frame.API == "SaslAuthenticate" && e.Dir == "request" {
			sawAuth = true
			tr := e.Frame.SpanTree()
			body := tr.Kids(tr.Root())[2]
			if v := tr.ValueText(tr.Kids(body)[0]); !strings.Contains(v, `authcid "alice", password redacted (17 bytes)`) {
				t.Errorf("auth bytes: %s", v)
			}
		}
	}
	if !sawAuth {
		t.Error("no SaslAuthenticate request decoded")
	}
}

// TestTLSToPlaintext and TestPlaintextToTLS: each side is independent.
func TestTLSToPlaintext(t *testing.T) {
	proxyCerts := testcert.New(t, "proxy")
	cl := tlsCluster(t)
	srv, err := ServerTLS(proxyCerts.ServerCert, proxyCerts.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	p, ev := start(t, cl.ListenAddrs()[0], func(c *Config) { c.TLS = srv })
	conn, err := tls.Dial("tcp", p.Addr(), proxyCerts.ClientConfig(false))
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	metadataThrough(t, p, conn, 1)
	conn.Close()
	// A client that does not speak TLS is refused, and that is said.
	plain := dial(t, p.Addr())
	req, _ := heartbeat(1)
	plain.Write(req)
	io.Copy(io.Discard, plain)
	p.Close()
	faultsContaining(t, ev, "TLS handshake with the client")
}

func TestPlaintextToTLS(t *testing.T) {
	brokerCerts := testcert.New(t, "broker")
	cl := tlsCluster(t, kfake.TLS(brokerCerts.ServerConfig(false)))
	up, err := UpstreamTLS(brokerCerts.CAFile, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	p, ev := start(t, cl.ListenAddrs()[0], func(c *Config) { c.UpstreamTLS = up })
	conn := dial(t, p.Addr())
	metadataThrough(t, p, conn, 1)
	conn.Close()
	p.Close()
	if f := ev.of(EventFault); len(f) > 0 {
		t.Errorf("faults: %s", f[0].Detail)
	}
}

// TestUpstreamTLSChecksTheName: a broker certificate not valid for
// --upstream-server-name is refused, logged, and the client closed.
func TestUpstreamTLSChecksTheName(t *testing.T) {
	brokerCerts := testcert.New(t, "broker")
	cl := tlsCluster(t, kfake.TLS(brokerCerts.ServerConfig(false)))
	up, err := UpstreamTLS(brokerCerts.CAFile, "not-the-broker.test", "", "")
	if err != nil {
		t.Fatal(err)
	}
	p, ev := start(t, cl.ListenAddrs()[0], func(c *Config) { c.UpstreamTLS = up })
	conn := dial(t, p.Addr())
	if b, _ := io.ReadAll(conn); len(b) != 0 {
		t.Fatalf("client got %d bytes", len(b))
	}
	p.Close()
	faultsContaining(t, ev, "not-the-broker.test")
	// And a broker certificate from another CA is refused too.
	other := testcert.New(t, "other")
	up2, _ := UpstreamTLS(other.CAFile, "", "", "")
	p2, ev2 := start(t, cl.ListenAddrs()[0], func(c *Config) { c.UpstreamTLS = up2 })
	io.ReadAll(dial(t, p2.Addr()))
	p2.Close()
	faultsContaining(t, ev2, "certificate")
}

func TestTLSConfigErrors(t *testing.T) {
	certs := testcert.New(t, "x")
	if _, err := ServerTLS(certs.ServerCert, certs.CAFile); err == nil {
		t.Error("a certificate with a key that is not its own must fail")
	}
	if _, err := UpstreamTLS(certs.ServerKey, "", "", ""); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("a CA file without certificates: %v", err)
	}
	if _, err := UpstreamTLS("", "", certs.ClientCert, ""); err == nil {
		t.Error("a client certificate without its key must fail")
	}
}
