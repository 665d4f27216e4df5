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
// Forwarding goroutines hand copies of complete frames to the decoding
// side through a bounded queue ([Config.QueueFrames],
// [Config.QueueBytes]), kept per connection and served round robin, so
// that one connection cannot starve another's decoding and logging. The
// decoding side is a [pipeline]: one goroutine takes the frames from the
// queue and redacts their secrets, [Config.DecodeWorkers] decode them,
// and one delivers the events in the order they were taken.
// Space is reserved as a frame's bytes arrive, never from its size
// prefix. When a connection's share or the queue is full the frame is not
// decoded (forwarding never waits for decoding) and an [Event] of kind
// [EventSkipped] says how many were skipped.
//
// The forwarding goroutines allocate as little as they can, so that the
// garbage collector, which the decoding side keeps busy, does not make
// them help it: copies of large frames go into pooled chunks that the
// decoding side copies out and gives back. On Linux each goroutine of the
// decoding side runs on an OS thread of its own at a lower priority;
// [AddDecoderP] gives those threads Ps of their own.
//
// # Listeners, TLS and secrets
//
// Per-broker listeners are opened on a fresh port, or on the address a
// node is pinned to ([Config.BrokerListen], [Config.BrokerPortBase]); at
// most [Config.MaxListeners] of them, and those unused for
// [Config.ListenerIdle] are closed. [Config.TLS] serves TLS to clients on
// every listener, [Config.UpstreamTLS] speaks TLS to the brokers, each
// independently. SASL secrets are redacted in every event (package
// redact) unless [Config.ShowSecrets]; the raw tokens of a legacy
// SaslHandshake v0 exchange are framed in both directions. [AppendJSON]
// and [LineWriter] write the JSON log.
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
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/framebufs"
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
	// DefaultMaxListeners bounds the per-broker listeners.
	DefaultMaxListeners = 256
	// DefaultListenerIdle is how long an unused per-broker listener stays.
	DefaultListenerIdle = 10 * time.Minute
	// MaxDecodeWorkers bounds Config.DecodeWorkers: each worker may keep
	// an OS thread of its own, and the Go runtime ends a process that
	// has more than 10,000.
	MaxDecodeWorkers = 1024
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
	// Sink receives every event, on one goroutine (the decoding
	// pipeline's emitter), in order: each connection's events in the
	// order of its frames.
	Sink func(*Event)
	// ReuseTrees says that Sink keeps nothing of an event after it
	// returns (it writes the event out): the span tree of each frame's
	// report is then given to a later frame, so the decoding side does
	// not allocate one per frame. A Sink that keeps events (or their
	// Frames) must leave it false.
	ReuseTrees bool
	// DecodeWorkers is the number of goroutines that decode frames at
	// once (default DefaultDecodeWorkers(), at most MaxDecodeWorkers).
	// Their events still reach Sink in order.
	DecodeWorkers int
	// QueueFrames and QueueBytes bound the frames waiting to be decoded
	// (and being collected to be); one connection holds at most a quarter
	// of each (one frame of up to half the bytes while it has no other).
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

	// TLS, when set, makes every listener (the first and each broker's)
	// serve TLS to clients.
	TLS *tls.Config
	// UpstreamTLS, when set, makes the proxy speak TLS to the brokers. An
	// empty ServerName is each broker's advertised host.
	UpstreamTLS *tls.Config

	// BrokerListen pins the listener of broker node id to an address
	// ("0.0.0.0:19093"); BrokerPortBase, when positive, pins every node
	// without an entry to port BrokerPortBase+id on the host of Listen.
	// Other brokers get a listener on a fresh port. A pinned listener
	// follows its node: when the node is advertised at another address,
	// new connections go there.
	BrokerListen   map[int32]string
	BrokerPortBase int
	// MaxListeners bounds the per-broker listeners open at once, those
	// BrokerPortBase opens included, those BrokerListen names not
	// (default DefaultMaxListeners; negative: no limit). A broker beyond
	// it is not given one: its address reaches the client unrewritten,
	// and a fault says so.
	MaxListeners int
	// ListenerIdle closes a per-broker listener (not the first, not one
	// BrokerListen names) that has had no connection and has not been
	// advertised for that long (default DefaultListenerIdle; negative:
	// never). It is opened again when the broker is advertised again: on
	// a fresh port, or BrokerPortBase's.
	ListenerIdle time.Duration

	// DecodeTo, when set, moves the decoding side to another process
	// (usually a child at the lowest priority, so that neither its CPU nor
	// its garbage collector ever stops the forwarders): the feeder writes
	// every frame and event, in the order it takes them, to DecodeTo as
	// the job stream that [DecodeStream] reads there, and gives back each
	// frame's queue space once it is written. Sink, DecodeWorkers,
	// ReuseTrees, Summary, Roundtrip and ShowSecrets then belong to the
	// decoding process's DecodeStream, which also redacts the secrets. A
	// DecodeTo that is an io.Closer is closed once the queue is drained
	// (at Close). When a write fails nothing more is sent: what is taken
	// from the queue after it is counted, and Close returns the error
	// with the counts.
	DecodeTo io.Writer

	// ShowSecrets leaves SASL passwords, proofs and tokens in the events'
	// bytes and reports (they are redacted by default; see package redact).
	ShowSecrets bool

	// testWork, set by tests only, runs in place of a worker's decode and
	// calls decode when it chooses: tests order the workers' decodes so.
	testWork func(it *item, decode func())
}

