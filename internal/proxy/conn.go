package proxy

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/frames"
	"github.com/manifester/manifester/internal/pairing"
	"github.com/manifester/manifester/internal/redact"
	"github.com/manifester/manifester/internal/wire"
)

// readBuf is the size of each read from a socket.
const readBuf = 64 << 10

// initialBuf is the most a frame buffer starts with: buffers grow with
// the bytes that arrive, never with what a size prefix claims.
const initialBuf = 64 << 10

// newFrameBuf starts a buffer for a frame of size bytes with its first
// bytes hdr.
func newFrameBuf(size int, hdr []byte) []byte {
	n := min(size, initialBuf)
	return append(getHeld(n, n), hdr...)
}

// appendHeld appends chunk to a held frame of size bytes, growing it
// (when it must) to twice what it holds, at most size: a few copies for a
// frame of megabytes where append's growth by a quarter made a dozen (a
// quarter of the proxy's CPU on 1 MB fetches), and never more than twice
// the bytes that arrived, whatever the size prefix claims. The buffers
// come from heldPools, and the one outgrown goes back.
func appendHeld(b, chunk []byte, size int) []byte {
	if need := len(b) + len(chunk); need > cap(b) {
		nb := append(getHeld(max(need, min(size, 2*cap(b))), 2*need), b...)
		putHeld(b)
		b = nb
	}
	return append(b, chunk...)
}

// maxPending bounds the requests of a connection awaiting responses;
// beyond it the oldest is no longer paired, and the close event says how
// many were dropped so.
const maxPending = 4096

// conn is one proxied client connection.
type conn struct {
	p        *Proxy
	l        *listener
	client   net.Conn
	upstream net.Conn
	id       int
	base     Event      // connection fields of every event
	q        *connQueue // this connection's part of the decode queue
	// secrets follows the connection's SASL exchange to redact it (nil
	// with Config.ShowSecrets); used by the decoding pipeline's feeder only.
	secrets *redact.Stream

	// Frame numbers and stream offsets per direction (as the receiver
	// sees the stream), each touched by one pump only.
	reqIdx, respIdx int
	reqOff, respOff int64

	mu      sync.Mutex
	pending pairing.Pending // requests in order, added by the client pump, answered by the broker's

	// legacyLeft counts the raw SASL tokens the client is still to send
	// after a SaslHandshake v0 (legacyUnknown: the mechanism's count is
	// not known); request pump only.
	legacyLeft    int
	legacyUnknown bool

	// out gathers the response pump's writes to the client.
	out clientWriter

	// last is when a byte last arrived from either side (UnixNano), for
	// Config.IdleTimeout; idleOnce logs the idle close once.
	last     atomic.Int64
	idleOnce sync.Once
	idled    atomic.Bool
	// The deadlines set on the sockets (UnixNano; 0: none yet), each
	// touched by one pump only: the request pump reads the client and
	// writes the broker, the response pump the other way.
	clientRead, clientWrite, upRead, upWrite int64

	// stopped is set when the proxy's Close aborts the connection; what
	// the pumps could not forward from then on is the stop's doing, not
	// the traffic's, and is said in the close event (stopNotes, under mu)
	// rather than as faults.
	stopped   atomic.Bool
	stopNotes []string
	// looped is set when the broker connection turned out to be the
	// proxy's own, or the client connection is the proxy's (Proxy.loop):
	// the connection is closed, and what the pumps could not forward then
	// went nowhere; the loop's fault says so.
	looped atomic.Bool
	// gone says, for the close event, what a client that went away with
	// a response on its way did not get (under mu).
	gone string
	// from is the connKey of the client connection, as accepted.
	from string
}

func newConn(p *Proxy, l *listener, c net.Conn, id int, upstream string) *conn {
	cn := &conn{p: p, l: l, client: c, id: id, base: Event{
		Conn: id, Client: c.RemoteAddr().String(), Listener: l.ln.Addr().String(), Upstream: upstream,
	}}
	cn.pending.Max = maxPending
	cn.last.Store(time.Now().UnixNano())
	cn.q = p.q.open(cn)
	cn.secrets = redact.NewStream(p.cfg.ShowSecrets)
	return cn
}

// deadlineSlack is how much later than the idle timeout a socket's
// deadline may be set: a pump moves a deadline only once it falls short
// of the timeout, to an idleTimeout/deadlineSlack beyond it, so that a
// busy connection sets one every so often rather than one for each read
// and write (the runtime's timer work for them was 7% of the forwarding
// process's CPU). An idle pair is closed, and a write that cannot
// progress fails, after the timeout and at most a sixteenth more.
const deadlineSlack = 16

// readFrom reads from src for a pump, with the idle deadline set when
// Config.IdleTimeout is on (*set: the deadline set on src, UnixNano). It
// returns errIdle once no byte has passed either way for the idle
// timeout; a deadline that passes while the other direction was busy is
// extended.
func (c *conn) readFrom(src net.Conn, buf []byte, set *int64) (int, error) {
	idle := c.p.cfg.IdleTimeout
	if idle <= 0 {
		return src.Read(buf)
	}
	for {
		if due := c.last.Load() + int64(idle); *set < due {
			*set = due + int64(idle/deadlineSlack)
			src.SetReadDeadline(time.Unix(0, *set))
		}
		n, err := src.Read(buf)
		if n > 0 {
			c.last.Store(time.Now().UnixNano())
		}
		if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) {
			if time.Since(time.Unix(0, c.last.Load())) < idle {
				continue // the other direction was busy
			}
			c.idleOnce.Do(func() {
				c.idled.Store(true)
				c.fault("", "no bytes either way for %v: closing both sides", idle)
			})
			return 0, errIdle
		}
		return n, err
	}
}

