// Package proxy is a Kafka proxy that decodes what it forwards.
//
// Every byte a client sends goes to the broker unchanged and in order, and
// every byte of a response comes back unchanged, except for the responses
// that advertise broker addresses (Metadata, FindCoordinator,
// DescribeCluster, the NodeEndpoints of Produce and Fetch, ...): those are
// decoded whole and re-encoded with each broker's address replaced by a
// local listener of the proxy for that broker, opened on demand, so the
// client keeps talking through the proxy ([Config.NoRewrite] turns this
// off). A response that does not decode is forwarded untouched.
//
// # Decoding off the forwarding path
//
// Forwarding goroutines hand copies of complete frames to one decoding
// goroutine through a bounded queue ([Config.QueueFrames],
// [Config.QueueBytes]). When the queue is full the frame is not decoded
// (forwarding never waits for decoding) and an [Event] of kind
// [EventSkipped] says how many were skipped.
//
// # Faults
//
// An upstream that refuses the connection, either side closing in the
// middle of a frame, and a frame that does not decode are each reported as
// an [EventFault]; the bytes received before a close are still forwarded,
// then the other side is closed too.
package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/topicnames"
)

// Defaults for [Config].
const (
	DefaultQueueFrames = 4096
	DefaultQueueBytes  = 64 << 20
	DefaultMaxFrame    = 100 << 20
	DefaultDialTimeout = 10 * time.Second
	DefaultMaxBuffer   = 64 << 20
	DefaultMaxConns    = 1000
	// DefaultIdleTimeout matches the broker's connections.max.idle.ms
	// (clients close their idle connections after 9 minutes).
	DefaultIdleTimeout = 10 * time.Minute
)

// Config configures a [Proxy].
type Config struct {
	// Listen is the address of the first listener ("127.0.0.1:19092").
	Listen string
	// Upstream is the broker the first listener forwards to.
	Upstream string
	// Codec decodes and re-encodes frames.
	Codec *codec.Codec
	// NoRewrite forwards address-advertising responses unchanged.
	NoRewrite bool
	// Roundtrip checks that every decoded frame re-encodes byte for byte.
	Roundtrip bool
	// Summary decodes frames without span trees and body JSON (enough for
	// one line per frame, much cheaper); a frame that does not decode still
	// gets the full report.
	Summary bool
	// Sink receives every event, on the decoding goroutine, in order.
	Sink func(*Event)
	// QueueFrames and QueueBytes bound the frames waiting to be decoded.
	QueueFrames int
	QueueBytes  int64
	// MaxFrame is the largest frame the proxy frames; a larger size
	// prefix stops framing (not forwarding) on that connection.
	MaxFrame int
	// MaxBuffer is the largest frame the proxy holds in memory to decode
	// it or rewrite its addresses (default DefaultMaxBuffer). A larger
	// frame is forwarded as it arrives, without decoding or rewriting,
	// and framing goes on after it. Buffers grow with the bytes that
	// arrive, never with what a size prefix claims.
	MaxBuffer int
	// MaxConns bounds the client connections open at once over all
	// listeners (default DefaultMaxConns; negative: no limit). A client
	// beyond it is closed at once and the refusal logged as a fault.
	MaxConns int
	// IdleTimeout closes both sides of a connection when no byte has
	// passed either way for that long (default DefaultIdleTimeout;
	// negative: never).
	IdleTimeout time.Duration
	// DialTimeout bounds connecting to a broker.
	DialTimeout time.Duration
	// AdvertiseHost is the host written into rewritten responses (default:
	// the host of each listener's address, 127.0.0.1 for a wildcard one).
	// With it, per-broker listeners bind the host of Listen, as given.
	AdvertiseHost string
}

// EventKind says what an [Event] reports.
type EventKind uint8