// decodeDefaults fills in the defaults of what the decoding side reads
// (New and DecodeStream).
func (cfg *Config) decodeDefaults() {
	if cfg.DecodeWorkers <= 0 {
		cfg.DecodeWorkers = DefaultDecodeWorkers()
	}
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = DefaultQueueBytes
	}
	if cfg.MaxBuffer <= 0 {
		cfg.MaxBuffer = DefaultMaxBuffer
	}
}

// EventKind says what an [Event] reports.
type EventKind uint8

// Event kinds.
const (
	EventFrame    EventKind = iota // a frame was forwarded (and decoded)
	EventOpen                      // a client connected
	EventClose                     // a connection ended
	EventFault                     // something went wrong; forwarding went on as far as it could
	EventSkipped                   // frames were forwarded without decoding
	EventListen                    // a listener was opened for a broker
	EventRewrite                   // a response's broker addresses were replaced
	EventUnlisten                  // a listener was closed
)

// String is the kind's name in the log ("error" for EventFault).
func (k EventKind) String() string {
	return [...]string{"frame", "open", "close", "error", "skipped", "listen", "rewrite", "unlisten"}[k]
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
	// Data is the frame as forwarded to its receiver (SASL secrets
	// replaced unless Config.ShowSecrets; the bytes forwarded are never
	// changed); Original, for a response whose addresses were rewritten,
	// the frame as the broker sent it.
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
	// tail marks the held responses that are tail-held (see tailHold),
	// until one of them does not fit (conn.tailMisfit).
	tail map[holdKey]*atomic.Bool
	// tailsOff is set once a rewrite has replaced an address by a longer
	// one, and tail holding was stopped for good (conn.tailsOff).
	tailsOff atomic.Bool
	// newest is the newest response version of each API that advertises
	// addresses: a response of a newer one cannot be decoded to be
	// rewritten, and is said once (unrewritable; newerSaid, by holdKey).
	newest    map[int16]int16
	newerSaid sync.Map
	// rewriter decodes and re-encodes held responses on the forwarding
	// path: Config.Codec without decompression, so that finding a
	// response's broker addresses can never inflate its record batches
	// (a plain decode does not today; the decoding goroutine does, within
	// its budget).
	rewriter *codec.Codec

	mu        sync.Mutex
	listeners map[string]*listener // the first and unpinned listeners, by upstream address
	byNode    map[int32]*listener  // pinned listeners, by node id
	// overLimit are the brokers already said to be beyond MaxListeners
	// (at most maxOverLimitNamed of them), so that each is said once,
	// not on every response that names it.
	overLimit map[string]struct{}
	boot      *listener  // the first listener
	openMu    sync.Mutex // serialises opening listeners
	closed    bool
	conns     map[*conn]bool
	connSeq   int

	// own holds every open listener by the address it is advertised at
	// and the one it is bound to (under mu): a broker that advertises one
	// of them (advertised.listeners set to the proxy) is left as it is,
	// where a listener forwarding to the proxy itself would add a hop at
	// each rewrite, or loop.
	own map[string]*listener
	// accepted holds the open client connections, dialled the open
	// broker connections, by connKey (under mu): a connection of the
	// proxy to itself is in both (see conn.looped).
	accepted, dialled map[string]*conn

	q         *decodeQueue
	trees     *framebufs.Pool // span trees for reuse (Config.ReuseTrees), else nil
	wg        sync.WaitGroup
	decodeWG  sync.WaitGroup
	ctx       context.Context
	cancel    context.CancelFunc
	closeOnce sync.Once
	refusing  chan struct{} // slots for refused connections being closed gracefully

	// sendErr and sendLost belong to the sending feeder (Config.DecodeTo).
	sendErr  error
	sendLost sendLost

	// names and namedSeq belong to the pipeline's emitter (topicnames.go).
	names    *topicnames.Map
	namedSeq int64
}