// writeTo writes to dst for a pump; with Config.IdleTimeout on, a write
// that cannot progress for that long fails (*set: the deadline set on
// dst, UnixNano). The deadline is never earlier than the timeout: a
// TLS connection whose write timed out cannot be written again.
func (c *conn) writeTo(dst net.Conn, b []byte, set *int64) (int, error) {
	if idle := c.p.cfg.IdleTimeout; idle > 0 {
		if due := time.Now().UnixNano() + int64(idle); *set < due {
			*set = due + int64(idle/deadlineSlack)
			dst.SetWriteDeadline(time.Unix(0, *set))
		}
	}
	return dst.Write(b)
}

// errIdle ends a pump whose connection has been idle too long.
var errIdle = errors.New("idle timeout")

func (c *conn) event(e Event) {
	e.Conn, e.Client, e.Listener, e.Upstream = c.base.Conn, c.base.Client, c.base.Listener, c.base.Upstream
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	c.p.q.event(c.q, &e, e.Kind == EventClose)
}

// collect appends chunk to a frame being collected for decoding, whose
// queue space is reserved as its bytes arrive (never from its size
// prefix); when there is no room the frame is given up (its space given
// back, a skip counted) and forwarded undecoded.
func (c *conn) collect(on *bool, body *frameBody, reserved *int, size int, chunk []byte) {
	if !*on {
		return
	}
	if !c.p.q.grow(c.q, len(chunk)) {
		c.p.q.release(c.q, *reserved)
		c.p.q.skip(c.q)
		body.drop()
		*on, *reserved = false, 0
		return
	}
	*reserved += len(chunk)
	body.add(size, chunk)
}

func (c *conn) fault(dir, format string, args ...any) {
	c.event(Event{Kind: EventFault, Dir: dir, Detail: fmt.Sprintf(format, args...)})
}

// cut reports bytes a pump could not forward or a frame it could not
// finish: a fault, unless the proxy is stopping (abort), when the bytes
// are counted in the connection's close event instead (stopMsg), since
// the loss is the stop's.
func (c *conn) cut(dir, stopMsg, format string, args ...any) {
	if c.looped.Load() {
		return
	}
	if c.stopped.Load() {
		c.mu.Lock()
		c.stopNotes = append(c.stopNotes, stopMsg)
		c.mu.Unlock()
		return
	}
	c.fault(dir, format, args...)
}

// abort closes both sockets (proxy shutdown).
func (c *conn) abort() {
	c.stopped.Store(true)
	c.client.Close()
	if c.upstream != nil {
		c.upstream.Close()
	}
}

// run dials the broker and forwards both directions until both end.
func (c *conn) run() {
	defer c.client.Close()
	c.event(Event{Kind: EventOpen, Detail: "client connected"})
	if tc, ok := c.client.(*tls.Conn); ok {
		ctx, cancel := context.WithTimeout(c.p.ctx, c.p.cfg.DialTimeout)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil && c.looped.Load() {
			// The client is this proxy, which found the loop and said it.
			c.event(Event{Kind: EventClose, Detail: "connection loop"})
			return
		}
		if err != nil {
			c.fault("", "TLS handshake with the client: %v; closing the connection", err)
			c.event(Event{Kind: EventClose, Detail: "TLS handshake failed"})
			return
		}
	}
	// A connection of the proxy to itself (a broker address that leads
	// back to it) is seen at one of its ends: where it is accepted
	// (Proxy.accept), here before this connection dials (its dialler
	// registered before sending a byte, so after a TLS handshake this
	// always sees it), or once the broker connection is open, before a
	// byte is sent on it (below).
	c.p.mu.Lock()
	d := c.p.dialled[c.from]
	c.p.mu.Unlock()
	if d != nil || c.looped.Load() {
		if d != nil {
			c.p.cutLoop(d, c.base.Listener)
		}
		c.event(Event{Kind: EventClose, Detail: "connection loop"})
		return
	}
	ctx, cancel := context.WithTimeout(c.p.ctx, c.p.cfg.DialTimeout)
	defer cancel()
	up, err := (&net.Dialer{}).DialContext(ctx, "tcp", c.base.Upstream)
	if err != nil && c.p.ctx.Err() != nil {
		// The proxy is stopping: its own cancel ended the dial, which is
		// no fault of the broker's or the client's.
		c.event(Event{Kind: EventClose, Detail: "the proxy stopped while connecting to the broker"})
		return
	}
	if err != nil && c.looped.Load() {
		c.event(Event{Kind: EventClose, Detail: "connection loop"}) // said where it was found
		return
	}
	if err != nil {
		c.unreachable(err)
		return
	}
	local := connKey(up.LocalAddr(), up.RemoteAddr())
	c.p.mu.Lock()
	closed := c.p.closed
	c.upstream = up
	// The one who registers last, this dial or the accept at the other
	// end, sees the other. The other end, a client connection of this
	// proxy, must not dial on: it is marked too.
	back := c.p.accepted[local]
	if back != nil {
		back.looped.Store(true)
	}
	found := back != nil && !c.looped.Load()
	looped := back != nil || c.looped.Load()
	if !closed && !looped {
		c.p.dialled[local] = c
		defer func() {
			c.p.mu.Lock()
			delete(c.p.dialled, local)
			c.p.mu.Unlock()
		}()
	}
	c.p.mu.Unlock()
	if closed {
		up.Close()
		c.event(Event{Kind: EventClose, Detail: "the proxy stopped as the broker connection opened"})
		return
	}
	if looped {
		up.Close()
		if found {
			c.p.loop(c, back.base.Listener)
		}
		closeGently(c.client)
		c.event(Event{Kind: EventClose, Detail: "connection loop"})
		return
	}
	if c.p.cfg.UpstreamTLS != nil {
		tc := tls.Client(up, c.upstreamTLS())
		if err := tc.HandshakeContext(ctx); err != nil {
			up.Close()
			switch {
			case c.stopped.Load() || c.p.ctx.Err() != nil:
				c.event(Event{Kind: EventClose, Detail: "the proxy stopped while connecting to the broker"})
			case c.looped.Load():
				c.event(Event{Kind: EventClose, Detail: "connection loop"})
			default:
				c.unreachable(err)
			}
			return
		}
		c.p.mu.Lock()
		c.upstream = tc
		c.p.mu.Unlock()
		up = tc
	}
	cancel()
	defer up.Close()
	var wg sync.WaitGroup
	wg.Add(2)
	var reqBytes, respBytes int64
	go func() { defer wg.Done(); reqBytes = c.pumpRequests() }()
	go func() { defer wg.Done(); respBytes = c.pumpResponses() }()
	wg.Wait()
	c.mu.Lock()
	unanswered, evicted, notes, gone := c.pending.Len(), c.pending.Evicted, c.stopNotes, c.gone
	c.mu.Unlock()
	detail := fmt.Sprintf("closed: %d bytes from the client, %d from the broker", reqBytes, respBytes)
	if unanswered > 0 {
		detail += ", " + english.Count(unanswered, "request") + " unanswered"
	}
	if evicted > 0 {
		detail += fmt.Sprintf(", %s not paired (more than %d awaited responses at once)", english.Count(evicted, "request"), maxPending)
	}
	if c.idled.Load() {
		detail += ", idle timeout"
	}
	if gone != "" {
		detail += "; " + gone
	}
	if len(notes) > 0 {
		detail += "; the proxy stopped with " + strings.Join(notes, ", ")
	}
	c.event(Event{Kind: EventClose, Detail: detail})
}

