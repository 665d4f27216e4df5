package tlstest

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/testcert"
	"github.com/manifester/manifester/internal/testdeadline"
)

// OpenSSL cipher suite names [OpenSSL] covers: the TLS 1.3 suites (which
// Go cannot choose: its client offers all three and openssl s_server's
// -ciphersuites decides), and the TLS 1.2 ECDHE-ECDSA AEAD suites.
var (
	TLS13Suites = []string{"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}
	TLS12Suites = []string{"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305"}
)

// goSuites maps OpenSSL's names of the TLS 1.2 suites to Go's.
var goSuites = map[string]uint16{
	"ECDHE-ECDSA-AES128-GCM-SHA256": tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-ECDSA-AES256-GCM-SHA384": tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-ECDSA-CHACHA20-POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
}

// GoSuite returns Go's number of a suite named as [TLS13Suites] and
// [TLS12Suites] name them.
func GoSuite(name string) (uint16, bool) {
	if id, ok := goSuites[name]; ok {
		return id, true
	}
	for _, s := range tls.CipherSuites() {
		if s.Name == name {
			return s.ID, true
		}
	}
	return 0, false
}

// OpenSSL runs one TLS session, recorded, between Go's tls.Client and
// openssl s_server on 127.0.0.1 with the server certificate of testcert,
// restricted to version ("1.2" or "1.3") and suite (OpenSSL's name: one
// of [TLS13Suites] or [TLS12Suites]). For each payload in turn the
// client sends payload[0], then the server sends payload[1], which the
// client reads in full before the next. The Session holds the recording
// and its Plain twin, s_server's key log (-keylogfile), the port, the
// version and suite negotiated (checked to be the ones asked for) and
// the Plaintext each side sent. That the server received the client's
// bytes is checked on its output, and that Go's own key log agrees with
// s_server's.
//
// A server payload goes through s_server's standard input: it may not
// be longer than 4,096 bytes (a pipe's atomic write) nor read as one of
// s_server's commands: start with Q, q, P or S, or be one of the letters
// B, r, R, k, K, c alone or followed by a line end. Skips the test when
// openssl is not installed (fails under CI=true).
func OpenSSL(t testing.TB, version, suite string, payloads [][2][]byte) *Session {
	t.Helper()
	return runOpenSSL(t, version, suite, payloads, nil)
}

// OpenSSLKeyUpdate is [OpenSSL] in TLS 1.3 with KeyUpdates: after the
// exchange of payload i, for each i of after, the server sends a
// KeyUpdate asking for one back (s_server's "K" command); the client's
// KeyUpdate follows as soon as it reads the server's, before its next
// data, so from payload i+1 on both directions use the next generation
// of traffic keys. i must be below len(payloads)-1; an i given twice
// makes two KeyUpdates in a row. Session.KeyUpdates is len(after).
func OpenSSLKeyUpdate(t testing.TB, suite string, payloads [][2][]byte, after ...int) *Session {
	t.Helper()
	for _, i := range after {
		if i < 0 || i >= len(payloads)-1 {
			t.Fatalf("KeyUpdate after payload %d of %d: it must be followed by one", i, len(payloads))
		}
	}
	return runOpenSSL(t, "1.3", suite, payloads, after)
}

// watched collects a process's output and says when it grows.
type watched struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func newWatched() *watched { return &watched{changed: make(chan struct{})} }

func (w *watched) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	close(w.changed)
	w.changed = make(chan struct{})
	return len(p), nil
}

func (w *watched) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.b.Bytes())
}

