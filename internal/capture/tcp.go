package capture

import (
	"bytes"
	"cmp"
	"net/netip"
	"slices"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/manifester/manifester/internal/tlsdecrypt"
)

// This file is the TCP reassembler: per connection and direction it puts
// segments in sequence order, drops retransmitted and overlapping bytes,
// and decides when a missing segment will never come.
//
// A hole in a direction's sequence space is declared a capture gap (the
// bytes were sent but not captured) as soon as the other side acknowledges
// them: the receiver got them, so the capture missed them, and the data
// after the hole is delivered at once (an acknowledgement more than
// maxAckAhead beyond the bytes shown is taken for damaged and ignored).
// Without such an
// acknowledgement the data after the hole waits for a retransmission, up to
// the buffer limits, the end of the connection or the end of the capture.
// (gopacket's reassembler holds the bytes after a hole until its final
// flush, which cut every response behind a lost request segment off from
// its request.)

// connKey identifies a TCP connection whichever way a packet goes.
type connKey struct{ lo, hi netip.AddrPort }

func keyOf(a, b netip.AddrPort) connKey {
	if a.Compare(b) > 0 {
		a, b = b, a
	}
	return connKey{a, b}
}

// tcpConn is one connection being reassembled.
type tcpConn struct {
	s *stream
	// seq numbers connections in the order they were first seen.
	seq      int64
	firstSrc netip.AddrPort
	// dirs[0] carries the bytes of the first packet's sender, dirs[1]
	// those of the other endpoint.
	dirs [2]tcpDir
	last time.Time
	// lastPacket is the reader's packet count at the latest packet.
	lastPacket int64
	done       bool // both FINs or a RST: finished; kept to absorb stray packets
	// decided: the first bytes were seen and told TLS or not; tls, when
	// not nil, decrypts the connection (tls.go); tlsReason is why its
	// first direction stopped being decrypted.
	decided   bool
	tls       *tlsdecrypt.Stream
	tlsReason string
	// gapFirst: a gap came before the first bytes (the stream's start
	// was not captured); probe holds the first bytes of a connection
	// being told TLS or not (tls.go).
	gapFirst bool
	probe    *tlsProbe
	// reuse is a SYN that opens the port pair again while the connection
	// is live (its end was not captured, or the SYN is a stray or damaged
	// packet), held until it is told which: see tcpPacket.
	reuse *heldSYN
}

// heldSYN is a SYN held back, with what its packet said.
type heldSYN struct {
	src, dst netip.AddrPort
	tcp      layers.TCP
	t        time.Time
}

// tcpDir is one direction of a connection.
type tcpDir struct {
	started bool
	next    uint32 // sequence number of the next byte to deliver
	fin     bool
	finSeq  uint32
	// peerAck is the highest acknowledgement the other side sent for this
	// direction's bytes.
	peerAck   uint32
	peerAcked bool
	// gapStart and gapEnd are the latest hole declared a gap.
	gapStart, gapEnd uint32
	ooo              []segment // out-of-order segments, by sequence number
	oooBytes         int
	sawPayload       bool
}

// maxAckAhead is how far beyond the bytes a direction has shown (captured
// or buffered) an acknowledgement of them may go: more than any
// connection has in flight, far less than the 2 GiB a damaged
// acknowledgement number is ahead half the time.
const maxAckAhead = 64 << 20

// extent is the sequence number after the last byte the direction has
// shown: delivered, or buffered after a hole.
func (d *tcpDir) extent() uint32 {
	if n := len(d.ooo); n > 0 {
		if end := d.ooo[n-1].seq + uint32(len(d.ooo[n-1].data)); seqDiff(end, d.next) > 0 {
			return end
		}
	}
	return d.next
}

// segment is a buffered out-of-order segment.
type segment struct {
	seq  uint32
	data []byte
	t    time.Time
}

// tombstoneFor is how long (capture time) a finished connection is
// remembered, so that its last ACKs do not start a new one.
const tombstoneFor = 10 * time.Second

// seqDiff is a-b in sequence space.
func seqDiff(a, b uint32) int32 { return int32(a - b) }