// upstreamTLS is the TLS configuration of the connection to the broker,
// Config.UpstreamTLS: its ServerName, or else the broker's host, is
// checked against the broker's certificate.
func (c *conn) upstreamTLS() *tls.Config {
	cfg := c.p.cfg.UpstreamTLS.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(c.base.Upstream)
	}
	return cfg
}

// unreachable ends a connection whose broker could not be reached (err
// says why, a TLS handshake's too).
func (c *conn) unreachable(err error) {
	c.fault("", "upstream %s: %v; closing the client connection", c.base.Upstream, err)
	closeGently(c.client)
	c.event(Event{Kind: EventClose, Detail: "upstream unreachable"})
}

// closeGently closes a client the proxy cannot serve: FIN first, and
// what it already sent is drained (at most 1 MiB, for a second), so it
// sees an end of stream rather than a reset.
func closeGently(c net.Conn) {
	closeWrite(c)
	c.SetReadDeadline(time.Now().Add(time.Second))
	io.Copy(io.Discard, io.LimitReader(c, 1<<20))
}

// closeWrite half-closes a connection (or closes it when it cannot).
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		if cw.CloseWrite() == nil {
			return
		}
	}
	c.Close()
}

// clientGone reports a write error that says the peer has closed its
// connection (a broken pipe, a reset; on Windows its own numbers for a
// reset or an aborted connection, see goneErrnos): for a client, an
// ordinary end (a consumer that stops while its fetch is in flight),
// said in the close event rather than as a fault.
func clientGone(err error) bool {
	for _, e := range goneErrnos {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// goneNote says what a client that went away did not get of the
// response r was forwarding.
func goneNote(r *respState) string {
	if r.size > 0 {
		return fmt.Sprintf("the client went away before the broker's %s response (correlation id %d) was delivered, %d of its %d bytes read from the broker",
			r.api, r.req.CorrelationID, max(r.seen, r.hn), r.size)
	}
	return "the client went away before all the broker's bytes were delivered"
}

// quiet reports errors that are an ordinary end of a connection.
func quiet(err error) bool {
	return err == nil || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded)
}

// framer follows the request frame boundaries as bytes pass; it needs a
// frame's first 12 bytes (size, key, version, correlation id).
type framer struct {
	hdr     [12]byte
	hn      int       // header bytes seen of the current frame
	size    int       // bytes of the current frame, size prefix included (0: not known yet)
	seen    int       // bytes of the current frame seen
	body    frameBody // the frame being collected for decoding
	collect bool      // the current frame is being collected
	resv    int       // decode queue bytes reserved for body
	lost    bool      // framing lost: bytes pass without framing
	raw     bool      // the frame is a raw SASL token (legacy SaslHandshake v0)
	// legacyHandshake marks a SaslHandshake v0 request, whose first bytes
	// are kept in handshake to read its mechanism.
	legacyHandshake bool
	handshake       []byte
}

// mid reports whether a frame has started but not ended.
func (f *framer) mid() bool { return f.hn > 0 || f.seen > 0 }

// pumpRequests forwards client bytes to the broker, noting each request's
// API, version and correlation id before its bytes go on.
func (c *conn) pumpRequests() int64 {
	buf := make([]byte, readBuf)
	f := &framer{}
	var total int64
	defer closeWrite(c.upstream)
	defer func() { c.p.q.release(c.q, f.resv) }() // a frame cut short gives back its queue space
	for {
		n, err := c.readFrom(c.client, buf, &c.clientRead)
		if n > 0 {
			total += int64(n)
			c.frameRequests(f, buf[:n])
			if _, werr := c.writeTo(c.upstream, buf[:n], &c.upWrite); werr != nil {
				c.cut("request", fmt.Sprintf("%d bytes read from the client not forwarded to the broker", n),
					"writing to the broker: %v; %d bytes read from the client could not be forwarded", werr, n)
				c.client.Close()
				return total
			}
		}
		if err != nil {
			if errors.Is(err, errIdle) {
				return total
			}
			if f.mid() && !f.lost {
				c.cut("request", fmt.Sprintf("a request frame cut short (%d of %d bytes forwarded)", f.seen, f.size),
					"client closed in the middle of a request frame: %d of %d bytes received and forwarded", f.seen, f.size)
			} else if !quiet(err) {
				c.fault("request", "reading from the client: %v", err)
			}
			return total
		}
	}
}

// frameRequests advances the request framer over data.
func (c *conn) frameRequests(f *framer, data []byte) {
	for len(data) > 0 && !f.lost {
		if f.size == 0 {
			if f.hn < 4 {
				k := copy(f.hdr[f.hn:4], data)
				f.hn += k
				data = data[k:]
				if f.hn < 4 {
					return
				}
			}
			size32, _ := frames.Size(f.hdr[:])
			size := int(size32)
			if c.legacyLeft > 0 {
				// After a SaslHandshake v0: raw SASL tokens, a size prefix
				// and no Kafka header. With the mechanism unknown, a frame
				// that reads as a known request ends the exchange.
				raw := !c.legacyUnknown || size < 8
				if !raw {
					k := copy(f.hdr[f.hn:frames.RequestHeaderLen], data)
					f.hn += k
					data = data[k:]
					if f.hn < frames.RequestHeaderLen {
						return
					}
					key, ver, _, _ := frames.PeekRequest(f.hdr[:])
					raw = !c.p.reg.HasRequest(key, ver)
				}
				if !raw {
					c.legacyLeft = 0
				} else {
					if !frames.InRange(size32, 0, c.p.cfg.MaxFrame) {
						f.lost = true
						c.fault("request", "SASL token size prefix %d is out of range (at byte %d of the client's stream): framing stops, bytes still pass", size, c.reqOff)
						return
					}
					c.legacyLeft--
					f.raw, f.size, f.seen = true, 4+size, f.hn
					f.collect = f.size <= c.p.cfg.MaxBuffer
					c.collect(&f.collect, &f.body, &f.resv, f.size, f.hdr[:f.hn])
				}
			}
		}
		if f.size == 0 {
			k := copy(f.hdr[f.hn:frames.RequestHeaderLen], data)
			f.hn += k
			data = data[k:]
			if f.hn < frames.RequestHeaderLen {
				return
			}
			size, _ := frames.Size(f.hdr[:])
			if !frames.InRange(size, 8, c.p.cfg.MaxFrame) {
				f.lost = true
				c.fault("request", "request size prefix %d is out of range (at byte %d of the client's stream): framing stops, bytes still pass", size, c.reqOff)
				return
			}
			key, ver, corr, _ := frames.PeekRequest(f.hdr[:])
			c.mu.Lock()
			c.pending.Add(pairing.Request{APIKey: key, Version: ver, CorrelationID: corr, Time: time.Now(), Size: frames.SizeLen + int(size)})
			c.mu.Unlock()
			f.size, f.seen = frames.SizeLen+int(size), frames.RequestHeaderLen
			f.legacyHandshake = key == keySaslHandshake && ver == 0
			big := f.size > c.p.cfg.MaxBuffer
			if big {
				name := "unknown-API"
				if api, ok := c.p.reg.API(key); ok {
					name = api.Name
				}
				c.bigFrame("request", name, f.size, false)
			}
			f.collect = !big
			c.collect(&f.collect, &f.body, &f.resv, f.size, f.hdr[:])
			if f.legacyHandshake {
				f.handshake = append(f.handshake, f.hdr[:]...)
			}
		}
		k := min(len(data), f.size-f.seen)
		c.collect(&f.collect, &f.body, &f.resv, f.size, data[:k])
		if f.legacyHandshake && len(f.handshake) < maxHandshake {
			f.handshake = append(f.handshake, data[:min(k, maxHandshake-len(f.handshake))]...)
		}
		f.seen += k
		data = data[k:]
		if f.seen == f.size {
			kind := kindRequest
			if f.raw {
				kind = kindRawRequest
				c.mu.Lock()
				c.pending.Add(pairing.Request{Raw: true, Time: time.Now()}) // the server's token
				c.mu.Unlock()
			}
			if f.legacyHandshake {
				c.legacyLeft, c.legacyUnknown = legacyRounds(f.handshake)
			}
			if f.collect {
				c.p.q.frame(c.q, &item{conn: c, kind: kind, body: f.body, at: time.Now(), index: c.reqIdx, offset: c.reqOff, reserved: f.resv})
			} else if f.raw {
				c.event(Event{Kind: EventSkipped, Dir: "request", Count: 1,
					Detail: fmt.Sprintf("SASL token of %d bytes is larger than the buffer cap (%d bytes): forwarded, not decoded", f.size, c.p.cfg.MaxBuffer)})
			}
			c.reqIdx++
			c.reqOff += int64(f.size)
			*f = framer{}
		}
	}
}

// keySaslHandshake is the API key of SaslHandshake, whose v0 is followed
// by raw SASL tokens.
const keySaslHandshake = 17

// maxHandshake bounds the bytes of a SaslHandshake v0 request kept to
// read its mechanism.
const maxHandshake = 512

// legacyRounds reads the mechanism of a SaslHandshake v0 request and says
// how many raw tokens the client sends: unknown (then tokens are
// recognised as not reading as requests) for a mechanism not known.
func legacyRounds(b []byte) (rounds int, unknown bool) {
	mech := ""
	if len(b) >= 14 {
		off := 12
		if n := int(int16(binary.BigEndian.Uint16(b[off:]))); n >= 0 { // client id
			off += 2 + n
		} else {
			off += 2
		}
		if off+2 <= len(b) {
			if n := int(int16(binary.BigEndian.Uint16(b[off:]))); n >= 0 && off+2+n <= len(b) {
				mech = string(b[off+2 : off+2+n])
			}
		}
	}
	if n := redact.Rounds(mech); n > 0 {
		return n, false
	}
	return 1 << 20, true
}

// bigFrame logs a frame larger than Config.MaxBuffer, which is forwarded
// as it arrives without being decoded: a fault when it is a response whose
// broker addresses therefore go to the client unrewritten.
func (c *conn) bigFrame(dir, api string, size int, held bool) {
	if held {
		c.fault(dir, "%s %s of %d bytes is larger than the buffer cap (%d bytes): forwarded as it arrives, broker addresses not rewritten", api, dir, size, c.p.cfg.MaxBuffer)
		return
	}
	c.event(Event{Kind: EventSkipped, Dir: dir, Count: 1,
		Detail: fmt.Sprintf("%s %s of %d bytes is larger than the buffer cap (%d bytes): forwarded as it arrives, not decoded", api, dir, size, c.p.cfg.MaxBuffer)})
}

// unrewritable says, once per API and version, that responses of API
// key (named api), which advertises broker addresses, come at version v,
// newer than the spec's newest (hi): they cannot be decoded, and their
// addresses, if they have any, reach the client unrewritten.
func (c *conn) unrewritable(key int16, api string, v, hi int16) {
	if _, said := c.p.newerSaid.LoadOrStore(holdKey{key, v}, true); said {
		return
	}
	c.fault("response", "%s v%d responses are newer than the spec (up to v%d): their broker addresses, if any, reach the client unrewritten, and clients may connect to the brokers directly (said once; a newer --spec knows them)", api, v, hi)
}

// takePending removes and returns the request a response answers (and
// the requests before it, which will get no answer).
func (c *conn) takePending(corr int32) (pairing.Request, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	req, _, ok := c.pending.Answer(corr)
	return req, ok
}

// takeRaw removes the next pending answer when it is a raw SASL token.
func (c *conn) takeRaw() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pending.TakeRaw()
}

