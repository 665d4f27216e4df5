// Package testtap relays TCP connections to one upstream address and
// records every chunk each side sends, in the order the relay reads them,
// for tests that need the bytes a real client and broker exchanged: as a
// stream per connection and direction, or written as a capture. Only tests
// import it.
package testtap

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/manifester/manifester/internal/capture"
)

// Chunk is bytes one side of a relayed connection sent, as one read of
// the relay returned them.
type Chunk struct {
	Conn int // the connection's index, in the order they were accepted
	Dir  capture.Dir
	At   time.Time
	Data []byte
}

// Tap is a recording relay. Its methods are safe for concurrent use.
type Tap struct {
	ln     net.Listener
	mu     sync.Mutex
	chunks []Chunk
	addrs  [][2]netip.AddrPort // client, listener per connection
	wg     sync.WaitGroup
	once   sync.Once
}

// New listens on a loopback port and relays each connection to upstream,
// recording both directions. The test's cleanup closes it.
func New(t testing.TB, upstream string) *Tap {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tp := &Tap{ln: ln}
	t.Cleanup(tp.Close)
	go tp.accept(upstream)
	return tp
}

func (tp *Tap) accept(upstream string) {
	for {
		c, err := tp.ln.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", upstream)
		if err != nil {
			c.Close()
			continue
		}
		tp.mu.Lock()
		id := len(tp.addrs)
		tp.addrs = append(tp.addrs, [2]netip.AddrPort{addrPort(c.RemoteAddr()), addrPort(c.LocalAddr())})
		tp.mu.Unlock()
		tp.wg.Add(2)
		go tp.relay(u, c, id, capture.ClientToServer)
		go tp.relay(c, u, id, capture.ServerToClient)
	}
}

// relay copies src to dst, recording each read before it is forwarded
// (so a request is recorded before its response can be), and closes both
// when either side ends.
func (tp *Tap) relay(dst, src net.Conn, id int, dir capture.Dir) {
	defer tp.wg.Done()
	io.Copy(dst, io.TeeReader(src, recorder{tp, id, dir}))
	dst.Close()
	src.Close()
}

type recorder struct {
	tp   *Tap
	conn int
	dir  capture.Dir
}

func (r recorder) Write(p []byte) (int, error) {
	r.tp.mu.Lock()
	r.tp.chunks = append(r.tp.chunks, Chunk{r.conn, r.dir, time.Now(), bytes.Clone(p)})
	r.tp.mu.Unlock()
	return len(p), nil
}

func addrPort(a net.Addr) netip.AddrPort {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.AddrPort()
	}
	return netip.MustParseAddrPort(a.String())
}

// Addr is the address clients dial.
func (tp *Tap) Addr() string { return tp.ln.Addr().String() }

// DialContext dials the tap whatever address it is given: a broker
// advertises its own address, and a client given this dialer stays on
// the tap.
func (tp *Tap) DialContext(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, tp.Addr())
}

// Close stops accepting and waits until every relayed connection has
// ended (each ends when its client or the upstream closes it).
func (tp *Tap) Close() {
	tp.once.Do(func() { tp.ln.Close() })
	tp.wg.Wait()
}

// Chunks returns what was recorded so far, in the order it was read.
func (tp *Tap) Chunks() []Chunk {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([]Chunk(nil), tp.chunks...)
}

// Streams returns what each connection sent in direction dir, one
// stream per connection in the order they were accepted.
func (tp *Tap) Streams(dir capture.Dir) [][]byte {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	out := make([][]byte, len(tp.addrs))
	for _, c := range tp.chunks {
		if c.Dir == dir {
			out[c.Conn] = append(out[c.Conn], c.Data...)
		}
	}
	return out
}

// Addrs returns each connection's client address and the tap's.
func (tp *Tap) Addrs() [][2]netip.AddrPort {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([][2]netip.AddrPort(nil), tp.addrs...)
}

// Capture writes the recorded connections as a capture in format f, each
// from its handshake to its FINs (at the last chunk's time), between the
// addresses they really had, packets in the recorded order. Each
// direction is written up to its last whole Kafka frame (split by size
// prefixes alone): a stream that ends inside a frame, a response the
// broker was writing as the client closed, would read as cut. It returns
// the capture, the number of whole frames in it (both directions) and of
// connections (those that sent anything).
func (tp *Tap) Capture(t testing.TB, f capture.Format) (pcap []byte, frames, conns int) {
	t.Helper()
	tp.mu.Lock()
	defer tp.mu.Unlock()
	type key struct {
		conn int
		dir  capture.Dir
	}
	streams := map[key][]byte{}
	for _, c := range tp.chunks {
		k := key{c.Conn, c.Dir}
		streams[k] = append(streams[k], c.Data...)
	}
	whole := map[key]int{} // bytes of whole frames per stream
	for k, b := range streams {
		for len(b) >= 4 {
			n := int(binary.BigEndian.Uint32(b)) + 4
			if n > len(b) || n < 4 {
				t.Logf("connection %d %v: %d bytes after the last whole frame left out", k.conn, k.dir, len(b))
				break
			}
			frames++
			whole[k] += n
			b = b[n:]
		}
	}
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, f)
	if err != nil {
		t.Fatal(err)
	}
	writers := map[int]*capture.ConnWriter{}
	written := map[key]int{}
	var last time.Time
	for _, c := range tp.chunks {
		k := key{c.Conn, c.Dir}
		data := c.Data[:min(len(c.Data), max(whole[k]-written[k], 0))]
		written[k] += len(data)
		cw := writers[c.Conn]
		if cw == nil {
			cw = w.Conn(tp.addrs[c.Conn][0], tp.addrs[c.Conn][1])
			if err := cw.Open(c.At); err != nil {
				t.Fatal(err)
			}
			writers[c.Conn] = cw
		}
		if err := cw.Write(c.Dir, c.At, data); err != nil {
			t.Fatal(err)
		}
		last = c.At
	}
	for i := range tp.addrs {
		if cw := writers[i]; cw != nil {
			if err := cw.Close(last); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), frames, len(writers)
}
