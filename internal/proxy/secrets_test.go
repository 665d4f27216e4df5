package proxy

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/testframes"
)

// legacyBroker plays a broker of the SaslHandshake v0 era: it answers
// the handshake, then reads len(replies) raw tokens and answers each with
// a raw token of its own (size prefix only), then answers Heartbeats.
func legacyBroker(t *testing.T, mech string, replies [][]byte) string {
	return fakeBroker(t, func(c net.Conn) {
		read := func() []byte {
			var size [4]byte
			if _, err := io.ReadFull(c, size[:]); err != nil {
				return nil
			}
			b := make([]byte, binary.BigEndian.Uint32(size[:]))
			if _, err := io.ReadFull(c, b); err != nil {
				return nil
			}
			return b
		}
		hs := read()
		resp := kmsg.NewPtrSASLHandshakeResponse()
		resp.SupportedMechanisms = []string{mech}
		c.Write(testframes.Response(resp, int32(binary.BigEndian.Uint32(hs[4:]))))
		for _, r := range replies {
			if read() == nil {
				return
			}
			c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(r))), r...))
		}
		for {
			b := read()
			if b == nil {
				return
			}
			_, hb := heartbeat(int32(binary.BigEndian.Uint32(b[4:])))
			c.Write(hb)
		}
	})
}

func rawToken(b []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// legacyExchange runs a v0 handshake, the client's tokens and a
// Heartbeat through a proxy and returns its events.
func legacyExchange(t *testing.T, mech string, tokens, replies [][]byte, show bool) *events {
	t.Helper()
	p, ev := start(t, legacyBroker(t, mech, replies), func(c *Config) { c.ShowSecrets = show })
	c := dial(t, p.Addr())
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 0, mech
	if r := roundTrip(t, c, hs, 1).(*kmsg.SASLHandshakeResponse); r.ErrorCode != 0 {
		t.Fatal(r.ErrorCode)
	}
	for i, tok := range tokens {
		c.Write(rawToken(tok))
		want := rawToken(replies[i])
		got := make([]byte, len(want))
		if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("server token %d: % x, %v; want % x", i, got, err, want)
		}
	}
	if err := exchange(c, 9); err != nil {
		t.Fatalf("a request after the SASL exchange: %v", err)
	}
	c.Close()
	p.Close()
	return ev
}

// allOutput renders every event: its JSON line, its text report and its
// bytes.
func allOutput(t *testing.T, ev *events) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, e := range ev.all {
		line, err := AppendJSON(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(line)
		if e.Frame != nil {
			text.Frame(&out, e.Frame, true, text.Style{})
		}
		out.Write(e.Data)
		out.Write(e.Original)
	}
	return out.Bytes()
}

// holdsPiece reports whether out holds any four bytes in a row of secret,
// as they are or in hex. A secret must have no four digits in a row: the
// events' times and ports hold such pieces by chance.
func holdsPiece(out []byte, secret string) bool {
	for i := 0; i+4 <= len(secret); i++ {
		if bytes.Contains(out, []byte(secret[i:i+4])) || bytes.Contains(out, []byte(hex.EncodeToString([]byte(secret[i:i+4])))) {
			return true
		}
	}
	return false
}

// TestLegacyPlainTokens: after a SaslHandshake v0 the raw PLAIN token
// and the broker's empty answer are framed (no fault, the Heartbeat after
// them decodes), shown with the mechanism's structure, and the password
// is in no output; with ShowSecrets it is.
func TestLegacyPlainTokens(t *testing.T) {
	const password = "v0-Pl4in-Zq8kXr7w"
	tokens, replies := [][]byte{[]byte("\x00bob\x00" + password)}, [][]byte{{}}
	ev := legacyExchange(t, "PLAIN", tokens, replies, false)
	if f := ev.of(EventFault); len(f) > 0 {
		t.Fatalf("fault: %s", f[0].Detail)
	}
	var raw, hb int
	for _, e := range ev.of(EventFrame) {
		switch e.Frame.API {
		case "SaslHandshake-v0-token":
			raw++
		case "Heartbeat":
			hb++
		}
		if e.Frame.Error != "" {
			t.Errorf("%s %s: %s", e.Dir, e.Frame.API, e.Frame.Error)
		}
	}
	if raw != 2 || hb != 2 {
		t.Errorf("%d raw tokens and %d Heartbeat frames decoded, want 2 and 2", raw, hb)
	}
	out := allOutput(t, ev)
	if holdsPiece(out, password) {
		t.Fatalf("the password is in the output:\n%s", out)
	}
	if !bytes.Contains(out, []byte(`authcid \"bob\", password redacted (17 bytes)`)) {
		t.Errorf("no structure of the token in the output:\n%s", out)
	}
	if shown := allOutput(t, legacyExchange(t, "PLAIN", tokens, replies, true)); !bytes.Contains(shown, []byte(password)) {
		t.Error("with ShowSecrets the password should be shown")
	}
}

// TestLegacyScramTokens: SCRAM has two rounds; the client proof and the
// server signature are redacted, the nonces and salt are shown.
func TestLegacyScramTokens(t *testing.T) {
	const proof, sig = "cHJvb2Ytb2YtdGhlLWNsaWVudC0xMjM0NTY3OA==", "c2lnbmF0dXJlLW9mLXRoZS1zZXJ2ZXItODc2NTQz"
	tokens := [][]byte{[]byte("n,,n=carol,r=clientnonce"), []byte("c=biws,r=clientnonceservernonce,p=" + proof)}
	replies := [][]byte{[]byte("r=clientnonceservernonce,s=c2FsdHNhbHQ=,i=4096"), []byte("v=" + sig)}
	ev := legacyExchange(t, "SCRAM-SHA-512", tokens, replies, false)
	if f := ev.of(EventFault); len(f) > 0 {
		t.Fatalf("fault: %s", f[0].Detail)
	}
	out := allOutput(t, ev)
	if holdsPiece(out, proof) || holdsPiece(out, sig) {
		t.Fatalf("a SCRAM secret is in the output:\n%s", out)
	}
	for _, want := range []string{"clientnonceservernonce", "i=4096", "client proof redacted (40 bytes)", "server signature redacted (40 bytes)"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// TestLegacyTokenOverBufferCap: a raw SASL token larger than MaxBuffer
// is forwarded undecoded, from either side, and each is counted in a
// skipped event, as any other frame over the cap is.
func TestLegacyTokenOverBufferCap(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 300)
	replies := [][]byte{big}
	p, ev := start(t, legacyBroker(t, "GSSAPI", replies), func(c *Config) { c.MaxBuffer = 200 })
	c := dial(t, p.Addr())
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 0, "GSSAPI"
	if r := roundTrip(t, c, hs, 1).(*kmsg.SASLHandshakeResponse); r.ErrorCode != 0 {
		t.Fatal(r.ErrorCode)
	}
	c.Write(rawToken(big))
	want := rawToken(big)
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("server token: %v", err)
	}
	c.Close()
	p.Close()
	dirs := map[string]int{}
	for _, e := range ev.of(EventSkipped) {
		if strings.Contains(e.Detail, "larger than the buffer cap") {
			dirs[e.Dir] += e.Count
		}
	}
	if dirs["request"] != 1 || dirs["response"] != 1 {
		t.Errorf("skipped over the cap: %v; want one request and one response", dirs)
	}
}