// pumpResponses forwards broker bytes to the client. Responses that
// advertise broker addresses are held until complete and rewritten; all
// others pass as they arrive.
func (c *conn) pumpResponses() int64 {
	buf := make([]byte, readBuf)
	var total int64
	defer closeWrite(c.client)
	r := &respState{}
	defer func() { c.p.q.release(c.q, r.resv) }() // a frame cut short gives back its queue space
	for {
		n, err := c.readFrom(c.upstream, buf, &c.upRead)
		if n > 0 {
			total += int64(n)
			if werr := c.frameResponses(r, buf[:n]); werr != nil {
				switch {
				case errors.Is(werr, errTailMisfit):
				case clientGone(werr) && !c.stopped.Load():
					c.mu.Lock()
					c.gone = goneNote(r)
					c.mu.Unlock()
				default:
					c.cut("response", fmt.Sprintf("up to %d bytes read from the broker not forwarded to the client", n),
						"writing to the client: %v", werr)
				}
				c.client.Close()
				c.upstream.Close()
				return total
			}
		}
		if err != nil {
			switch {
			case errors.Is(err, errIdle):
			case r.lost:
				// Framing stopped: everything read was forwarded as it came.
				if !quiet(err) {
					c.fault("response", "reading from the broker: %v", err)
				}
			case r.hold != nil:
				// A held response cut short: forward what came, untouched
				// (unless the proxy is stopping: its client is closed).
				if !c.stopped.Load() {
					if _, werr := c.writeTo(c.client, r.hold[r.sent:], &c.clientWrite); werr != nil {
						c.fault("response", "writing to the client: %v", werr)
					}
				}
				c.cut("response", fmt.Sprintf("a held %s response cut short (%d of %d bytes received, %d forwarded)", r.api, len(r.hold), r.size, r.sent),
					"broker closed in the middle of a %s response: %d of %d bytes received and forwarded", r.api, len(r.hold), r.size)
			case r.hn > 0 || r.seen > 0:
				if r.hn > 0 && r.size == 0 {
					c.writeTo(c.client, r.hdr[:r.hn], &c.clientWrite)
				}
				c.cut("response", fmt.Sprintf("a response frame cut short (%d of %d bytes forwarded)", max(r.seen, r.hn), r.size),
					"broker closed in the middle of a response frame: %d of %d bytes received and forwarded", max(r.seen, r.hn), r.size)
			case !quiet(err):
				c.fault("response", "reading from the broker: %v", err)
			}
			return total
		}
	}
}

