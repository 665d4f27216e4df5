package server

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/manifester/manifester/internal/testdeadline"
)

// chanListener is a listener whose connections the test hands it.
type chanListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newChanListener() *chanListener {
	return &chanListener{conns: make(chan net.Conn, 8), closed: make(chan struct{})}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error   { l.once.Do(func() { close(l.closed) }); return nil }
func (l *chanListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// pipeConn is one end of a pipe, the other end closed with it.
func pipeConn(t *testing.T) net.Conn {
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return a
}

// waitFor waits until cond holds, for as long as the test binary allows:
// a safety net, not a measurement.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := testdeadline.Deadline(t)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

type accepted struct {
	c   net.Conn
	err error
}

// TestLimitListener: with two connections open, a third is held (counted,
// logged) until one closes; closing a connection twice frees one slot;
// closing the listener lets a held connection go.
func TestLimitListener(t *testing.T) {
	var counts connCounts
	var log syncBuffer
	inner := newChanListener()
	l := newLimitListener(inner, 2, &counts, &log)
	for range 3 {
		inner.conns <- pipeConn(t)
	}
	c1, err1 := l.Accept()
	c2, err2 := l.Accept()
	if err1 != nil || err2 != nil || counts.open.Load() != 2 {
		t.Fatalf("two accepts: %v, %v, %d open", err1, err2, counts.open.Load())
	}
	third := make(chan accepted, 1)
	go func() {
		c, err := l.Accept()
		third <- accepted{c, err}
	}()
	waitFor(t, "the third connection waits", func() bool { return counts.waiting.Load() == 1 })
	select {
	case a := <-third:
		t.Fatalf("a third connection was accepted with two open (%v)", a.err)
	default:
	}
	if counts.open.Load() != 2 || counts.waited.Load() != 1 || !strings.Contains(log.String(), "connection limit 2 reached") {
		t.Errorf("open %d, waited %d, log %q", counts.open.Load(), counts.waited.Load(), log.String())
	}
	c1.Close()
	c1.Close() // a second close frees nothing more
	a := <-third
	if a.err != nil || counts.open.Load() != 2 || counts.waiting.Load() != 0 {
		t.Fatalf("after a close: %v, %d open, %d waiting; want the third accepted, 2 open", a.err, counts.open.Load(), counts.waiting.Load())
	}
	c2.Close()
	c2.Close()
	if counts.open.Load() != 1 || len(l.slots) != 1 {
		t.Errorf("after closing twice: %d open, %d slots held; want 1", counts.open.Load(), len(l.slots))
	}
	// A connection held when the listener closes is let go.
	inner.conns <- pipeConn(t)
	c4, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c4.Close()
	held := pipeConn(t)
	inner.conns <- held
	go func() {
		c, err := l.Accept()
		third <- accepted{c, err}
	}()
	waitFor(t, "the fifth connection waits", func() bool { return counts.waiting.Load() == 1 })
	l.Close()
	if a := <-third; !errors.Is(a.err, net.ErrClosed) {
		t.Errorf("Accept of a held connection after Close: %v, want net.ErrClosed", a.err)
	}
	if _, err := held.Write([]byte("x")); err == nil {
		t.Errorf("the held connection is still open")
	}
	if n := strings.Count(log.String(), "\n"); n != 2 {
		t.Errorf("%d log lines for 2 waits, want 2 (the 1st and 2nd): %q", n, log.String())
	}
}

// TestServeConnLimit serves with room for one connection: a second
// client waits, counted and logged, while the first is in the middle of
// a request; once the first's answer is sent and it is idle between
// requests, it is closed to make room and the second is answered. Serve
// used to accept connections without limit.
func TestServeConnLimit(t *testing.T) {
	srv := New(testSite(t))
	srv.Limits.MaxConns = 1
	var log syncBuffer
	srv.Log = &log
	addr := serveLocal(t, srv)
	get := "GET / HTTP/1.1\r\nHost: x\r\n\r\n"

	first := dialDeadline(t, addr)
	// Half a request: the connection is busy, not idle.
	if _, err := first.Write([]byte(get[:16])); err != nil {
		t.Fatal(err)
	}
	second := dialDeadline(t, addr)
	if _, err := second.Write([]byte(get)); err != nil {
		t.Fatal(err)
	}
	// The wait is counted, then logged.
	waitFor(t, "the second client waits, logged", func() bool {
		return srv.ConnStats().Waiting == 1 && strings.Contains(log.String(), "connection limit 1 reached")
	})
	if st := srv.ConnStats(); st.Open != 1 || st.Waited != 1 || st.Reclaimed != 0 {
		t.Errorf("with one client held: %+v; want 1 open, 1 waited, none reclaimed", st)
	}
	if _, err := first.Write([]byte(get[16:])); err != nil {
		t.Fatal(err)
	}
	fr := bufio.NewReader(first)
	resp, err := http.ReadResponse(fr, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("first client: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	resp, err = http.ReadResponse(bufio.NewReader(second), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("second client, once the first was idle: %v %v", resp, err)
	}
	resp.Body.Close()
	if _, err := fr.ReadByte(); err == nil {
		t.Errorf("the first client's idle connection is still open")
	}
	if st := srv.ConnStats(); st.Open != 1 || st.Waiting != 0 || st.Waited != 1 || st.Reclaimed != 1 {
		t.Errorf("second client served: %+v; want 1 open, none waiting, 1 waited, 1 reclaimed", st)
	}
}

// TestServeConnLimitIdle: connections held open and idle cannot keep a
// new client out: with room for two, both idle, a third is answered at
// once in place of the one idle longer, and the other stays open.
func TestServeConnLimitIdle(t *testing.T) {
	srv := New(testSite(t))
	srv.Limits.MaxConns = 2
	addr := serveLocal(t, srv)
	get := "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	ask := func(c net.Conn, r *bufio.Reader) {
		t.Helper()
		if _, err := c.Write([]byte(get)); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET: %v %v", resp, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	older, newer := dialDeadline(t, addr), dialDeadline(t, addr)
	or, nr := bufio.NewReader(older), bufio.NewReader(newer)
	ask(older, or)
	ask(newer, nr)
	third := dialDeadline(t, addr)
	ask(third, bufio.NewReader(third))
	if _, err := or.ReadByte(); err == nil {
		t.Errorf("the connection idle longer is still open")
	}
	ask(newer, nr) // still open, and answered
	if st := srv.ConnStats(); st.Open != 2 || st.Waited != 0 || st.Reclaimed != 1 {
		t.Errorf("%+v; want 2 open, none waited, 1 reclaimed", st)
	}
}

// dialDeadline dials addr with the test binary's deadline on the
// connection, closed at the test's end.
func dialDeadline(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(testdeadline.Deadline(t))
	return c
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