// Event kinds.
const (
	EventFrame   EventKind = iota // a frame was forwarded (and decoded)
	EventOpen                     // a client connected
	EventClose                    // a connection ended
	EventFault                    // something went wrong; forwarding went on as far as it could
	EventSkipped                  // frames were forwarded without decoding
	EventListen                   // a listener was opened for a broker
)

func (k EventKind) String() string {
	return [...]string{"frame", "open", "close", "fault", "skipped", "listen"}[k]
}

// Event is one entry of the proxy's log.
type Event struct {
	Kind EventKind
	Time time.Time
	// Conn numbers client connections from 1; 0 for listener events.
	Conn int
	// Client is the client's address; Listener the proxy address it
	// connected to; Upstream the broker behind that listener.
	Client, Listener, Upstream string
	// Frame is the decode report of a frame event (nil when the frame was
	// forwarded without decoding).
	Frame *report.Frame
	// Dir is "request" or "response" for frame and fault events.
	Dir string
	// Data is the frame as forwarded to its receiver; Original, for a
	// response whose addresses were rewritten, the frame as the broker
	// sent it.
	Data, Original []byte
	// Rewritten reports that the frame's broker addresses were replaced.
	Rewritten bool
	// Detail explains faults, skips and listener events.
	Detail string
	// Count is the number of frames skipped, for EventSkipped.
	Count int
}

// Proxy forwards Kafka connections and decodes their frames.
type Proxy struct {
	cfg     Config
	reg     *schema.Registry
	rewrite map[holdKey]bool // responses (API, version) that advertise addresses

	mu        sync.Mutex
	listeners map[string]*listener // by upstream address
	closed    bool
	conns     map[*conn]bool
	connSeq   int

	queue     chan *item
	ovf       overflow
	queued    atomic.Int64 // bytes in the queue
	skipped   atomic.Int64 // frames skipped since the last report
	wg        sync.WaitGroup
	decodeWG  sync.WaitGroup
	ctx       context.Context
	cancel    context.CancelFunc
	closeOnce sync.Once
	refusing  chan struct{} // slots for refused connections being closed gracefully

	// names and namedSeq belong to the decoding goroutine (topicnames.go).
	names    *topicnames.Map
	namedSeq int64
}

type listener struct {
	ln       net.Listener
	upstream string
	host     string
	port     int32
}

// New starts a proxy: it opens the first listener and returns once it
// accepts connections. Close stops it.
func New(cfg Config) (*Proxy, error) {
	if cfg.Codec == nil {
		return nil, errors.New("proxy: Config.Codec is required")
	}
	if cfg.Upstream == "" {
		return nil, errors.New("proxy: Config.Upstream is required")
	}
	if cfg.QueueFrames <= 0 {
		cfg.QueueFrames = DefaultQueueFrames
	}
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = DefaultQueueBytes
	}
	if cfg.MaxFrame <= 0 {
		cfg.MaxFrame = DefaultMaxFrame
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.MaxBuffer <= 0 {
		cfg.MaxBuffer = DefaultMaxBuffer
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	p := &Proxy{
		cfg: cfg, reg: cfg.Codec.Reg, rewrite: map[holdKey]bool{},
		listeners: map[string]*listener{}, conns: map[*conn]bool{},
		queue: make(chan *item, cfg.QueueFrames), refusing: make(chan struct{}, maxRefusing),
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	if !cfg.NoRewrite {
		p.rewrite = holdTable(p.reg)
	}
	p.decodeWG.Add(1)
	go p.decodeLoop()
	if _, err := p.listen(cfg.Listen, cfg.Upstream); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// Addr returns the address of the first listener.
func (p *Proxy) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l, ok := p.listeners[p.cfg.Upstream]; ok {
		return l.ln.Addr().String()
	}
	return ""
}

// Listeners maps each upstream broker address to the proxy address that
// forwards to it.
func (p *Proxy) Listeners() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]string{}
	for up, l := range p.listeners {
		out[up] = l.ln.Addr().String()
	}
	return out
}