// respState follows response frames.
type respState struct {
	hdr     [8]byte
	hn      int
	size    int // frame bytes, size prefix included
	seen    int
	req     pairing.Request
	paired  bool
	api     string
	hold    []byte    // the whole frame, held for rewriting
	tail    bool      // hold is forwarded as it comes but for its last tailHold bytes
	sent    int       // bytes of hold forwarded (tail)
	body    frameBody // copy for decoding
	collect bool
	resv    int // decode queue bytes reserved for body
	lost    bool
	// rawChecked says whether the frame was checked for being a raw SASL
	// token (raw) of the legacy SaslHandshake v0 exchange.
	rawChecked, raw bool
}

// frameResponses forwards data, holding address-advertising responses.
// What one call forwards goes to the client in as few writes as it can
// (see [clientWriter]): the header and body of a small response in one.
func (c *conn) frameResponses(r *respState, data []byte) error {
	err := c.frameResponsesTo(r, data)
	if ferr := c.out.flush(c); err == nil {
		err = ferr
	}
	return err
}

func (c *conn) frameResponsesTo(r *respState, data []byte) error {
	if r.lost {
		err := c.out.send(c, data)
		return err
	}
	for len(data) > 0 {
		if r.size == 0 && !r.rawChecked {
			k := copy(r.hdr[r.hn:4], data)
			r.hn += k
			data = data[k:]
			if r.hn < 4 {
				return nil
			}
			r.rawChecked = true
			if c.takeRaw() {
				// The broker's raw SASL token (legacy SaslHandshake v0): a
				// size prefix, no correlation id; it may be empty.
				size32, _ := frames.Size(r.hdr[:])
				size := int(size32)
				if err := c.out.send(c, r.hdr[:4]); err != nil {
					return err
				}
				if !frames.InRange(size32, 0, c.p.cfg.MaxFrame) {
					r.lost = true
					c.fault("response", "SASL token size prefix %d is out of range (at byte %d of the broker's stream): framing stops, bytes still pass", size, c.respOff)
					err := c.out.send(c, data)
					return err
				}
				r.raw, r.size, r.seen, r.api = true, 4+size, 4, "SASL token"
				r.collect = r.size <= c.p.cfg.MaxBuffer
				if !r.collect {
					c.event(Event{Kind: EventSkipped, Dir: "response", Count: 1,
						Detail: fmt.Sprintf("SASL token of %d bytes is larger than the buffer cap (%d bytes): forwarded, not decoded", r.size, c.p.cfg.MaxBuffer)})
				}
				c.collect(&r.collect, &r.body, &r.resv, r.size, r.hdr[:4])
			}
		}
		if r.size == 0 {
			k := copy(r.hdr[r.hn:frames.ResponseHeaderLen], data)
			r.hn += k
			data = data[k:]
			if r.hn < frames.ResponseHeaderLen {
				return nil
			}
			size32, _ := frames.Size(r.hdr[:])
			size := int(size32)
			if !frames.InRange(size32, 4, c.p.cfg.MaxFrame) {
				r.lost = true
				c.fault("response", "response size prefix %d is out of range (at byte %d of the broker's stream): framing stops, bytes still pass", size, c.respOff)
				if err := c.out.send(c, r.hdr[:]); err != nil {
					return err
				}
				err := c.out.send(c, data)
				return err
			}
			corr, _ := frames.PeekResponse(r.hdr[:])
			r.size, r.seen = frames.SizeLen+size, frames.ResponseHeaderLen
			r.req, r.paired = c.takePending(corr)
			r.api = "unknown-API"
			if api, ok := c.p.reg.API(r.req.APIKey); ok && r.paired {
				r.api = api.Name
			}
			hold := r.paired && c.p.rewrite[holdKey{r.req.APIKey, r.req.Version}]
			if hi, ok := c.p.newest[r.req.APIKey]; ok && r.paired && r.req.Version > hi {
				c.unrewritable(r.req.APIKey, r.api, r.req.Version, hi)
			}
			big := r.size > c.p.cfg.MaxBuffer
			if big {
				c.bigFrame("response", r.api, r.size, hold)
			}
			if hold && !big {
				r.hold = newFrameBuf(r.size, r.hdr[:])
				if t := c.p.tail[holdKey{r.req.APIKey, r.req.Version}]; t != nil && t.Load() && r.size > tailHold {
					r.tail = true
					if err := c.forwardHeld(r); err != nil {
						return err
					}
				}
			} else {
				if err := c.out.send(c, r.hdr[:]); err != nil {
					return err
				}
				r.collect = !big
				c.collect(&r.collect, &r.body, &r.resv, r.size, r.hdr[:])
			}
		}
		k := min(len(data), r.size-r.seen)
		chunk := data[:k]
		data = data[k:]
		r.seen += k
		if r.hold != nil {
			r.hold = appendHeld(r.hold, chunk, r.size)
			if r.tail {
				if err := c.forwardHeld(r); err != nil {
					return err
				}
			}
		} else {
			if err := c.out.send(c, chunk); err != nil {
				return err
			}
			c.collect(&r.collect, &r.body, &r.resv, r.size, chunk)
		}
		if r.seen < r.size {
			continue
		}
		now := time.Now()
		if r.hold != nil {
			fit := 0
			if r.tail {
				fit = len(r.hold)
			}
			out, moved, grew, derr := c.rewriteResponse(r.hold, r.req, fit)
			rewritten := moved.any()
			if r.tail && rewritten && (len(out) != len(r.hold) || !bytes.Equal(out[:r.sent], r.hold[:r.sent])) {
				return c.tailMisfit(r, moved)
			}
			if grew != "" {
				c.tailsOff(r.api, grew)
			}
			if err := c.out.send(c, out[r.sent:]); err != nil {
				return err
			}
			if derr != nil {
				c.fault("response", "%s response (correlation id %d) did not decode, forwarded untouched: %v", r.api, r.req.CorrelationID, derr)
			}
			if rewritten {
				c.event(Event{Kind: EventRewrite, Dir: "response", Time: now,
					Detail: fmt.Sprintf("%s response (correlation id %d): broker addresses rewritten to proxy listeners: %s (%d bytes from the broker, %d forwarded)",
						r.api, r.req.CorrelationID, moved, len(r.hold), len(out))})
			}
			it := &item{conn: c, kind: kindResponse, data: out, req: r.req, paired: true, at: now, rewritten: rewritten, index: c.respIdx, offset: c.respOff, held: r.hold}
			c.respIdx++
			c.respOff += int64(len(out))
			if rewritten {
				it.original = r.hold
			}
			c.p.q.reserveWhole(c.q, it, len(it.data)+len(it.original))
		} else if r.collect {
			kind := kindResponse
			if r.raw {
				kind = kindRawResponse
			}
			c.p.q.frame(c.q, &item{conn: c, kind: kind, body: r.body, req: r.req, paired: r.paired, at: now, index: c.respIdx, offset: c.respOff, reserved: r.resv})
		}
		if r.hold == nil {
			c.respIdx++
			c.respOff += int64(r.size)
		}
		*r = respState{}
	}
	return nil
}