type listener struct {
	ln   net.Listener
	host string // advertised host and port
	port int32
	node int32 // the pinned node, -1 when not pinned
	// Guarded by Proxy.mu:
	upstream string    // the broker connections go to
	conns    int       // open connections
	used     time.Time // last advertised, or last connection end
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
	if err := CheckHostPort(cfg.Upstream); err != nil {
		return nil, fmt.Errorf("proxy: Config.Upstream: %w", err)
	}
	if err := CheckHost(cfg.AdvertiseHost); cfg.AdvertiseHost != "" && err != nil {
		return nil, fmt.Errorf("proxy: Config.AdvertiseHost: %w", err)
	}
	if cfg.DecodeWorkers > MaxDecodeWorkers {
		return nil, fmt.Errorf("proxy: Config.DecodeWorkers %d is over %d", cfg.DecodeWorkers, MaxDecodeWorkers)
	}
	cfg.decodeDefaults()
	if cfg.QueueFrames <= 0 {
		cfg.QueueFrames = DefaultQueueFrames
	}
	if cfg.MaxFrame <= 0 {
		cfg.MaxFrame = DefaultMaxFrame
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
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
	if cfg.MaxListeners == 0 {
		cfg.MaxListeners = DefaultMaxListeners
	}
	if cfg.ListenerIdle == 0 {
		cfg.ListenerIdle = DefaultListenerIdle
	}
	p := &Proxy{
		cfg: cfg, reg: cfg.Codec.Reg, rewrite: map[holdKey]bool{},
		listeners: map[string]*listener{}, byNode: map[int32]*listener{}, own: map[string]*listener{}, conns: map[*conn]bool{},
		accepted: map[string]*conn{}, dialled: map[string]*conn{},
		q: newDecodeQueue(cfg.QueueBytes, cfg.QueueFrames), refusing: make(chan struct{}, maxRefusing),
	}
	if cfg.ReuseTrees {
		p.trees = framebufs.New(maxPooledTrees)
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	rw := *cfg.Codec
	rw.Decompress, rw.DecompressLimit = nil, nil
	p.rewriter = &rw
	if !cfg.NoRewrite {
		p.rewrite = holdTable(p.reg)
		p.tail = tailTable(p.reg, p.rewrite)
		p.newest = map[int16]int16{}
		for _, api := range AdvertisingAPIs(p.reg) {
			p.newest[api.Key] = api.Response.Valid.Hi
		}
	}
	p.decodeWG.Add(1)
	if cfg.DecodeTo != nil {
		go p.sendLoop(cfg.DecodeTo)
	} else {
		go p.decodeLoop()
	}
	boot, err := p.listen(cfg.Listen, cfg.Upstream, -1)
	if err != nil {
		p.Close()
		return nil, err
	}
	p.mu.Lock()
	p.boot = boot
	p.mu.Unlock()
	if cfg.ListenerIdle > 0 {
		p.wg.Add(1)
		go p.closeIdleListeners()
	}
	return p, nil
}

// CheckHostPort checks that addr can be a broker's address, HOST:PORT
// with a port from 1 to 65535: every connection would fail to dial
// another. (An empty HOST is this machine.)
func CheckHostPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%s: the port %q is not a number from 1 to 65535", addr, port)
	}
	return nil
}