// listen opens a listener forwarding to upstream.
func (p *Proxy) listen(addr, upstream string) (*listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	host, portText, _ := net.SplitHostPort(ln.Addr().String())
	port, _ := strconv.Atoi(portText)
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	if p.cfg.AdvertiseHost != "" {
		host = p.cfg.AdvertiseHost
	}
	l := &listener{ln: ln, upstream: upstream, host: host, port: int32(port)}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		ln.Close()
		return nil, net.ErrClosed
	}
	p.listeners[upstream] = l
	p.mu.Unlock()
	p.event(&Event{Kind: EventListen, Time: time.Now(), Listener: ln.Addr().String(), Upstream: upstream,
		Detail: "forwarding " + ln.Addr().String() + " to " + upstream})
	p.wg.Add(1)
	go p.accept(l)
	return l, nil
}

// listenerFor returns the proxy address for an advertised broker,
// opening a listener for it on first use.
func (p *Proxy) listenerFor(host string, port int32) (string, int32, bool) {
	up := hostPort(host, port)
	p.mu.Lock()
	l, ok := p.listeners[up]
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return "", 0, false
	}
	if !ok {
		var err error
		bind := listenHost(p.cfg.Listen)
		if p.cfg.AdvertiseHost != "" {
			// Clients come from elsewhere: bind like the first listener.
			bind, _, _ = net.SplitHostPort(p.cfg.Listen)
		}
		l, err = p.listen(net.JoinHostPort(bind, "0"), up)
		if err != nil {
			p.event(&Event{Kind: EventFault, Time: time.Now(), Upstream: up, Detail: "cannot open a listener for broker " + up + ": " + err.Error()})
			return "", 0, false
		}
	}
	return l.host, l.port, true
}

func listenHost(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil || h == "" || h == "0.0.0.0" || h == "::" {
		return "127.0.0.1"
	}
	return h
}

func (p *Proxy) accept(l *listener) {
	defer p.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			p.event(&Event{Kind: EventFault, Time: time.Now(), Listener: l.ln.Addr().String(), Detail: "accept: " + err.Error()})
			time.Sleep(50 * time.Millisecond)
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			return
		}
		if p.cfg.MaxConns > 0 && len(p.conns) >= p.cfg.MaxConns {
			p.mu.Unlock()
			p.refuse(l, c)
			continue
		}
		p.connSeq++
		cn := newConn(p, l, c, p.connSeq)
		p.conns[cn] = true
		p.mu.Unlock()
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			cn.run()
			p.mu.Lock()
			delete(p.conns, cn)
			p.mu.Unlock()
		}()
	}
}

// maxRefusing bounds the refused connections closed gracefully at once;
// beyond it a refused connection is simply closed.
const maxRefusing = 64

// refuse closes a client beyond Config.MaxConns: a FIN first, then what
// it already sent is drained (briefly, bounded) so that it sees an end of
// stream rather than a reset.
func (p *Proxy) refuse(l *listener, c net.Conn) {
	p.event(&Event{Kind: EventFault, Time: time.Now(), Client: c.RemoteAddr().String(), Listener: l.ln.Addr().String(), Upstream: l.upstream,
		Detail: fmt.Sprintf("connection limit %d reached: refusing client %s", p.cfg.MaxConns, c.RemoteAddr())})
	select {
	case p.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer func() { <-p.refusing }()
		defer c.Close()
		defer context.AfterFunc(p.ctx, func() { c.Close() })() // shutdown ends the drain
		closeWrite(c)
		c.SetReadDeadline(time.Now().Add(time.Second))
		io.Copy(io.Discard, io.LimitReader(c, 1<<20))
	}()
}

// Close stops accepting, closes every connection and waits until every
// event has been delivered.
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		for _, l := range p.listeners {
			l.ln.Close()
		}
		for c := range p.conns {
			c.abort()
		}
		p.mu.Unlock()
		p.cancel()
		p.wg.Wait()
		close(p.queue)
		p.decodeWG.Wait()
	})
	return nil
}