// tailHold is how much of a tail-held response (one whose broker
// addresses all sit in its top-level tagged fields, which come last:
// Fetch and Produce's NodeEndpoints) the proxy holds until the frame is
// complete; the bytes before it go to the client as they arrive, where a
// whole-held response would wait for its last byte (a fetch of
// megabytes). 64 KiB holds the NodeEndpoints of about 1,500 brokers.
const tailHold = 64 << 10

// forwardHeld forwards what has arrived of a tail-held response, but for
// its last tailHold bytes.
func (c *conn) forwardHeld(r *respState) error {
	upto := min(len(r.hold), r.size-tailHold)
	if upto <= r.sent {
		return nil
	}
	err := c.out.send(c, r.hold[r.sent:upto])
	r.sent = upto
	return err
}

// errTailMisfit ends a response pump whose tail-held response, rewritten,
// no longer fits what was forwarded of it.
var errTailMisfit = errors.New("a rewritten response does not fit the bytes already forwarded")

// tailMisfit handles a tail-held response whose rewritten addresses do
// not fit the bytes already forwarded (a proxy address longer than the
// broker's, which padding cannot make up, or a re-encoding that differs
// before the tail): the rest cannot be sent, and the broker's addresses
// must not reach the client, so the client connection is closed (the
// client reconnects through the proxy and asks again), and this API and
// version are held whole from then on.
func (c *conn) tailMisfit(r *respState, moved *moves) error {
	if t := c.p.tail[holdKey{r.req.APIKey, r.req.Version}]; t != nil {
		t.Store(false)
	}
	c.fault("response", "%s response (correlation id %d): its rewritten broker addresses (%s) do not fit the %d of %d bytes already forwarded: closing the client connection (it reconnects through the proxy); %s v%d responses are held whole from now on",
		r.api, r.req.CorrelationID, moved, r.sent, r.size, r.api, r.req.Version)
	return errTailMisfit
}

