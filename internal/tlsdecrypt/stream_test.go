package tlsdecrypt

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/manifester/manifester/internal/testcert"
)

// chunk is bytes one side wrote, as the wire carried them.
type chunk struct {
	dir  int // 0: the TLS client's, 1: the server's
	data []byte
}

// wire records what passes a client's connection, in order.
type wire struct {
	net.Conn
	mu     sync.Mutex
	chunks []chunk
}

func (w *wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.chunks = append(w.chunks, chunk{0, append([]byte(nil), p...)})
	w.mu.Unlock()
	return w.Conn.Write(p)
}

func (w *wire) Read(p []byte) (int, error) {
	n, err := w.Conn.Read(p)
	if n > 0 {
		w.mu.Lock()
		w.chunks = append(w.chunks, chunk{1, append([]byte(nil), p[:n]...)})
		w.mu.Unlock()
	}
	return n, err
}

// session is a recorded TLS connection made by Go's crypto/tls.
type session struct {
	chunks []chunk
	keylog []byte
	sent   [2][]byte // the application bytes each side wrote
	state  tls.ConnectionState
	err    error // the handshake's, when it failed
}

// record runs a TLS session over loopback TCP: the client writes its
// messages, the server answers each with its own, and both close.
func record(t *testing.T, client, server *tls.Config, msgs int) *session {
	t.Helper()
	if server.Certificates == nil {
		certs := testcert.New(t, "broker")
		server.Certificates = []tls.Certificate{certs.Server}
		client.RootCAs = certs.Pool
	}
	client.ServerName = "localhost"
	var keylog bytes.Buffer
	client.KeyLogWriter = &keylog
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := &session{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		tc := tls.Server(c, server)
		if tc.Handshake() != nil {
			return
		}
		buf := make([]byte, 1<<16)
		for k := 0; ; k++ {
			n, err := tc.Read(buf)
			if err != nil {
				return
			}
			reply := bytes.Repeat([]byte(fmt.Sprintf("answer %d to %d bytes ✓ ", k, n)), k%7+1)
			s.sent[1] = append(s.sent[1], reply...)
			if _, err := tc.Write(reply); err != nil {
				return
			}
		}
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	w := &wire{Conn: raw}
	tc := tls.Client(w, client)
	if s.err = tc.Handshake(); s.err == nil {
		s.state = tc.ConnectionState()
		buf := make([]byte, 1<<16)
		for k := 0; k < msgs; k++ {
			msg := bytes.Repeat([]byte{byte(k), 'k', 0xc3, 0xa9}, 1+k*k*97%5000)
			s.sent[0] = append(s.sent[0], msg...)
			if _, err := tc.Write(msg); err != nil {
				t.Fatal(err)
			}
			if _, err := tc.Read(buf); err != nil {
				t.Fatal(err)
			}
		}
		// close_notify; the server then stops, and the answers not read
		// yet are read (and so recorded) to the end.
		if err := tc.CloseWrite(); err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, tc)
	}
	tc.Close()
	raw.Close()
	wg.Wait()
	s.chunks = w.chunks
	s.keylog = keylog.Bytes()
	return s
}

// decrypt feeds a session's chunks to a Stream, each split into pieces
// of at most split bytes (0: whole), and returns each direction's
// plaintext and the stream.
func decrypt(t *testing.T, s *session, keylog []byte, split int) ([2][]byte, *Stream) {
	t.Helper()
	keys := NewKeyLog()
	if err := keys.Read(bytes.NewReader(keylog), "keylog"); err != nil {
		t.Fatal(err)
	}
	st := NewStream(keys)
	var out [2][]byte
	for _, c := range s.chunks {
		d := c.data
		for len(d) > 0 {
			n := len(d)
			if split > 0 {
				n = min(n, split)
			}
			plain, _, _ := st.Feed(c.dir, d[:n])
			out[c.dir] = append(out[c.dir], plain...)
			d = d[n:]
		}
	}
	return out, st
}

