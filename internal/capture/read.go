package capture

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/manifester/manifester/internal/ngsecrets"
	"github.com/manifester/manifester/internal/pairing"
	"github.com/manifester/manifester/internal/tlsdecrypt"
)

// Defaults for [Options].
const (
	DefaultMaxFrame   = 100 << 20 // Kafka's default socket.request.max.bytes
	DefaultMaxPending = 4096
	// DefaultMaxPendingTotal bounds the requests awaiting a response
	// over all connections followed: about 48 bytes each, so about 12 MB
	// (and at most four times that in room not yet given back).
	DefaultMaxPendingTotal = 1 << 18
	DefaultMaxBuffered     = 16384 // out-of-order pages of 1,900 bytes: about 31 MB
	// DefaultMaxConns is how many connections are followed at once: a
	// connection costs about a kilobyte or two while it is followed, so
	// this holds a capture of any number of connections under about 70 MB
	// of them.
	DefaultMaxConns = 1 << 15
	// flushEvery is how many packets pass between flushes of idle
	// connections; idleAfter is how long (in capture time) a connection
	// with no packets stays open.
	flushEvery = 1 << 14
	idleAfter  = 2 * time.Minute
)

// Options control [Read].
type Options struct {
	// Ports selects connections with an endpoint on one of these TCP
	// ports, and names that endpoint the server. Empty: every TCP
	// connection whose first client bytes read as a Kafka request.
	Ports []int
	// Known reports whether key is an API key with version valid; it is
	// how frame boundaries are recognised when resynchronising. Required.
	Known func(key, version int16) bool
	// Verify, when set, confirms the first frame after a boundary found by
	// resynchronisation (typically: it decodes cleanly); req is the paired
	// request of a response, or nil for a response whose request was not
	// captured (the first bytes of a server's half captured mid-connection:
	// confirm it as some response of the spec, or refuse). A false answer
	// resumes the search one byte further on.
	Verify func(frame []byte, dir Dir, req *Request) bool
	// MaxFrame is the largest frame accepted (default [DefaultMaxFrame]);
	// a larger size prefix means the stream is out of sync.
	MaxFrame int
	// MaxPending bounds the requests awaiting a response per connection
	// (default [DefaultMaxPending]); the oldest is dropped beyond it.
	MaxPending int
	// MaxPendingTotal bounds them over all connections followed (default
	// [DefaultMaxPendingTotal]): beyond it, a connection adding a request
	// drops its own oldest waiting one. Both are counted as unanswered.
	MaxPendingTotal int
	// readerHook, in tests, is given the reader before it reads.
	readerHook func(*reader)
	// MaxBuffered bounds the reassembler's out-of-order data over all
	// connections, in pages of 1,900 bytes (default [DefaultMaxBuffered];
	// a segment counts its bytes, and at least a page);
	// one connection may hold a quarter of it (at least 64 pages). Beyond
	// that the missing bytes are declared a gap.
	MaxBuffered int
	// MaxConns bounds the connections followed at once (default
	// [DefaultMaxConns]). Beyond it, the connections quiet longest are
	// finished early, as at the end of the capture (their buffered bytes
	// delivered, their requests still awaiting a response said), and
	// counted in [Stats.Evicted]; a later packet of one with bytes starts
	// it again as a connection joined midway.
	MaxConns int
	// Progress, when set, is called now and then with the number of bytes
	// of the file read so far.
	Progress func(read int64)
	// Closed, when set, is called once for each connection that carried
	// Kafka frames, after its last event: at its end in the capture (both
	// FINs, a RST, idle for long, evicted, or the capture's end). What a
	// caller keeps per connection can go then.
	Closed func(*Conn)
	// TLSKeys, when set, holds TLS secrets (a key log): a connection whose
	// first bytes are a TLS record is decrypted with them and read as any
	// other. The secrets of a pcapng file's Decryption Secrets Blocks are
	// added to it as they are read (to a key log of the read's own when
	// TLSKeys is nil).
	TLSKeys *tlsdecrypt.KeyLog
	// MidwayTrials, when set, bounds the work of joining TLS 1.3
	// sessions midway (see docs/capture.md) for the whole read, in AES
	// key stream blocks; 0: about half a second's, and more for every
	// byte probed.
	MidwayTrials int64
}