// tailsOff stops tail holding for every API, once a rewrite (of
// response api) replaced a broker address by a longer one (grew says
// which): that broker's address in the NodeEndpoints of a tail-held
// Fetch or Produce response could not be rewritten within the bytes
// already forwarded, and the client connection would have to be closed
// (conn.tailMisfit). Clients ask for Metadata before they fetch or
// produce, so this is learnt before the first such response.
func (c *conn) tailsOff(api, grew string) {
	if !c.p.tailsOff.CompareAndSwap(false, true) {
		return
	}
	for _, t := range c.p.tail {
		t.Store(false)
	}
	c.event(Event{Kind: EventRewrite, Dir: "response", Detail: fmt.Sprintf(
		"%s response: a proxy listener's address is longer than the broker's it replaces (%s): responses whose addresses come at their end (Fetch, Produce) are held whole from now on, so that theirs can be rewritten", api, grew)})
}

// coalesceMax is the most a client write gathers; bigger pieces go out
// on their own.
const coalesceMax = 64 << 10

// clientWriter gathers the bytes a response pump forwards while it
// frames one read, so that they reach the client in one write rather than
// one per header and body piece. Its buffer is reused from read to read.
type clientWriter struct{ buf []byte }

// send forwards b: gathered, or written at once (after what is gathered)
// when it is large.
func (w *clientWriter) send(c *conn, b []byte) error {
	if len(w.buf)+len(b) <= coalesceMax {
		w.buf = append(w.buf, b...)
		return nil
	}
	if err := w.flush(c); err != nil {
		return err
	}
	if len(b) <= coalesceMax {
		w.buf = append(w.buf, b...)
		return nil
	}
	_, err := c.writeTo(c.client, b, &c.clientWrite)
	return err
}