func TestDecryptGoSessions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		client  *tls.Config
		server  *tls.Config
		session string
	}{
		{"TLS 1.3", &tls.Config{}, &tls.Config{}, "TLS 1.3 TLS_AES_128_GCM_SHA256"},
		{"TLS 1.3 after a HelloRetryRequest", &tls.Config{}, &tls.Config{CurvePreferences: []tls.CurveID{tls.CurveP256}}, "TLS 1.3 TLS_AES_128_GCM_SHA256"},
		{"TLS 1.2 AES-128-GCM", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}, &tls.Config{}, "TLS 1.2 TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
		{"TLS 1.2 AES-256-GCM", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}}, &tls.Config{}, "TLS 1.2 TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
		{"TLS 1.2 ChaCha20-Poly1305", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}}, &tls.Config{}, "TLS 1.2 TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := record(t, tc.client, tc.server, 12)
			if s.err != nil {
				t.Fatal(s.err)
			}
			if got := tls.CipherSuiteName(s.state.CipherSuite); !strings.HasSuffix(tc.session, got) {
				t.Fatalf("negotiated %s, the test wants %s", got, tc.session)
			}
			if tc.server.CurvePreferences != nil && !s.state.HelloRetryRequest {
				t.Fatal("no HelloRetryRequest was made")
			}
			for _, split := range []int{0, 1, 7, 1000} {
				out, st := decrypt(t, s, s.keylog, split)
				for d := range 2 {
					if !bytes.Equal(out[d], s.sent[d]) {
						t.Errorf("split %d: direction %d: decrypted %d bytes, sent %d (equal prefix %v)", split, d, len(out[d]), len(s.sent[d]),
							bytes.HasPrefix(s.sent[d], out[d]))
					}
					if err := st.Err(d); err != nil {
						t.Errorf("split %d: direction %d stopped: %v", split, d, err)
					}
				}
				if got := st.Session(); got != tc.session {
					t.Errorf("Session() = %q, want %q", got, tc.session)
				}
				if st.Client() != 0 {
					t.Errorf("Client() = %d, want 0", st.Client())
				}
			}
		})
	}
}

// reason returns the Reason of direction d's error.
func reason(t *testing.T, st *Stream, d int) string {
	t.Helper()
	var e *Error
	if !errors.As(st.Err(d), &e) {
		t.Fatalf("direction %d: error %v, not an *Error", d, st.Err(d))
	}
	return e.Reason
}

