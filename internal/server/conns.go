package server

import (
	"fmt"
	"io"
	"math/bits"
	"net"
	"sync"
	"sync/atomic"
)

// MaxConns is how many connections [Server.Serve] keeps open at once by
// default (see [Limits]). Answers of up to MaxDecodeBody are not counted
// against MaxPendingAnswers, so this also bounds what slow readers can
// hold of them: 256 MiB, as much as MaxPendingAnswers.
const MaxConns = 256

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
}

// connCounts are a server's connection counters.
type connCounts struct {
	open, waiting, waited atomic.Int64
}

// ConnStats returns the connection counts of the server's listener.
func (s *Server) ConnStats() ConnStats {
	return ConnStats{Open: s.conns.open.Load(), Waiting: s.conns.waiting.Load(), Waited: s.conns.waited.Load()}
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
	done   chan struct{}
	once   sync.Once
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
	l.counts.waiting.Add(1)
	defer l.counts.waiting.Add(-1)
	l.logWait(c.RemoteAddr(), l.counts.waited.Add(1))
	select {
	case l.slots <- struct{}{}:
		return l.admit(c), nil
	case <-l.done:
		c.Close()
		return nil, net.ErrClosed
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