// flush writes what is gathered.
func (w *clientWriter) flush(c *conn) error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := c.writeTo(c.client, w.buf, &c.clientWrite)
	w.buf = w.buf[:0]
	return err
}

// rewriteResponse decodes a held response, replaces advertised broker
// addresses and re-encodes it; moved lists the addresses replaced ("node
// 1 10.0.0.2:9092 -> 127.0.0.1:40123"), none when nothing was. On any
// failure the input comes back unchanged, with the error.
//
// With fit above zero the response must stay fit bytes long: a shorter
// one is padded with an unknown top-level tagged field (padTo); when it
// cannot be, out is the unpadded response (of another length).
//
// grew names the first address whose replacement is longer ("" when none
// is): a tail-held response naming that broker could not be rewritten
// within the bytes already forwarded (conn.tailsOff).
func (c *conn) rewriteResponse(b []byte, req pairing.Request, fit int) (out []byte, moved *moves, grew string, err error) {
	moved = &moves{}
	api, ok := c.p.reg.API(req.APIKey)
	if !ok {
		return b, &moves{}, "", fmt.Errorf("unknown API key %d", req.APIKey)
	}
	f, err := c.p.rewriter.DecodeResponse(b, api, req.Version, codec.Options{OpaqueRecords: true})
	if err != nil {
		return b, &moves{}, "", err
	}
	remap := func(node int32, host string, port int32) (string, int32, bool) {
		h, p, ok := c.p.listenerFor(node, host, port)
		if ok && (h != host || p != port) {
			m := fmt.Sprintf("node %d %s -> %s", node, hostPort(host, port), hostPort(h, p))
			moved.add(m)
			if grew == "" && len(h) > len(host) {
				grew = m
			}
		}
		return h, p, ok
	}
	if !rewriteAddresses(f, remap) {
		return b, &moves{}, "", nil
	}
	out, err = c.p.rewriter.EncodeResponse(make([]byte, 0, len(b)+64), f)
	if err != nil {
		return b, &moves{}, "", fmt.Errorf("re-encoding with rewritten addresses: %w", err)
	}
	if fit > 0 && len(out) < fit {
		if padded, ok := c.padTo(f, len(out), fit); ok {
			out = padded
		}
	}
	return out, moved, grew, nil
}

// moves lists, for a rewrite's events, the addresses it replaced: the
// first maxMovesShown, and how many more. A response may name millions
// of brokers; listing each made an event of megabytes (more than a
// decoding process takes in one record) and held a string for each on
// the forwarding path. A replacement is counted once (the same node may
// be named in several places) among the first maxMovesSeen; beyond, each
// counts.
type moves struct {
	shown []string
	more  int
	seen  map[string]bool
}

// Bounds of [moves].
const (
	maxMovesShown = 16
	maxMovesSeen  = 1024
)

// add notes replacement s.
func (m *moves) add(s string) {
	if m.seen[s] {
		return
	}
	if len(m.seen) < maxMovesSeen {
		if m.seen == nil {
			m.seen = map[string]bool{}
		}
		m.seen[s] = true
	}
	if len(m.shown) < maxMovesShown {
		m.shown = append(m.shown, s)
	} else {
		m.more++
	}
}

// any reports whether an address was replaced.
func (m *moves) any() bool { return len(m.shown) > 0 }

// String lists the replacements shown and counts the others.
func (m *moves) String() string {
	s := strings.Join(m.shown, ", ")
	if m.more > 0 {
		s += fmt.Sprintf(", and %d more", m.more)
	}
	return s
}

// padTags are the tag numbers a rewritten tail is padded with, one, two
// and three bytes long as varints, far above any tag Kafka's specs use
// (clients keep or skip tags they do not know).
var padTags = [...]uint32{127, 16383, 2097151}

// padTo re-encodes f, which encodes to have bytes, with one more unknown
// top-level tagged field, of zeros, so that the frame is exactly want
// bytes; false when no such field makes it so (f is then left as it was).
func (c *conn) padTo(f *codec.Frame, have, want int) ([]byte, bool) {
	base := f.Body.Unknown()
	short := want - have
	for _, tag := range padTags {
		if slices.ContainsFunc(base, func(t codec.RawTag) bool { return t.Tag == tag }) {
			continue
		}
		// The field's bytes: its tag, its length and the zeros, and
		// perhaps one more byte of the tagged fields' count.
		for fill := max(0, short-8); fill <= short; fill++ {
			if n := wire.UvarintLen(tag) + wire.UvarintLen(uint32(fill)) + fill; n < short-1 || n > short {
				continue
			}
			tags := append(slices.Clone(base), codec.RawTag{Tag: tag, Data: make([]byte, fill)})
			slices.SortFunc(tags, func(a, b codec.RawTag) int { return cmp.Compare(a.Tag, b.Tag) })
			f.Body.SetUnknown(tags)
			if out, err := c.p.rewriter.EncodeResponse(make([]byte, 0, want), f); err == nil && len(out) == want {
				return out, true
			}
		}
	}
	f.Body.SetUnknown(base)
	return nil, false
}