// CheckHost checks that host can be written as the host of a broker
// address: not empty, without a port or brackets (an IPv6 address is
// written bare, "::1").
func CheckHost(host string) error {
	if host == "" {
		return errors.New("no host")
	}
	if _, _, err := net.SplitHostPort(host); err == nil || strings.ContainsAny(host, "[]/ ") {
		return fmt.Errorf("%q is not a host alone (no port, brackets, slash or space)", host)
	}
	return nil
}

// Addr returns the address of the first listener.
func (p *Proxy) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.boot != nil {
		return p.boot.ln.Addr().String()
	}
	return ""
}

// Listeners maps each upstream broker address to the proxy address that
// forwards to it.
func (p *Proxy) Listeners() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]string{}
	for _, l := range p.byNode {
		out[l.upstream] = l.ln.Addr().String()
	}
	for up, l := range p.listeners {
		out[up] = l.ln.Addr().String()
	}
	return out
}

// listen opens a listener forwarding to upstream (for node, -1 when not
// pinned).
func (p *Proxy) listen(addr, upstream string, node int32) (*listener, error) {
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
	l := &listener{ln: ln, upstream: upstream, host: host, port: int32(port), node: node, used: time.Now()}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		ln.Close()
		return nil, net.ErrClosed
	}
	if node >= 0 {
		p.byNode[node] = l
	} else {
		p.listeners[upstream] = l
	}
	p.own[hostPort(l.host, l.port)], p.own[ln.Addr().String()] = l, l
	p.mu.Unlock()
	detail := "forwarding " + ln.Addr().String() + " to " + upstream
	if node >= 0 {
		detail += fmt.Sprintf(" (pinned for broker node %d)", node)
	}
	if p.cfg.TLS != nil {
		detail += ", TLS to clients"
	}
	if p.cfg.UpstreamTLS != nil {
		detail += ", TLS to the broker"
	}
	p.event(&Event{Kind: EventListen, Time: time.Now(), Listener: ln.Addr().String(), Upstream: upstream, Detail: detail})
	p.wg.Add(1)
	go p.accept(l)
	return l, nil
}

// pinnedAddr is the address a node's listener is pinned to, if any.
func (p *Proxy) pinnedAddr(node int32) (string, bool, error) {
	if node < 0 {
		return "", false, nil
	}
	if a, ok := p.cfg.BrokerListen[node]; ok {
		return a, true, nil
	}
	if p.cfg.BrokerPortBase > 0 {
		port := p.cfg.BrokerPortBase + int(node)
		if port > 65535 {
			return "", false, fmt.Errorf("broker port base %d + node id %d is past port 65535", p.cfg.BrokerPortBase, node)
		}
		return net.JoinHostPort(p.bindHost(), strconv.Itoa(port)), true, nil
	}
	return "", false, nil
}

// bindHost is the host per-broker listeners bind.
func (p *Proxy) bindHost() string {
	if p.cfg.AdvertiseHost != "" {
		// Clients come from elsewhere: bind like the first listener.
		h, _, _ := net.SplitHostPort(p.cfg.Listen)
		return h
	}
	return listenHost(p.cfg.Listen)
}