func TestDecryptFailures(t *testing.T) {
	s13 := record(t, &tls.Config{}, &tls.Config{}, 3)
	s12 := record(t, &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}, &tls.Config{}, 3)

	t.Run("no key", func(t *testing.T) {
		for _, s := range []*session{s13, s12} {
			out, st := decrypt(t, s, nil, 0)
			for d := range 2 {
				if len(out[d]) != 0 || reason(t, st, d) != ReasonNoKey {
					t.Errorf("direction %d: %d bytes, error %v", d, len(out[d]), st.Err(d))
				}
			}
		}
	})
	t.Run("another session's key", func(t *testing.T) {
		// The key log of one session under the client random of another.
		other := record(t, &tls.Config{}, &tls.Config{}, 1)
		random := func(keylog []byte) string { return strings.Fields(string(keylog))[1] }
		swapped := strings.ReplaceAll(string(other.keylog), random(other.keylog), random(s13.keylog))
		_, st := decrypt(t, s13, []byte(swapped), 0)
		for d := range 2 {
			if got := reason(t, st, d); got != ReasonAuth {
				t.Errorf("direction %d: %v", d, st.Err(d))
			}
		}
	})
	t.Run("a damaged record", func(t *testing.T) {
		for _, s := range []*session{s13, s12} {
			damaged := &session{chunks: append([]chunk(nil), s.chunks...)}
			last := &damaged.chunks[len(damaged.chunks)-2]
			data := append([]byte(nil), last.data...)
			data[len(data)-1] ^= 1
			last.data = data
			_, st := decrypt(t, damaged, s.keylog, 0)
			if got := reason(t, st, last.dir); got != ReasonAuth {
				t.Errorf("%v", st.Err(last.dir))
			}
		}
	})
	t.Run("mid-connection", func(t *testing.T) {
		// The capture begins after the handshake: the first chunks of
		// each direction with application data only.
		var late session
		seen := [2]int{}
		for _, c := range s13.chunks {
			seen[c.dir]++
			if seen[c.dir] > 3 {
				late.chunks = append(late.chunks, c)
			}
		}
		out, st := decrypt(t, &late, s13.keylog, 0)
		for d := range 2 {
			if len(out[d]) != 0 || reason(t, st, d) != ReasonNoHandshake {
				t.Errorf("direction %d: %d bytes, error %v", d, len(out[d]), st.Err(d))
			}
		}
	})
	t.Run("a gap in the handshake", func(t *testing.T) {
		keys := NewKeyLog()
		if err := keys.Read(bytes.NewReader(s13.keylog), "keylog"); err != nil {
			t.Fatal(err)
		}
		st := NewStream(keys)
		st.Feed(0, s13.chunks[0].data) // the ClientHello
		_, err := st.Gap(1, 100)
		var e *Error
		if !errors.As(err, &e) || e.Reason != ReasonGap || e.Offset != 0 {
			t.Errorf("Gap: %v", err)
		}
	})
	t.Run("a CBC suite", func(t *testing.T) {
		s := record(t, &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}}, &tls.Config{}, 1)
		_, st := decrypt(t, s, s.keylog, 0)
		for d := range 2 {
			if got := reason(t, st, d); got != ReasonSuite || !strings.Contains(st.Err(d).Error(), "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA") {
				t.Errorf("direction %d: %v", d, st.Err(d))
			}
		}
	})
	t.Run("not TLS", func(t *testing.T) {
		st := NewStream(NewKeyLog())
		_, dropped, err := st.Feed(0, []byte("\x00\x00\x00\x0c\x00\x12\x00\x03\x00\x00\x00\x01"))
		var e *Error
		if !errors.As(err, &e) || e.Reason != ReasonNotTLS || dropped != 12 {
			t.Errorf("%v, %d dropped", err, dropped)
		}
		if _, dropped, err := st.Feed(0, []byte("more")); err != nil || dropped != 4 {
			t.Errorf("after the stop: %v, %d dropped", err, dropped)
		}
	})
}