// wait waits until cond holds of the output, or ctx ends.
func (w *watched) wait(ctx context.Context, cond func([]byte) bool) error {
	for {
		w.mu.Lock()
		ok, ch := cond(w.b.Bytes()), w.changed
		w.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

var acceptLine = regexp.MustCompile(`ACCEPT (127\.0\.0\.1:\d+)\n`)

func runOpenSSL(t testing.TB, version, suite string, payloads [][2][]byte, keyUpdates []int) *Session {
	t.Helper()
	bin := Tool(t, "openssl")
	cfg := &tls.Config{}
	args := []string{"s_server", "-accept", "127.0.0.1:0", "-naccept", "1"}
	switch version {
	case "1.3":
		if !slices.Contains(TLS13Suites, suite) {
			t.Fatalf("no TLS 1.3 suite %q (want one of %v)", suite, TLS13Suites)
		}
		cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS13, tls.VersionTLS13
		args = append(args, "-tls1_3", "-ciphersuites", suite)
	case "1.2":
		if !slices.Contains(TLS12Suites, suite) {
			t.Fatalf("no TLS 1.2 suite %q (want one of %v)", suite, TLS12Suites)
		}
		cfg.MinVersion, cfg.MaxVersion = tls.VersionTLS12, tls.VersionTLS12
		args = append(args, "-tls1_2", "-cipher", suite)
	default:
		t.Fatalf("TLS version %q: want 1.2 or 1.3", version)
	}
	for i, p := range payloads {
		if len(p[1]) > 4096 || isCommand(p[1]) {
			t.Fatalf("server payload %d (%d bytes, starting %q): s_server would split it or read it as a command", i, len(p[1]), p[1][:1])
		}
	}
	certs := testcert.New(t, "openssl")
	dir := t.TempDir()
	keyLogPath := filepath.Join(dir, "server.keylog")
	args = append(args, "-cert", certs.ServerCert, "-key", certs.ServerKey, "-keylogfile", keyLogPath)

	ctx := testdeadline.Context(t)
	cmd := exec.Command(bin, args...)
	stdout, stderr := newWatched(), newWatched()
	cmd.Stdout, cmd.Stderr = stdout, stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("openssl %q: %v", args, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
	})
	fail := func(format string, a ...any) {
		t.Helper()
		t.Fatalf("%s\nopenssl %s\nstdout (its end):\n%s\nstderr (its end):\n%s", fmt.Sprintf(format, a...), strings.Join(args, " "), tail(stdout.Bytes()), tail(stderr.Bytes()))
	}
	var addr string
	if err := stdout.wait(ctx, func(b []byte) bool {
		m := acceptLine.FindSubmatch(b)
		if m != nil {
			addr = string(m[1])
		}
		return m != nil
	}); err != nil {
		fail("s_server did not say where it listens: %v", err)
	}
	ap := netip.MustParseAddrPort(addr)

	var dialer net.Dialer
	raw, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		fail("dialing s_server: %v", err)
	}
	rc := Record(raw)
	var goKeyLog syncBuffer
	cfg.RootCAs, cfg.ServerName, cfg.KeyLogWriter = certs.Pool, "127.0.0.1", &goKeyLog
	tc := tls.Client(rc, cfg)
	defer tc.Close()
	if err := tc.HandshakeContext(ctx); err != nil {
		fail("TLS handshake with s_server: %v", err)
	}
	st := tc.ConnectionState()
	want, _ := GoSuite(suite)
	if st.Version != cfg.MaxVersion || st.CipherSuite != want {
		fail("negotiated %s %s, want %s %s", tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite),
			tls.VersionName(cfg.MaxVersion), tls.CipherSuiteName(want))
	}

	pc := Record(tc)
	// The client reads all the time, so that a KeyUpdate is handled (and
	// answered) as soon as it comes.
	received := newWatched()
	readDone := make(chan error, 1)
	go func() {
		_, err := io.Copy(received, pc)
		readDone <- err
	}()
	s := &Session{Port: int(ap.Port()), Version: st.Version, CipherSuite: st.CipherSuite}
	// waitRaw waits until n bytes of direction d have been recorded.
	waitRaw := func(what string, d capture.Dir, n int64) {
		t.Helper()
		for streamLen(rc, d) < n {
			select {
			case <-ctx.Done():
				fail("waiting for %s: %v", what, ctx.Err())
			case err := <-readDone:
				fail("waiting for %s, the client's reading ended: %v", what, err)
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	for i, p := range payloads {
		if len(p[0]) > 0 {
			if _, err := pc.Write(p[0]); err != nil {
				fail("client payload %d: %v", i, err)
			}
			s.Plaintext[capture.ClientToServer] = append(s.Plaintext[capture.ClientToServer], p[0]...)
		}
		if len(p[1]) > 0 {
			if _, err := stdin.Write(p[1]); err != nil {
				fail("server payload %d to s_server: %v", i, err)
			}
			s.Plaintext[capture.ServerToClient] = append(s.Plaintext[capture.ServerToClient], p[1]...)
			n := len(s.Plaintext[capture.ServerToClient])
			if err := received.wait(ctx, func(b []byte) bool { return len(b) >= n }); err != nil {
				fail("the client received %d of the server's %d bytes: %v", len(received.Bytes()), n, err)
			}
		}
		for range count(keyUpdates, i) {
			// s_server reads "K\n" alone (the client has all it sent), sends
			// a KeyUpdate (raw bytes to the client), which the client
			// answers with its own (raw bytes to the server).
			sc, cs := streamLen(rc, capture.ServerToClient), streamLen(rc, capture.ClientToServer)
			if _, err := io.WriteString(stdin, "K\n"); err != nil {
				fail("KeyUpdate command to s_server: %v", err)
			}
			waitRaw("the server's KeyUpdate", capture.ServerToClient, sc+1)
			waitRaw("the client's KeyUpdate", capture.ClientToServer, cs+1)
			s.KeyUpdates++
		}
	}
	if got := received.Bytes(); !bytes.Equal(got, s.Plaintext[capture.ServerToClient]) {
		fail("the client received %d bytes, not the %d the server sent", len(got), len(s.Plaintext[capture.ServerToClient]))
	}
	if err := pc.Close(); err != nil {
		fail("closing the client: %v", err)
	}
	select {
	case err := <-exited:
		exited <- err // for the cleanup
	case <-ctx.Done():
		fail("s_server did not exit after the connection closed")
	}
	// s_server writes what it reads to its output, where its own lines,
	// buffered, may come out in the middle.
	if n := subsequence(s.Plaintext[capture.ClientToServer], stdout.Bytes()); n < len(s.Plaintext[capture.ClientToServer]) {
		fail("s_server printed the client's bytes up to %d of %d", n, len(s.Plaintext[capture.ClientToServer]))
	}
	if s.KeyLog, err = os.ReadFile(keyLogPath); err != nil {
		t.Fatalf("s_server's key log: %v", err)
	}
	have := map[string]bool{}
	for _, l := range keyLogLines(s.KeyLog) {
		have[l] = true
	}
	for _, l := range keyLogLines(goKeyLog.Bytes()) {
		if !have[l] {
			fail("Go's key log line %q is not in s_server's:\n%s", l, s.KeyLog)
		}
	}
	s.Recordings, s.Plain = []*Recording{rc.Recording()}, []*Recording{pc.Recording()}
	return s
}

// count returns how many times v is in s.
func count(s []int, v int) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// subsequence returns how many bytes of a, from the start, are found in
// b in order (len(a) when a is a subsequence of b).
func subsequence(a, b []byte) int {
	n := 0
	for _, c := range b {
		if n < len(a) && a[n] == c {
			n++
		}
	}
	return n
}

// tail returns the last 2,000 bytes of b, for messages.
func tail(b []byte) []byte {
	if len(b) > 2000 {
		return append([]byte("…"), b[len(b)-2000:]...)
	}
	return b
}

// isCommand reports whether s_server would take p, read from its input,
// for a command.
func isCommand(p []byte) bool {
	switch {
	case len(p) == 0:
		return false
	case strings.IndexByte("QqPS", p[0]) >= 0:
		return true
	case strings.IndexByte("BrRkKc", p[0]) >= 0:
		return len(p) == 1 || p[1] == '\n' || p[1] == '\r'
	}
	return false
}

// streamLen returns the number of bytes of direction d recorded on c.
func streamLen(c *Conn, d capture.Dir) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, ch := range c.rec.Chunks {
		if ch.Dir == d {
			n += int64(len(ch.Data))
		}
	}
	return n
}