// listenerFor returns the proxy address for broker node advertised at
// host:port, opening a listener for it on first use (on its pinned
// address, if it has one).
func (p *Proxy) listenerFor(node int32, host string, port int32) (string, int32, bool) {
	up := hostPort(host, port)
	pinned, isPinned, perr := p.pinnedAddr(node)
	p.openMu.Lock()
	defer p.openMu.Unlock()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return "", 0, false
	}
	if l := p.own[up]; l != nil {
		// Already the proxy's: left as it is.
		l.used = time.Now()
		p.mu.Unlock()
		return host, port, true
	}
	if isPinned {
		if l := p.byNode[node]; l != nil {
			moved := l.upstream != up
			old := l.upstream
			l.upstream = up
			l.used = time.Now()
			p.mu.Unlock()
			if moved {
				p.event(&Event{Kind: EventListen, Time: time.Now(), Listener: l.ln.Addr().String(), Upstream: up,
					Detail: fmt.Sprintf("broker node %d is now advertised at %s (was %s): %s forwards there", node, up, old, l.ln.Addr())})
			}
			return l.host, l.port, true
		}
	} else if l, ok := p.listeners[up]; ok {
		l.used = time.Now()
		p.mu.Unlock()
		return l.host, l.port, true
	}
	// The first listener and those BrokerListen names do not count;
	// BrokerPortBase's do, as a response may name any number of nodes.
	n := len(p.listeners) - 1
	for id := range p.byNode {
		if _, named := p.cfg.BrokerListen[id]; !named {
			n++
		}
	}
	_, named := p.cfg.BrokerListen[node]
	p.mu.Unlock()
	if perr != nil {
		p.event(&Event{Kind: EventFault, Time: time.Now(), Upstream: up, Detail: "cannot open a listener for broker " + up + ": " + perr.Error()})
		return "", 0, false
	}
	if !(isPinned && named) && p.cfg.MaxListeners > 0 && n >= p.cfg.MaxListeners {
		p.overListenerLimit(up, node)
		return "", 0, false
	}
	addr := net.JoinHostPort(p.bindHost(), "0")
	pin := int32(-1)
	if isPinned {
		addr, pin = pinned, node
	}
	l, err := p.listen(addr, up, pin)
	if err != nil {
		p.event(&Event{Kind: EventFault, Time: time.Now(), Upstream: up, Detail: "cannot open a listener for broker " + up + ": " + err.Error()})
		return "", 0, false
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

// closeIdleListeners closes the per-broker listeners that are neither
// pinned nor the first and have had no connection and no advertisement
// for Config.ListenerIdle.
func (p *Proxy) closeIdleListeners() {
	defer p.wg.Done()
	idle := p.cfg.ListenerIdle
	t := time.NewTicker(max(idle/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-t.C:
		}
		p.closeIdle(time.Now(), idle)
	}
}

// closeIdle closes the listeners unused for idle at now: unpinned ones
// and those BrokerPortBase opened (which count against MaxListeners; a
// node's next advertisement opens its listener again on the same port),
// never the first or one BrokerListen names.
func (p *Proxy) closeIdle(now time.Time, idle time.Duration) {
	// Under openMu, so that a listener is closed before its port can be
	// listened on again (listenerFor).
	p.openMu.Lock()
	defer p.openMu.Unlock()
	var closed []*listener
	unused := func(l *listener) bool {
		if l == p.boot || l.conns > 0 || now.Sub(l.used) < idle {
			return false
		}
		delete(p.own, hostPort(l.host, l.port))
		delete(p.own, l.ln.Addr().String())
		closed = append(closed, l)
		return true
	}
	p.mu.Lock()
	for up, l := range p.listeners {
		if l.node < 0 && unused(l) {
			delete(p.listeners, up)
		}
	}
	for node, l := range p.byNode {
		if _, named := p.cfg.BrokerListen[node]; !named && unused(l) {
			delete(p.byNode, node)
		}
	}
	p.mu.Unlock()
	for _, l := range closed {
		l.ln.Close()
		p.event(&Event{Kind: EventUnlisten, Time: time.Now(), Listener: l.ln.Addr().String(), Upstream: l.upstream,
			Detail: fmt.Sprintf("closing listener %s for broker %s: not advertised and no connection for %v", l.ln.Addr(), l.upstream, idle)})
	}
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
		from := connKey(c.RemoteAddr(), c.LocalAddr())
		if d := p.dialled[from]; d != nil {
			p.mu.Unlock()
			p.cutLoop(d, l.ln.Addr().String())
			c.Close()
			continue
		}
		p.connSeq++
		if p.cfg.TLS != nil {
			c = tls.Server(c, p.cfg.TLS)
		}
		cn := newConn(p, l, c, p.connSeq, l.upstream)
		cn.from = from
		p.conns[cn] = true
		p.accepted[from] = cn
		l.conns++
		p.mu.Unlock()
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			cn.run()
			p.mu.Lock()
			delete(p.conns, cn)
			if p.accepted[from] == cn {
				delete(p.accepted, from)
			}
			l.conns--
			l.used = time.Now()
			p.mu.Unlock()
		}()
	}
}

