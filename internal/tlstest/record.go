package tlstest

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/manifester/manifester/internal/capture"
)

// Chunk is the bytes of one Write to, or one Read from, a connection.
type Chunk struct {
	// Dir is capture.ClientToServer for bytes the client wrote and
	// capture.ServerToClient for bytes it read.
	Dir  capture.Dir
	Time time.Time
	Data []byte
}

// Recording is the raw bytes of one TCP connection as its client saw
// them, in order.
type Recording struct {
	Client, Server netip.AddrPort
	// Start is when recording began (the connection was established),
	// End when it was closed (zero while it is open).
	Start, End time.Time
	Chunks     []Chunk
	// Skips are byte ranges [WritePcap] leaves out (see [Recording.WithSkip]).
	Skips []Skip
}

// Skip is a byte range of one direction's stream: Offset counts from the
// direction's first byte.
type Skip struct {
	Dir       capture.Dir
	Offset, N int64
}

// WithSkip returns a copy of r whose capture ([WritePcap]) lacks the n
// bytes of direction d from offset on, as if the packets holding them had
// not been captured: the sequence numbers jump over them, and the other
// side's acknowledgements cover them.
func (r *Recording) WithSkip(d capture.Dir, offset, n int64) *Recording {
	c := *r
	c.Skips = append(append([]Skip(nil), r.Skips...), Skip{Dir: d, Offset: offset, N: n})
	return &c
}

// Stream returns the bytes of direction d, concatenated.
func (r *Recording) Stream(d capture.Dir) []byte {
	var b []byte
	for _, c := range r.Chunks {
		if c.Dir == d {
			b = append(b, c.Data...)
		}
	}
	return b
}

// Conn is a net.Conn that records what passes through it: bytes written
// are client-to-server, bytes read server-to-client (it is the client's
// end). Read and Write may be called from different goroutines. A
// write is recorded before it is handed to the connection, a read after
// it returns, so a response is always recorded after the request it
// answers.
type Conn struct {
	net.Conn
	mu  sync.Mutex
	rec Recording
}

// Record wraps c, the client's end of a TCP connection.
func Record(c net.Conn) *Conn {
	return &Conn{Conn: c, rec: Recording{
		Client: addrPort(c.LocalAddr()), Server: addrPort(c.RemoteAddr()), Start: time.Now(),
	}}
}

func addrPort(a net.Addr) netip.AddrPort {
	if ta, ok := a.(*net.TCPAddr); ok {
		ap := ta.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}

// Write records p as client-to-server bytes, then writes it. Bytes the
// connection did not take are removed from the recording.
func (c *Conn) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return c.Conn.Write(p)
	}
	c.mu.Lock()
	i := len(c.rec.Chunks)
	c.rec.Chunks = append(c.rec.Chunks, Chunk{Dir: capture.ClientToServer, Time: time.Now(), Data: append([]byte(nil), p...)})
	c.mu.Unlock()
	n, err := c.Conn.Write(p)
	if n < len(p) {
		c.mu.Lock()
		c.rec.Chunks[i].Data = c.rec.Chunks[i].Data[:max(n, 0)]
		c.mu.Unlock()
	}
	return n, err
}

// Read reads and records what it read as server-to-client bytes.
func (c *Conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		c.rec.Chunks = append(c.rec.Chunks, Chunk{Dir: capture.ServerToClient, Time: time.Now(), Data: append([]byte(nil), p[:n]...)})
		c.mu.Unlock()
	}
	return n, err
}

// Close closes the connection and notes the time (once).
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.rec.End.IsZero() {
		c.rec.End = time.Now()
	}
	c.mu.Unlock()
	return c.Conn.Close()
}

// Recording returns a copy of what was recorded so far. Chunks without
// data (a write the connection refused) are left out.
func (c *Conn) Recording() *Recording {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.rec
	r.Chunks = make([]Chunk, 0, len(c.rec.Chunks))
	for _, ch := range c.rec.Chunks {
		if len(ch.Data) > 0 {
			r.Chunks = append(r.Chunks, ch)
		}
	}
	r.Skips = append([]Skip(nil), c.rec.Skips...)
	return &r
}

// Dialer dials TCP connections and records each ([Conn]).
type Dialer struct {
	net.Dialer
	mu    sync.Mutex
	conns []*Conn
}

// DialContext dials address and returns the connection, recorded.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (*Conn, error) {
	raw, err := d.Dialer.DialContext(ctx, network, address)
	if err != nil {
		return nil, fmt.Errorf("dialing %s: %w", address, err)
	}
	c := Record(raw)
	d.mu.Lock()
	d.conns = append(d.conns, c)
	d.mu.Unlock()
	return c, nil
}

// Dial is DialContext as a net.Conn, the dialer a client such as kgo
// takes (kgo.Dialer): each connection the client opens is recorded.
func (d *Dialer) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err // not a nil *Conn in a non-nil net.Conn
	}
	return c, nil
}

// Conns returns the connections dialled so far, in dial order.
func (d *Dialer) Conns() []*Conn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]*Conn(nil), d.conns...)
}

// Recordings returns a copy of each connection's recording, in dial
// order, leaving out connections that carried no byte.
func (d *Dialer) Recordings() []*Recording {
	var rs []*Recording
	for _, c := range d.Conns() {
		if r := c.Recording(); len(r.Chunks) > 0 {
			rs = append(rs, r)
		}
	}
	return rs
}