// maxCaptureSecrets bounds the key log text a capture's Decryption
// Secrets Blocks add to the TLS secrets, over the whole file (one block
// may hold as much; a key log costs some 2.4 times its size in memory).
// A variable, for tests.
var maxCaptureSecrets = 16 << 20

// ErrFormat is returned for input that is neither pcap nor pcapng.
var ErrFormat = errors.New("not a pcap or pcapng file")

// packetSource abstracts pcapgo's two readers.
type packetSource interface {
	ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error)
}

// Read reads a pcap or pcapng capture from r and calls fn for every Kafka
// frame, in capture order. It stops at the first error fn returns. A
// capture cut short (a truncated last packet) is read up to the cut and
// reported as an error after the frames before it.
func Read(r io.Reader, opts Options, fn func(*Event) error) (st Stats, err error) {
	if opts.Known == nil {
		return Stats{}, errors.New("capture: Options.Known is required")
	}
	if opts.MaxFrame <= 0 {
		opts.MaxFrame = DefaultMaxFrame
	}
	if opts.MaxPending <= 0 {
		opts.MaxPending = DefaultMaxPending
	}
	if opts.MaxPendingTotal <= 0 {
		opts.MaxPendingTotal = DefaultMaxPendingTotal
	}
	if opts.MaxBuffered <= 0 {
		opts.MaxBuffered = DefaultMaxBuffered
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	cr := &countingReader{r: r}
	// A pcapng file's Decryption Secrets Blocks add to the TLS secrets
	// as they pass, before the packets after them are read.
	keys := opts.TLSKeys
	if keys == nil {
		keys = tlsdecrypt.NewKeyLog()
	}
	var secretBlocks, otherSecrets, secretsSkipped, secretBytes int64
	sniff := ngsecrets.Sniff(cr, func(typ uint32, data []byte) error {
		if typ != ngsecrets.TypeTLSKeyLog {
			otherSecrets++
			return nil
		}
		if secretBytes+int64(len(data)) > int64(maxCaptureSecrets) {
			secretsSkipped++
			return nil
		}
		secretBytes += int64(len(data))
		secretBlocks++
		return keys.Read(bytes.NewReader(data), fmt.Sprintf("the capture's TLS key log block %d", secretBlocks))
	})
	br := bufio.NewReaderSize(sniff, 1<<16)
	magic, err := br.Peek(4)
	if err != nil {
		return Stats{}, fmt.Errorf("%w: %d bytes", ErrFormat, len(magic))
	}
	var src packetSource
	// oversized counts the packets skipped for their length.
	var oversized *int64
	var linkOf func(ci gopacket.CaptureInfo) layers.LinkType
	switch {
	case bytes.Equal(magic, pcapngMagic):
		guard := &ngGuard{r: br}
		ng, err := pcapgo.NewNgReader(guard, pcapgo.NgReaderOptions{WantMixedLinkType: true, SkipUnknownVersion: true})
		if err != nil {
			return Stats{}, fmt.Errorf("pcapng header: %w", err)
		}
		src, oversized = ng, &guard.oversized
		linkOf = func(ci gopacket.CaptureInfo) layers.LinkType {
			if len(ci.AncillaryData) > 0 {
				if lt, ok := ci.AncillaryData[0].(layers.LinkType); ok {
					return lt
				}
			}
			return ng.LinkType()
		}
	case isPcapMagic(magic):
		pr, err := newPcapReader(br)
		if err != nil {
			return Stats{}, fmt.Errorf("pcap header: %w", err)
		}
		src, oversized = pr, &pr.oversized
		lt := pr.linkType
		linkOf = func(gopacket.CaptureInfo) layers.LinkType { return lt }
	default:
		return Stats{}, fmt.Errorf("%w: starts % x", ErrFormat, magic)
	}

	opts.TLSKeys = keys
	rd := newReader(opts, fn)
	defer rd.release()
	defer func() { // st is what every return below gives
		st.TLS.KeyLogBlocks, st.TLS.OtherSecrets, st.TLS.SecretsSkipped = secretBlocks, otherSecrets, secretsSkipped
		if oversized != nil {
			st.Oversized = *oversized
			st.Packets += st.Oversized
		}
		if err := sniff.Err(); err != nil {
			st.TLS.SecretsError = err.Error()
		}
	}()
	var lastFlush time.Time
	for {
		data, ci, err := src.ZeroCopyReadPacketData()
		if err != nil {
			rd.finish()
			rd.stats.Bytes = cr.n
			if errors.Is(err, io.EOF) {
				return rd.stats, rd.err
			}
			if rd.err != nil {
				return rd.stats, rd.err
			}
			// A pcapng block the sniffer found malformed before where the
			// reader stopped (pcapgo reads from br itself, so that is
			// cr.n-br.Buffered()) is why it stopped: a packet's captured
			// length past its block has it read the blocks after it as
			// data, often to the end of the file, which is no file cut
			// short.
			var be *ngsecrets.BlockError
			if errors.As(sniff.Err(), &be) && errors.Is(be, ngsecrets.ErrMalformed) && be.Offset < cr.n-int64(br.Buffered()) {
				return rd.stats, fmt.Errorf("reading packet %d: %w; the capture is malformed (not cut short): nothing from offset %d on is read", rd.stats.Packets+1, be, be.Offset)
			}
			return rd.stats, fmt.Errorf("reading packet %d (file offset about %d): %w", rd.stats.Packets+1, cr.n, err)
		}
		rd.stats.Packets++
		rd.packet(data, ci, linkOf(ci))
		if rd.err != nil {
			rd.stats.Bytes = cr.n
			return rd.stats, rd.err
		}
		if rd.stats.Packets%flushEvery == 0 {
			if opts.Progress != nil {
				opts.Progress(cr.n)
			}
			if !rd.last.IsZero() && rd.last.Sub(lastFlush) > idleAfter/4 {
				rd.flushIdle(rd.last.Add(-idleAfter))
				lastFlush = rd.last
			}
		}
	}
}

func isPcapMagic(m []byte) bool {
	for _, x := range [][]byte{{0xd4, 0xc3, 0xb2, 0xa1}, {0xa1, 0xb2, 0xc3, 0xd4}, {0x4d, 0x3c, 0xb2, 0xa1}, {0xa1, 0xb2, 0x3c, 0x4d}} {
		if bytes.Equal(m, x) {
			return true
		}
	}
	return false
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// reader holds the state of one Read.
type reader struct {
	opts  Options
	fn    func(*Event) error
	err   error
	stats Stats
	ports map[uint16]bool
	last  time.Time
	// conns are the connections being reassembled; connSeq numbers them
	// as they are first seen, numbered the ones that carried frames.
	conns    map[connKey]*tcpConn
	connSeq  int64
	numbered int
	// buffered is the out-of-order data held over all connections.
	buffered, maxBufTotal, maxBufConn int
	// pending counts the requests awaiting a response over all
	// connections, bounded by Options.MaxPendingTotal.
	pending pairing.Pool
	// keys are the TLS secrets (Options.TLSKeys, and the file's own);
	// probing is the bytes probes hold (tls.go).
	keys    *tlsdecrypt.KeyLog
	probing int
	// joinBudget is what joining TLS sessions midway may still spend;
	// each byte probed adds joinPerByte.
	joinBudget, joinPerByte int64

	eth    layers.Ethernet
	dot1q  layers.Dot1Q
	loop   layers.Loopback
	sll    layers.LinuxSLL
	sll2   layers.LinuxSLL2
	ip4    layers.IPv4
	ip6    layers.IPv6
	ip6dst ipv6Options
	tcp    layers.TCP
	udp    layers.UDP
	vxlan  layers.VXLAN
	geneve geneve
	gre    layers.GRE
	erspan layers.ERSPANII
}

func newReader(opts Options, fn func(*Event) error) *reader {
	rd := &reader{opts: opts, fn: fn, conns: map[connKey]*tcpConn{}, keys: opts.TLSKeys, joinBudget: joinBase}
	rd.pending.Max = opts.MaxPendingTotal
	if opts.readerHook != nil {
		opts.readerHook(rd)
	}
	rd.joinPerByte = joinPerByte
	if opts.MidwayTrials > 0 {
		rd.joinBudget, rd.joinPerByte = opts.MidwayTrials, 0
	}
	if rd.keys == nil {
		rd.keys = tlsdecrypt.NewKeyLog()
	}
	if len(opts.Ports) > 0 {
		rd.ports = map[uint16]bool{}
		for _, p := range opts.Ports {
			rd.ports[uint16(p)] = true
		}
	}
	rd.maxBufTotal = opts.MaxBuffered * bufPage
	rd.maxBufConn = max(opts.MaxBuffered/4, 64) * bufPage
	return rd
}

func (rd *reader) release() { rd.conns = nil }

// firstLayer maps a link type to the layer its packets start with.
func firstLayer(lt layers.LinkType, data []byte) (gopacket.LayerType, bool) {
	switch lt {
	case layers.LinkTypeEthernet:
		return layers.LayerTypeEthernet, true
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		return layers.LayerTypeLoopback, true
	case layers.LinkTypeLinuxSLL:
		return layers.LayerTypeLinuxSLL, true
	case layers.LinkTypeLinuxSLL2:
		return layers.LayerTypeLinuxSLL2, true
	case layers.LinkTypeIPv4:
		return layers.LayerTypeIPv4, true
	case layers.LinkTypeIPv6:
		return layers.LayerTypeIPv6, true
	case layers.LinkTypeRaw, 12: // 12: the raw-IP DLT some BSDs use
		if len(data) > 0 && data[0]>>4 == 6 {
			return layers.LayerTypeIPv6, true
		}
		return layers.LayerTypeIPv4, true
	}
	return 0, false
}

func (rd *reader) packet(data []byte, ci gopacket.CaptureInfo, lt layers.LinkType) {
	first, ok := firstLayer(lt, data)
	if !ok {
		if rd.stats.OtherLinks == nil {
			rd.stats.OtherLinks = map[string]int64{}
		}
		rd.stats.OtherLinks[fmt.Sprintf("link type %d", lt)]++
		return
	}
	res, srcIP, dstIP, tunnel := rd.walk(first, data)
	switch res {
	case layersUndecodable:
		rd.stats.Undecodable++
		return
	case layersFragment:
		rd.stats.Fragments++
		return // fragments are not reassembled
	case layersNotTCP:
		rd.stats.NotTCP++
		return
	}
	if rd.ports != nil && !rd.ports[uint16(rd.tcp.SrcPort)] && !rd.ports[uint16(rd.tcp.DstPort)] {
		rd.stats.OtherPorts++
		return
	}
	rd.stats.TCPPackets++
	if tunnel != "" {
		if rd.stats.Tunnels == nil {
			rd.stats.Tunnels = map[string]int64{}
		}
		rd.stats.Tunnels[tunnel]++
	}
	if ci.Timestamp.After(rd.last) {
		rd.last = ci.Timestamp
	}
	src := netip.AddrPortFrom(srcIP.Unmap(), uint16(rd.tcp.SrcPort))
	dst := netip.AddrPortFrom(dstIP.Unmap(), uint16(rd.tcp.DstPort))
	rd.tcpPacket(src, dst, &rd.tcp, ci.Timestamp)
}

// finish ends every connection still open at the end of the capture.
func (rd *reader) finish() {
	rd.finishAll()
}

// newConn starts the framing of a connection whose first packet goes from
// src to dst.
func (rd *reader) newConn(src, dst netip.AddrPort, tcp *layers.TCP) *stream {
	c := &Conn{} // numbered when its first frame comes out
	firstIsClient, guessed := true, false
	switch {
	case tcp.SYN && !tcp.ACK:
		c.SawSYN = true
	case tcp.SYN && tcp.ACK:
		c.SawSYN, firstIsClient = true, false
	case rd.ports != nil:
		firstIsClient = rd.ports[uint16(tcp.DstPort)] || !rd.ports[uint16(tcp.SrcPort)]
	default:
		firstIsClient, guessed = tcp.DstPort <= tcp.SrcPort, true
	}
	if firstIsClient {
		c.Client, c.Server = src, dst
	} else {
		c.Client, c.Server = dst, src
	}
	return newStream(rd, c, firstIsClient, guessed)
}

// emit delivers one event, remembering the first error.
func (rd *reader) emit(ev *Event) {
	if rd.err != nil {
		return
	}
	if err := rd.fn(ev); err != nil {
		rd.err = err
	}
}