// loop reports a connection of the proxy to its own listener at addr,
// which d dialled as its broker: the broker address leads back to the
// proxy (a pinned listener's node advertised under another name for
// it, an upstream naming the proxy). Each connection would dial the
// next until the connection limit, and the process's file descriptors,
// ran out; the looped connection is closed instead, and d with it.
func (p *Proxy) loop(d *conn, addr string) {
	d.fault("", "connection loop: the broker address %s leads back to this proxy's listener %s; closing the client connection", d.base.Upstream, addr)
}

// connKey names a TCP connection by its two ends, from and to (a
// connection accepted by: its client's address, then its local one; one
// dialled: its local address, then the broker's), so that both ends of
// a connection of the proxy to itself have the same key. One end alone
// would not do: Linux gives connections to different destinations the
// same local port, so a client on the proxy's machine may come from the
// port of one of its broker connections.
func connKey(from, to net.Addr) string {
	return unmapped(from) + " " + unmapped(to)
}

// unmapped is the address a of a TCP end, an IPv4 address mapped to IPv6
// (a dual-stack listener's) written as IPv4.
func unmapped(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		ap := t.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).String()
	}
	return a.String()
}

// cutLoop ends d, whose broker connection is the proxy's own, accepted
// at its listener addr: the loop is said (once), and d's broker
// connection closed, so that its pumps end and its client is closed.
// The caller closes the other end after it: closed first, d's end sees
// no reset from the other.
func (p *Proxy) cutLoop(d *conn, addr string) {
	if !d.looped.Swap(true) {
		p.loop(d, addr)
	}
	p.mu.Lock()
	up := d.upstream
	p.mu.Unlock()
	up.Close()
}

// maxRefusing bounds the refused connections closed gracefully at once;
// beyond it a refused connection is simply closed.
const maxRefusing = 64

// refuse closes a client beyond Config.MaxConns: a FIN first, then what
// it already sent is drained (briefly, bounded) so that it sees an end of
// stream rather than a reset.
func (p *Proxy) refuse(l *listener, c net.Conn) {
	p.mu.Lock()
	up := l.upstream
	p.mu.Unlock()
	p.event(&Event{Kind: EventFault, Time: time.Now(), Client: c.RemoteAddr().String(), Listener: l.ln.Addr().String(), Upstream: up,
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
// event has been delivered (with Config.DecodeTo: written to it). Its
// error is the failed write to Config.DecodeTo, if one failed.
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		for _, l := range p.listeners {
			l.ln.Close()
		}
		for _, l := range p.byNode {
			l.ln.Close()
		}
		for c := range p.conns {
			c.abort()
		}
		p.mu.Unlock()
		p.cancel()
		p.wg.Wait()
		p.q.close()
		p.decodeWG.Wait()
	})
	return p.sendError()
}

// maxOverLimitNamed bounds the brokers beyond MaxListeners that are named
// each in a fault of their own; past it, one fault says that further
// ones are not.
const maxOverLimitNamed = 1024

// overListenerLimit says, once per broker, that broker up (node) is left
// unrewritten because MaxListeners listeners are open.
func (p *Proxy) overListenerLimit(up string, node int32) {
	p.mu.Lock()
	if p.overLimit == nil {
		p.overLimit = map[string]struct{}{}
	}
	_, said := p.overLimit[up]
	full := len(p.overLimit) >= maxOverLimitNamed
	if !said && !full {
		p.overLimit[up] = struct{}{}
	}
	last := !said && len(p.overLimit) == maxOverLimitNamed && !full
	p.mu.Unlock()
	if said || full {
		return
	}
	detail := fmt.Sprintf("listener limit %d reached: broker %s (node %d) is left unrewritten, clients may connect to it directly (said once per broker)", p.cfg.MaxListeners, up, node)
	if last {
		detail += fmt.Sprintf("; this is the %dth such broker, and further ones are left unrewritten without a message each", maxOverLimitNamed)
	}
	p.event(&Event{Kind: EventFault, Time: time.Now(), Upstream: up, Detail: detail})
}
