package server

import (
	"fmt"
	"io"
	"math/bits"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// MaxConns is how many connections [Server.Serve] keeps open at once by
// default (see [Limits]): each costs a goroutine and its buffers (about
// 16 KiB while idle), and what a request may hold besides is bounded by
// the decode handlers' own budgets (bodies, answers, slots). When a
// connection has to wait for the limit, the connection idle longest
// between requests is closed to make room (as a client closes idle
// keep-alive connections, and retries a request that finds one closed),
// so that connections held open and idle cannot keep others out.
const MaxConns = 1024

// ConnStats counts the connections of [Server.Serve].
type ConnStats struct {
	// Open is the connections open now (at most the limit).
	Open int64
	// Waiting is the connections accepted and held until one closes,
	// now (0 or 1: beyond that, they wait in the listen backlog, which
	// the server cannot see).
	Waiting int64
	// Waited is the connections that had to wait for the limit, in all.
	Waited int64
	// Reclaimed is the idle connections closed to make room for one
	// that waited, in all.
	Reclaimed int64
}

// connCounts are a server's connection counters.
type connCounts struct {
	open, waiting, waited, reclaimed atomic.Int64
}

// ConnStats returns the connection counts of the server's listener.
func (s *Server) ConnStats() ConnStats {
	return ConnStats{Open: s.conns.open.Load(), Waiting: s.conns.waiting.Load(), Waited: s.conns.waited.Load(),
		Reclaimed: s.conns.reclaimed.Load()}
}

// idleConns are a server's connections idle between requests (kept
// alive), with the order in which they became idle, so that a connection
// waiting for the limit can take the place of the one idle longest.
type idleConns struct {
	mu   sync.Mutex
	seq  uint64
	idle map[net.Conn]uint64
	// idled has a value when a connection has become idle since it was
	// last read.
	idled chan struct{}
}

func newIdleConns() *idleConns {
	return &idleConns{idle: map[net.Conn]uint64{}, idled: make(chan struct{}, 1)}
}

// state follows a connection's state (http.Server.ConnState).
func (ic *idleConns) state(c net.Conn, st http.ConnState) {
	ic.mu.Lock()
	defer ic.mu.Unlock()
	if st != http.StateIdle {
		delete(ic.idle, c)
		return
	}
	ic.seq++
	ic.idle[c] = ic.seq
	select {
	case ic.idled <- struct{}{}:
	default:
	}
}

// closeOldest closes the connection idle longest; false when none is
// idle. (A request that arrives on it at that moment finds it closed, as
// when a client's idle timeout and the server's cross: clients retry.)
func (ic *idleConns) closeOldest() bool {
	ic.mu.Lock()
	var oldest net.Conn
	var at uint64
	for c, seq := range ic.idle {
		if oldest == nil || seq < at {
			oldest, at = c, seq
		}
	}
	delete(ic.idle, oldest)
	ic.mu.Unlock()
	if oldest == nil {
		return false
	}
	oldest.Close()
	return true
}

// limitListener keeps at most cap(slots) of its connections open: a
// connection accepted beyond that is held (the client waits, as in the
// listen backlog) until one closes, and counted and logged. Unlike a
// refusal, a browser's request then goes through as soon as there is
// room.
type limitListener struct {
	net.Listener
	slots  chan struct{}
	counts *connCounts
	log    io.Writer // nil: no log
	// reclaim, when set, closes an idle connection to make room (false:
	// none is idle); idled, when set, says that a connection became idle.
	reclaim func() bool
	idled   <-chan struct{}
	done    chan struct{}
	once    sync.Once
}

func newLimitListener(ln net.Listener, max int, counts *connCounts, log io.Writer) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, max), counts: counts, log: log, done: make(chan struct{})}
}

// Accept returns the next connection once fewer than the limit are open.
func (l *limitListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	select {
	case l.slots <- struct{}{}:
		return l.admit(c), nil
	default:
	}
	if l.reclaim != nil && l.reclaim() {
		// The idle connection's close gave its slot back, unless another
		// took it meanwhile: then this one waits as below.
		l.counts.reclaimed.Add(1)
		select {
		case l.slots <- struct{}{}:
			return l.admit(c), nil
		default:
		}
	}
	// Logged, then counted as waiting: who sees it waiting sees the log.
	l.logWait(c.RemoteAddr(), l.counts.waited.Add(1))
	l.counts.waiting.Add(1)
	defer l.counts.waiting.Add(-1)
	for {
		select {
		case l.slots <- struct{}{}:
			return l.admit(c), nil
		case <-l.idled:
			// A connection became idle while this one waited: it
			// makes room as above.
			if l.reclaim != nil && l.reclaim() {
				l.counts.reclaimed.Add(1)
			}
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

// logWait says that the connection limit was reached, for the 1st, 2nd,
// 4th, 8th... connection that waits: a log that grows with the logarithm
// of the connections, however many there are.
func (l *limitListener) logWait(from net.Addr, n int64) {
	if l.log == nil || bits.OnesCount64(uint64(n)) != 1 {
		return
	}
	fmt.Fprintf(l.log, "connection limit %d reached: a connection from %s waits until one closes (%d so far)\n", cap(l.slots), from, n)
}

func (l *limitListener) admit(c net.Conn) net.Conn {
	l.counts.open.Add(1)
	return &limitConn{Conn: c, l: l}
}

// Close closes the listener and lets go of a connection waiting for room.
func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back when it is closed, once.
type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.counts.open.Add(-1)
		<-c.l.slots
	})
	return err
}