// tcpPacket reassembles one TCP packet from src to dst.
func (rd *reader) tcpPacket(src, dst netip.AddrPort, tcp *layers.TCP, t time.Time) {
	key := keyOf(src, dst)
	c := rd.conns[key]
	if c != nil && tcp.SYN && !tcp.ACK && c.reusedBy(src, tcp.Seq) {
		if !c.done {
			// The port pair used again while the connection is live
			// (its end may not have been captured), or a stray SYN: it
			// is held until the other side answers it, or its first
			// byte comes, which opens a new connection, or its sender
			// sends a byte of this one's, which drops it.
			h := &heldSYN{src: src, dst: dst, tcp: *tcp, t: t}
			h.tcp.Payload = bytes.Clone(tcp.Payload)
			h.tcp.Contents, h.tcp.Options, h.tcp.Padding = nil, nil, nil
			c.reuse = h
			return
		}
		rd.finishConn(c)
		delete(rd.conns, key)
		c = nil
	}
	if c != nil && c.reuse != nil {
		h := c.reuse
		switch {
		case src != h.src && tcp.SYN && tcp.ACK && tcp.Ack == h.tcp.Seq+1,
			src == h.src && !tcp.SYN && tcp.Seq == h.tcp.Seq+1:
			// Answered, or followed by its first byte: a new connection.
			rd.finishConn(c)
			delete(rd.conns, key)
			rd.tcpPacket(h.src, h.dst, &h.tcp, h.t)
			c = rd.conns[key]
		case src == h.src && len(tcp.Payload) > 0 && !tcp.SYN && c.carries(src, tcp.Seq):
			c.reuse = nil // its sender goes on with the connection: the SYN was stray
		}
	}
	payload := tcp.Payload
	if c == nil {
		if !tcp.SYN && len(payload) == 0 {
			// A bare ACK, FIN or RST of a connection seen no further:
			// no bytes to lose.
			rd.stats.ControlOnly++
			return
		}
		if len(rd.conns) >= rd.opts.MaxConns {
			rd.evict()
		}
		rd.connSeq++
		c = &tcpConn{seq: rd.connSeq, firstSrc: src}
		c.s = rd.newConn(src, dst, tcp)
		rd.conns[key] = c
	}
	c.last, c.lastPacket = t, rd.stats.Packets
	if c.done {
		if len(payload) > 0 {
			rd.stats.RetransmittedBytes += int64(len(payload))
		}
		return
	}
	i := 0
	if src != c.firstSrc {
		i = 1
	}
	d, o := &c.dirs[i], &c.dirs[1-i]
	if tcp.ACK {
		// An acknowledgement far beyond what the other side has sent is
		// damaged, not news: taken, it would declare the bytes up to it
		// lost, and every byte sent after it late.
		if (!o.peerAcked || seqDiff(tcp.Ack, o.peerAck) > 0) && (!o.started || seqDiff(tcp.Ack, o.extent()) <= maxAckAhead) {
			o.peerAck, o.peerAcked = tcp.Ack, true
		}
		rd.resolve(c, 1-i)
	}
	seq := tcp.Seq
	if tcp.SYN {
		seq++
		if !d.started {
			d.started, d.next = true, seq
		}
	} else if !d.started {
		d.started, d.next = true, seq
	}
	if len(payload) > 0 {
		d.sawPayload = true
		rd.segment(c, i, seq, payload, t)
	}
	if tcp.FIN {
		d.fin, d.finSeq = true, seq+uint32(len(payload))
	}
	// A RST nowhere near its sender's stream is damaged or forged (TCP
	// stacks ignore such RSTs too): it does not end the connection.
	if tcp.RST && c.carries(src, seq) || (c.dirs[0].fin && c.dirs[1].fin && len(c.dirs[0].ooo) == 0 && len(c.dirs[1].ooo) == 0) {
		rd.finishConn(c)
	}
}

// carries reports whether a segment from src at seq falls where the
// connection's stream from src is (within maxAckAhead of its next byte).
func (c *tcpConn) carries(src netip.AddrPort, seq uint32) bool {
	d := &c.dirs[0]
	if src != c.firstSrc {
		d = &c.dirs[1]
	}
	diff := seqDiff(seq, d.next)
	return d.started && diff <= maxAckAhead && diff >= -maxAckAhead
}

// reusedBy reports whether a SYN from src with sequence number seq opens
// a new connection on c's port pair rather than repeating c's own SYN.
func (c *tcpConn) reusedBy(src netip.AddrPort, seq uint32) bool {
	if c.done {
		return true
	}
	d := &c.dirs[0]
	if src != c.firstSrc {
		d = &c.dirs[1]
	}
	return d.started && seq+1 != d.next && d.sawPayload
}