func TestKeyLogErrors(t *testing.T) {
	r64 := strings.Repeat("ab", 32)
	for _, tc := range []struct{ text, want string }{
		{"CLIENT_RANDOM " + r64 + " " + strings.Repeat("cd", 48) + "\n", ""},
		{"# a comment\n\r\nRSA 0011223344556677 " + strings.Repeat("cd", 48) + "\n", ""},
		{"CLIENT_RANDOM " + r64 + "\n", "keylog:1: 2 fields"},
		{"\nCLIENT_RANDOM abc " + r64 + "\n", "keylog:2: the client random: encoding/hex: odd length hex string"},
		{"CLIENT_RANDOM " + r64[:62] + " " + r64 + "\n", "keylog:1: CLIENT_RANDOM: a client random of 31 bytes, want 32"},
		{"SERVER_TRAFFIC_SECRET_0 " + r64 + " " + strings.Repeat("00", 65) + "\n", "keylog:1: a secret of 130 hex digits"},
		{"CLIENT_RANDOM " + r64 + " zz\n", "keylog:1: the secret: encoding/hex: invalid byte"},
		{strings.Repeat("x", MaxLine+1), "keylog:1: a line longer than 4096 bytes"},
	} {
		k := NewKeyLog()
		err := k.Read(strings.NewReader(tc.text), "keylog")
		if tc.want == "" {
			if err != nil {
				t.Errorf("%q: %v", tc.text, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, ErrLine) {
			t.Errorf("%.40q: error %v, want %q", tc.text, err, tc.want)
		}
	}
}

// A reader that fails is said as a read error, not a line error.
func TestKeyLogReadError(t *testing.T) {
	err := NewKeyLog().Read(io.MultiReader(strings.NewReader("# x\n"), errReader{}), "keylog")
	if err == nil || errors.Is(err, ErrLine) || !strings.Contains(err.Error(), "reading keylog") {
		t.Errorf("%v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("broken") }

// TestDecryptAfterGap: a gap in the application data (a chunk the
// capture lost, cutting records anywhere; one, three in a row, or two
// apart) is followed by the next record and its sequence number: every
// byte after the lost records decrypts, and GapBefore says exactly how
// much plaintext each gap took.
func TestDecryptAfterGap(t *testing.T) {
	for _, tc := range []struct {
		name   string
		client *tls.Config
	}{
		{"TLS 1.3", &tls.Config{}},
		{"TLS 1.2 AES-GCM", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}}},
		{"TLS 1.2 ChaCha20-Poly1305", &tls.Config{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := record(t, tc.client, &tls.Config{}, 20)
			for dir := range 2 {
				var idx []int
				for k, c := range s.chunks {
					if c.dir == dir {
						idx = append(idx, k)
					}
				}
				for _, loss := range []struct {
					chunks []int
					head   bool // only the first half of each is lost: the next record starts inside the rest
				}{
					{idx[len(idx)/2 : len(idx)/2+1], false}, {idx[len(idx)/3 : len(idx)/3+3], false},
					{[]int{idx[len(idx)/4], idx[3*len(idx)/4]}, false}, {[]int{idx[len(idx)/4], idx[3*len(idx)/4]}, true},
				} {
					lose := loss.chunks
					keys := NewKeyLog()
					if err := keys.Read(bytes.NewReader(s.keylog), "keylog"); err != nil {
						t.Fatal(err)
					}
					st := NewStream(keys)
					// pieces are the plaintext between gaps, losts what each
					// gap took.
					pieces, losts := [][]byte{nil}, []int64(nil)
					for k, c := range s.chunks {
						data := c.data
						if slices.Contains(lose, k) {
							n := len(data)
							if loss.head {
								n /= 2
							}
							if _, err := st.Gap(c.dir, int64(n)); err != nil {
								t.Fatal(err)
							}
							if data = data[n:]; len(data) == 0 {
								continue
							}
						}
						plain, _, err := st.Feed(c.dir, data)
						if err != nil {
							t.Fatalf("direction %d: %v", c.dir, err)
						}
						if c.dir != dir {
							continue
						}
						if g, ok := st.GapBefore(c.dir); ok {
							pieces, losts = append(pieces, nil), append(losts, g)
						}
						pieces[len(pieces)-1] = append(pieces[len(pieces)-1], plain...)
					}
					// The pieces and the gaps between them tile what was sent.
					sent, pos := s.sent[dir], int64(0)
					ok := len(losts) > 0 && len(pieces[len(pieces)-1]) > 0
					for p, piece := range pieces {
						if p > 0 {
							pos += losts[p-1]
						}
						ok = ok && pos+int64(len(piece)) <= int64(len(sent)) && bytes.Equal(sent[pos:pos+int64(len(piece))], piece)
						pos += int64(len(piece))
					}
					if !ok || pos != int64(len(sent)) {
						t.Errorf("direction %d, chunks %v lost (heads only: %v): %d pieces, gaps of %v, %d sent", dir, lose, loss.head, len(pieces), losts, len(sent))
					}
				}
			}
		})
	}
}

// TestResyncBounded: after a gap, bytes shaped like records that never
// authenticate cost trial decryption in proportion to them, and the
// direction stops, saying so, rather than searching on.
func TestResyncBounded(t *testing.T) {
	s := record(t, &tls.Config{}, &tls.Config{}, 3)
	keys := NewKeyLog()
	if err := keys.Read(bytes.NewReader(s.keylog), "keylog"); err != nil {
		t.Fatal(err)
	}
	st := NewStream(keys)
	for _, c := range s.chunks[:len(s.chunks)-2] {
		st.Feed(c.dir, c.data)
	}
	if _, err := st.Gap(1, 10); err != nil {
		t.Fatal(err)
	}
	fake := bytes.Repeat(append([]byte{23, 3, 3, 0, 64}, bytes.Repeat([]byte{0xa5}, 64)...), 20000)
	fed, stopped := 0, false
	for len(fake) > 0 && !stopped {
		k := min(1460, len(fake))
		_, _, err := st.Feed(1, fake[:k])
		fed += k
		fake = fake[k:]
		var e *Error
		if err != nil {
			if !errors.As(err, &e) || e.Reason != ReasonGap {
				t.Fatalf("stopped with %v", err)
			}
			stopped = true
		}
	}
	if !stopped {
		t.Fatalf("still searching after %d bytes", fed)
	}
	if w, limit := st.sides[1].work, int64(resyncBase+resyncPerByte*(fed+10+2*69)); w > limit {
		t.Errorf("%d bytes of trial decryption for %d bytes of input, more than %d", w, fed, limit)
	}
}

// TestDecryptResumed: a session resumed from a ticket decrypts: TLS
// 1.3's PSK handshake with the key log lines it writes; TLS 1.2's
// abbreviated handshake, which writes none (and where the server changes
// cipher first), with the master secret of the session it resumes.
func TestDecryptResumed(t *testing.T) {
	for _, max := range []uint16{tls.VersionTLS13, tls.VersionTLS12} {
		client := &tls.Config{MaxVersion: max, ClientSessionCache: tls.NewLRUClientSessionCache(4)}
		server := &tls.Config{}
		first := record(t, client, server, 2)
		second := record(t, client, server, 4)
		if first.err != nil || second.err != nil || !second.state.DidResume {
			t.Fatalf("TLS %x: %v, %v; resumed %v", max, first.err, second.err, second.state.DidResume)
		}
		// A client's key log holds every session it made: the resumed
		// one's secret is its original's.
		keylog := append(append([]byte(nil), first.keylog...), second.keylog...)
		for _, s := range []*session{first, second} {
			out, st := decrypt(t, s, keylog, 0)
			for d := range 2 {
				if !bytes.Equal(out[d], s.sent[d]) || st.Err(d) != nil {
					t.Errorf("TLS %x, resumed %v, direction %d: %d of %d bytes, %v", max, s.state.DidResume, d, len(out[d]), len(s.sent[d]), st.Err(d))
				}
			}
		}
	}
}

// TestJoinMidway: a TLS 1.3 connection captured after its handshake (and
// after some of its records, the first captured bytes anywhere in a
// record) is read from its first whole record on: each direction's
// plaintext is a tail of what its side sent, the session found by trying
// the key log's traffic secrets; a key log without the session, and a
// TLS 1.2 session, are said (once a budget is spent: a whole search, of
// every generation of every secret, is TestJoinMidwayGenerationBound's).
func TestJoinMidway(t *testing.T) {
	s := record(t, &tls.Config{}, &tls.Config{}, 30)
	other := record(t, &tls.Config{}, &tls.Config{}, 1)
	s12 := record(t, &tls.Config{MaxVersion: tls.VersionTLS12}, &tls.Config{}, 10)
	keylog := append(append(append([]byte(nil), other.keylog...), s.keylog...), s12.keylog...)
	feed := func(sess *session, skip int, keylog []byte, budget *int64) ([2][]byte, *Stream, [2]int) {
		keys := NewKeyLog()
		if err := keys.Read(bytes.NewReader(keylog), "keylog"); err != nil {
			t.Fatal(err)
		}
		st := NewStream(keys)
		st.JoinMidway(budget)
		var out [2][]byte
		var dropped [2]int
		var started [2]bool
		for _, c := range sess.chunks[skip:] {
			data := c.data
			if !started[c.dir] && len(data) > 7 {
				data = data[3:] // the capture begins inside a record
			}
			started[c.dir] = true
			plain, n, _ := st.Feed(c.dir, data)
			out[c.dir] = append(out[c.dir], plain...)
			dropped[c.dir] += n
		}
		return out, st, dropped
	}
	for _, skip := range []int{len(s.chunks) / 3, len(s.chunks) / 2} {
		out, st, _ := feed(s, skip, keylog, nil)
		for d := range 2 {
			if st.Err(d) != nil || len(out[d]) == 0 || !bytes.HasSuffix(s.sent[d], out[d]) {
				t.Errorf("skip %d, direction %d: %d bytes, a tail of the %d sent: %v; %v", skip, d, len(out[d]), len(s.sent[d]), bytes.HasSuffix(s.sent[d], out[d]), st.Err(d))
			}
		}
		if st.Session() != "TLS 1.3 TLS_AES_128_GCM_SHA256" || st.Client() != 0 || !st.Midway() {
			t.Errorf("session %q, client %d", st.Session(), st.Client())
		}
	}
	// Only the other session's secrets, and a TLS 1.2 session, with a
	// budget of a session's generation 0 in both suites.
	for _, tc := range []struct {
		sess   *session
		keylog []byte
	}{{s, other.keylog}, {s12, keylog}} {
		budget := int64(4 * MidwayRecords)
		out, st, dropped := feed(tc.sess, len(tc.sess.chunks)/2, tc.keylog, &budget)
		for d := range 2 {
			if len(out[d]) != 0 || reason(t, st, d) != ReasonNoKey || dropped[d] == 0 {
				t.Errorf("direction %d: %d bytes, %d dropped, %v", d, len(out[d]), dropped[d], st.Err(d))
			}
		}
	}
}

// TestJoinMidwayBudget: the trials of joining midway spend a shared
// budget, and stop, saying so, when it is spent.
func TestJoinMidwayBudget(t *testing.T) {
	s := record(t, &tls.Config{}, &tls.Config{}, 20)
	other := record(t, &tls.Config{}, &tls.Config{}, 1)
	keys := NewKeyLog()
	if err := keys.Read(bytes.NewReader(other.keylog), "keylog"); err != nil {
		t.Fatal(err)
	}
	budget := int64(5000)
	st := NewStream(keys)
	st.JoinMidway(&budget)
	for _, c := range s.chunks[len(s.chunks)/2:] {
		st.Feed(c.dir, c.data)
	}
	err := st.Err(0)
	if err == nil || !strings.Contains(err.Error(), "the trials this input allows are spent") || budget >= 0 || budget < -maxMidwayCharge {
		t.Errorf("%v; budget left %d", err, budget)
	}
	// With no budget, a stream's own bound stops it (here, two secrets'
	// trials before it).
	st = NewStream(keys)
	st.JoinMidway(nil)
	st.work = maxMidwayWork - 2*MidwayRecords
	for _, c := range s.chunks[len(s.chunks)/2:] {
		st.Feed(c.dir, c.data)
	}
	for d := range 2 {
		if err := st.Err(d); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("within %d trials", maxMidwayWork)) {
			t.Errorf("direction %d: %v", d, err)
		}
	}
	if st.work > maxMidwayWork+maxMidwayCharge {
		t.Errorf("%d trials, more than the bound of %d", st.work, maxMidwayWork)
	}
}

// maxMidwayCharge is the most that one charge of joining work may
// overspend a budget by: a record's opening (and GHASH) or a batch of
// sequence numbers.
const maxMidwayCharge = 2 * (maxRecord/8 + 1)

// A key log saved by a Windows editor or PowerShell starts with a UTF-8
// byte order mark and ends its lines with CRLF: its first line is a key
// like the others, not a line of an unknown label silently set aside.
func TestKeyLogBOM(t *testing.T) {
	r64 := strings.Repeat("ab", 32)
	text := "\ufeffCLIENT_RANDOM " + r64 + " " + strings.Repeat("cd", 48) + "\r\n"
	k := NewKeyLog()
	if err := k.Read(strings.NewReader(text), "keylog"); err != nil {
		t.Fatal(err)
	}
	if k.Sessions() != 1 || k.Unused() != 0 {
		t.Errorf("%d sessions, %d unused lines; want 1 and 0", k.Sessions(), k.Unused())
	}
	// PowerShell 5's ">" writes UTF-16: its lines are keys as well, not
	// lines of unknown labels set aside.
	var u16 []byte
	for _, c := range text { // ASCII after the mark
		u16 = append(u16, byte(c), 0)
	}
	u16 = append([]byte{0xff, 0xfe}, u16[2:]...) // U+FEFF as FF FE
	k = NewKeyLog()
	if err := k.Read(bytes.NewReader(u16), "keylog"); err != nil {
		t.Fatal(err)
	}
	if k.Sessions() != 1 || k.Unused() != 0 {
		t.Errorf("UTF-16: %d sessions, %d unused lines; want 1 and 0", k.Sessions(), k.Unused())
	}
}
