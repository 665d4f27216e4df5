package tlstest

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/capture"
)

// payloads are the exchanges of the OpenSSL tests: text beyond ASCII,
// binary bytes, and a client message of 40,000 bytes (three TLS records,
// many TCP segments) answered by a server message of 4,000 (three
// segments).
func payloads() [][2][]byte {
	bin := make([]byte, 256)
	for i := range bin {
		bin[i] = byte(i)
	}
	return [][2][]byte{
		{[]byte("hello from the client — ✓ ключ\n"), []byte("hello from the server — ✓ värde\n")},
		{append([]byte("binary: "), bin...), append([]byte("binary back: "), bin...)},
		{bytes.Repeat([]byte("client-40k·"), 40000/len("client-40k·")+1)[:40000], bytes.Repeat([]byte("server-4k·"), 400)[:4000]},
		{[]byte("last words from the client"), []byte("last words from the server")},
	}
}

// checkOpenSSL checks a session against s_server: one connection, closed,
// on s_server's port, its secrets in the key log, no plaintext in the
// clear; capture.Read sees one TLS connection; tshark decrypts each
// direction into exactly the plain recording, which is the plaintext
// sent.
func checkOpenSSL(t *testing.T, s *Session, pl [][2][]byte) {
	t.Helper()
	var sent [2][]byte
	var plain [][]byte
	for _, p := range pl {
		sent[0], sent[1] = append(sent[0], p[0]...), append(sent[1], p[1]...)
		plain = append(plain, p[0], p[1])
	}
	if !bytes.Equal(s.Plaintext[0], sent[0]) || !bytes.Equal(s.Plaintext[1], sent[1]) {
		t.Errorf("Plaintext holds %d and %d bytes, the payloads %d and %d", len(s.Plaintext[0]), len(s.Plaintext[1]), len(sent[0]), len(sent[1]))
	}
	if len(s.Recordings) != 1 || s.Recordings[0].Server.Port() != uint16(s.Port) || s.Recordings[0].End.IsZero() {
		t.Fatalf("%d recordings, want one, to port %d, closed", len(s.Recordings), s.Port)
	}
	checkKeyLog(t, s)
	checkEncrypted(t, s, plain...)
	if st := readCapture(t, s.Recordings, capture.PCAPNG); st.Ignored["TLS"] != 1 {
		t.Errorf("capture.Read ignored %v, want 1 TLS connection", st.Ignored)
	}
	for _, d := range []capture.Dir{capture.ClientToServer, capture.ServerToClient} {
		if !bytes.Equal(s.Plain[0].Stream(d), s.Plaintext[d]) {
			t.Errorf("%s: the plain recording holds %d bytes, %d were sent", d, len(s.Plain[0].Stream(d)), len(s.Plaintext[d]))
		}
	}
	checkPlain(t, s) // last: without tshark it skips the rest
}

// TestOpenSSL: sessions with s_server negotiate each suite asked for, in
// TLS 1.3 and TLS 1.2, and carry the payloads both ways.
func TestOpenSSL(t *testing.T) {
	for _, c := range []struct {
		version string
		suites  []string
	}{{"1.3", TLS13Suites}, {"1.2", TLS12Suites}} {
		for _, suite := range c.suites {
			t.Run(c.version+"-"+suite, func(t *testing.T) {
				pl := payloads()
				s := OpenSSL(t, c.version, suite, pl)
				want, _ := GoSuite(suite)
				if s.CipherSuite != want || tls.VersionName(s.Version) != "TLS "+c.version || s.KeyUpdates != 0 {
					t.Errorf("session %s %s with %d KeyUpdates, want TLS %s %s", tls.VersionName(s.Version), tls.CipherSuiteName(s.CipherSuite), s.KeyUpdates, c.version, suite)
				}
				checkOpenSSL(t, s, pl)
			})
		}
	}
}

// TestOpenSSLKeyUpdate: in TLS 1.3 sessions with s_server, each
// KeyUpdate the server sends is answered by the client's; tshark sees
// both in their directions, and still decrypts everything after them.
func TestOpenSSLKeyUpdate(t *testing.T) {
	for _, suite := range TLS13Suites {
		t.Run(suite, func(t *testing.T) {
			pl := payloads()
			s := OpenSSLKeyUpdate(t, suite, pl, 0, 2)
			if s.KeyUpdates != 2 {
				t.Errorf("%d KeyUpdates, want 2", s.KeyUpdates)
			}
			checkOpenSSL(t, s, pl)
			pcapPath, keylogPath := files(t, s)
			var updates [2]int
			for _, row := range TsharkFields(t, pcapPath, keylogPath, s.Port, "tls.handshake.type == 24", "tcp.srcport", "tls.handshake.type") {
				d := capture.ClientToServer
				if row[0] == strconv.Itoa(s.Port) {
					d = capture.ServerToClient
				}
				updates[d] += strings.Count(","+row[1], ",24")
			}
			if updates != [2]int{2, 2} {
				t.Errorf("tshark sees %d KeyUpdates from the client and %d from the server, want 2 and 2", updates[0], updates[1])
			}
		})
	}
	t.Run("refused after the last payload", func(t *testing.T) {
		ft := &fatalT{TB: t}
		func() {
			defer func() { recover() }()
			OpenSSLKeyUpdate(ft, TLS13Suites[0], payloads(), len(payloads())-1)
		}()
		if !strings.Contains(ft.msg, "must be followed") {
			t.Errorf("a KeyUpdate after the last payload: %q", ft.msg)
		}
	})
}

// fatalT records a Fatalf and stops the calling function.
type fatalT struct {
	testing.TB
	msg string
}

func (f *fatalT) Fatalf(format string, a ...any) {
	f.msg = fmt.Sprintf(format, a...)
	panic(f)
}