// segment adds payload at seq to direction i of c.
func (rd *reader) segment(c *tcpConn, i int, seq uint32, payload []byte, t time.Time) {
	d := &c.dirs[i]
	end := seq + uint32(len(payload))
	diff := seqDiff(seq, d.next)
	switch {
	case diff <= 0 && seqDiff(end, d.next) <= 0:
		rd.old(d, seq, end)
		return
	case diff < 0:
		rd.old(d, seq, d.next)
		payload = payload[-diff:]
		fallthrough
	case diff == 0:
		rd.deliver(c, i, payload, t)
		d.next = end
		rd.drain(c, i)
		return
	}
	// A hole before this segment: it waits, unless the other side has
	// acknowledged the hole already (see resolve, at the end).
	at, found := slices.BinarySearchFunc(d.ooo, seq, func(s segment, q uint32) int { return int(seqDiff(s.seq, q)) })
	if found && len(d.ooo[at].data) >= len(payload) {
		rd.stats.RetransmittedBytes += int64(len(payload))
		return
	}
	seg := segment{seq: seq, data: append([]byte(nil), payload...), t: t}
	if found {
		rd.stats.RetransmittedBytes += int64(len(d.ooo[at].data))
		d.oooBytes -= bufCost(d.ooo[at].data)
		rd.buffered -= bufCost(d.ooo[at].data)
		d.ooo[at] = seg
	} else {
		d.ooo = slices.Insert(d.ooo, at, seg)
	}
	d.oooBytes += bufCost(payload)
	rd.buffered += bufCost(payload)
	for (d.oooBytes > rd.maxBufConn || rd.buffered > rd.maxBufTotal) && len(d.ooo) > 0 {
		// Waited long enough: the missing bytes are not coming.
		rd.gapTo(c, i, d.ooo[0].seq)
		rd.drain(c, i)
	}
	rd.resolve(c, i)
}

// bufPage is the unit of the out-of-order buffer's limits
// ([Options.MaxBuffered]): more than a full-sized segment of Ethernet.
const bufPage = 1900

// bufCost is what a buffered segment of data counts against the
// out-of-order buffer's limits: its bytes, and at least a page. A
// segment's bookkeeping (its place in the list, its time, its copy's
// allocation) costs some 64 bytes whatever its size, so one-byte
// segments counted by their bytes would hold sixty times the limit; the
// page also bounds how many segments a direction's list holds (a
// quarter of MaxBuffered), and so what inserting one in order costs.
func bufCost(data []byte) int { return max(len(data), bufPage) }

// old counts the bytes [seq, end) of a segment that arrived after its
// place in the stream had been passed: retransmitted, or, when they fall
// in a hole already declared a gap, late (the capture reordered them
// after the acknowledgement that declared the gap).
func (rd *reader) old(d *tcpDir, seq, end uint32) {
	n := int64(seqDiff(end, seq))
	if d.gapEnd != d.gapStart && seqDiff(seq, d.gapEnd) < 0 && seqDiff(end, d.gapStart) > 0 {
		lo, hi := seq, end
		if seqDiff(lo, d.gapStart) < 0 {
			lo = d.gapStart
		}
		if seqDiff(hi, d.gapEnd) > 0 {
			hi = d.gapEnd
		}
		late := int64(seqDiff(hi, lo))
		rd.stats.LateBytes += late
		n -= late
	}
	rd.stats.RetransmittedBytes += n
}

// resolve declares the bytes of direction i that the other side has
// acknowledged but the capture does not hold a gap, and delivers the
// buffered data after it.
func (rd *reader) resolve(c *tcpConn, i int) {
	d := &c.dirs[i]
	if !d.started || !d.peerAcked {
		return
	}
	acked := d.peerAck
	if d.fin && seqDiff(acked, d.finSeq) > 0 {
		acked = d.finSeq // the FIN takes one sequence number
	}
	if seqDiff(acked, d.extent()) > maxAckAhead {
		return // taken before the direction's first byte: damaged too
	}
	for seqDiff(acked, d.next) > 0 {
		if len(d.ooo) > 0 && seqDiff(acked, d.ooo[0].seq) >= 0 {
			rd.gapTo(c, i, d.ooo[0].seq)
			rd.drain(c, i)
			continue
		}
		rd.gapTo(c, i, acked)
		break
	}
}

// gapTo declares the bytes from d.next to seq lost and moves past them.
func (rd *reader) gapTo(c *tcpConn, i int, seq uint32) {
	d := &c.dirs[i]
	if n := seqDiff(seq, d.next); n > 0 {
		switch {
		case c.probe != nil:
			rd.probeGap(c, i, int64(n))
		case c.tls != nil:
			rd.gapTLS(c, i, int64(n))
		default:
			if !c.decided {
				c.gapFirst = true
			}
			rd.half(c, i).gap(int64(n))
		}
		d.gapStart, d.gapEnd = d.next, seq
		d.next = seq
	}
}

// drain delivers the buffered segments that follow on from d.next.
func (rd *reader) drain(c *tcpConn, i int) {
	d := &c.dirs[i]
	for len(d.ooo) > 0 && seqDiff(d.ooo[0].seq, d.next) <= 0 {
		s := d.ooo[0]
		d.ooo = d.ooo[1:]
		d.oooBytes -= bufCost(s.data)
		rd.buffered -= bufCost(s.data)
		end := s.seq + uint32(len(s.data))
		if seqDiff(end, d.next) <= 0 {
			rd.old(d, s.seq, end)
			continue
		}
		data := s.data
		if k := seqDiff(d.next, s.seq); k > 0 {
			rd.old(d, s.seq, d.next)
			data = data[k:]
		}
		rd.deliver(c, i, data, s.t)
		d.next = end
	}
	if len(d.ooo) == 0 {
		d.ooo = nil
	}
}

// half returns the framing half of direction i.
func (rd *reader) half(c *tcpConn, i int) *half {
	if i == 0 {
		return c.s.first
	}
	return c.s.second
}

func (rd *reader) deliver(c *tcpConn, i int, data []byte, t time.Time) {
	if !c.decided {
		rd.startTLS(c, data)
	}
	switch {
	case c.probe != nil:
		rd.probeTLS(c, i, data, t)
	case c.tls != nil:
		rd.deliverTLS(c, i, data, t)
	default:
		rd.deliverPlain(c, i, data, t)
	}
}

// deliverPlain frames bytes of direction i.
func (rd *reader) deliverPlain(c *tcpConn, i int, data []byte, t time.Time) {
	if c.s.ignored || rd.err != nil {
		return
	}
	rd.half(c, i).feed(data, t)
}

// finishConn ends a connection: buffered data is delivered across its
// holes (client half first, so that requests precede their responses),
// bytes announced by a FIN but never captured are a gap, and the framing
// halves are completed.
func (rd *reader) finishConn(c *tcpConn) {
	if c.done {
		return
	}
	c.done = true
	order := [2]int{0, 1}
	if rd.half(c, 1) == c.s.c2s {
		order = [2]int{1, 0}
	}
	for _, i := range order {
		d := &c.dirs[i]
		for len(d.ooo) > 0 {
			rd.gapTo(c, i, d.ooo[0].seq)
			rd.drain(c, i)
		}
		if d.fin && d.started {
			rd.gapTo(c, i, d.finSeq)
		}
	}
	if c.probe != nil {
		rd.settleProbe(c, false)
	}
	if c.tls != nil {
		rd.finishTLS(c)
	}
	c.s.complete(c.dirs[0].sawPayload || c.dirs[1].sawPayload)
	// Kept as a tombstone that absorbs the connection's last packets:
	// nothing else is needed.
	c.s = nil
	c.dirs[0].ooo, c.dirs[1].ooo = nil, nil
}

// flushIdle finishes the connections that saw no packet since before,
// and forgets finished ones quiet for a few seconds.
func (rd *reader) flushIdle(before time.Time) {
	var idle []*tcpConn
	for k, c := range rd.conns {
		// Idle by the capture's clock, and by its packets too: one packet
		// stamped far ahead (a damaged record, a wrong clock in a merged
		// capture) moves the clock, not the traffic, and must not end the
		// connections that are still carrying some.
		if rd.stats.Packets-c.lastPacket < flushEvery {
			continue
		}
		if c.done && c.last.Before(rd.last.Add(-tombstoneFor)) {
			delete(rd.conns, k)
			continue
		}
		if c.last.Before(before) {
			idle = append(idle, c)
			delete(rd.conns, k)
		}
	}
	rd.finishInOrder(idle)
}

// evict makes room for a connection when Options.MaxConns are followed:
// it forgets the finished ones, and when that frees less than a quarter,
// finishes the live connections that have been quiet longest (by their
// last packet's place in the capture, so the choice depends on nothing
// but the capture) until a quarter is free. Each eviction pass costs a
// sort of the table and frees a quarter of it: a packet costs a
// logarithm's worth on average, however many connections a capture
// opens.
func (rd *reader) evict() {
	limit := rd.opts.MaxConns
	type entry struct {
		k connKey
		c *tcpConn
	}
	var live []entry
	for k, c := range rd.conns {
		if c.done {
			delete(rd.conns, k)
			continue
		}
		live = append(live, entry{k, c})
	}
	keep := limit - max(limit/4, 1)
	if len(live) <= keep {
		return
	}
	slices.SortFunc(live, func(a, b entry) int {
		if a.c.lastPacket != b.c.lastPacket {
			return cmp.Compare(a.c.lastPacket, b.c.lastPacket)
		}
		return cmp.Compare(a.c.seq, b.c.seq)
	})
	gone := make([]*tcpConn, 0, len(live)-keep)
	for _, e := range live[:len(live)-keep] {
		delete(rd.conns, e.k)
		gone = append(gone, e.c)
	}
	rd.stats.Evicted += int64(len(gone))
	rd.finishInOrder(gone)
}

// finishAll finishes every connection, in the order they were first seen.
func (rd *reader) finishAll() {
	var all []*tcpConn
	for k, c := range rd.conns {
		all = append(all, c)
		delete(rd.conns, k)
	}
	rd.finishInOrder(all)
}

func (rd *reader) finishInOrder(cs []*tcpConn) {
	slices.SortFunc(cs, func(a, b *tcpConn) int { return int(a.seq - b.seq) })
	for _, c := range cs {
		rd.finishConn(c)
	}
}
