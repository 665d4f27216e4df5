package capture

import (
	"encoding/binary"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/reassembly"
)

// stream is one TCP connection: two halves and the requests awaiting
// their responses.
type stream struct {
	rd   *reader
	conn *Conn
	// first and second are the halves of the first packet's direction and
	// of the other; c2s and s2c point at them by role.
	first, second *half
	c2s, s2c      *half
	// guessed: the roles come from port numbers alone (no SYN, no
	// Options.Ports); the half that turns out to carry requests becomes
	// the client's.
	guessed bool
	pending []Request // in request order; Kafka answers in order
	ignored bool      // not Kafka: the first client bytes were no request
}

func newStream(rd *reader, c *Conn, firstIsClient, guessed bool) *stream {
	s := &stream{rd: rd, conn: c, guessed: guessed}
	// A connection captured from its SYN starts at a frame boundary.
	s.c2s = &half{s: s, dir: ClientToServer, synced: c.SawSYN}
	s.s2c = &half{s: s, dir: ServerToClient, synced: c.SawSYN}
	s.first, s.second = s.c2s, s.s2c
	if !firstIsClient {
		s.first, s.second = s.s2c, s.c2s
	}
	return s
}

// mayFlip reports whether the roles are a guess that nothing has relied
// on yet.
func (s *stream) mayFlip() bool {
	return s.guessed && s.conn.ID == 0 && len(s.pending) == 0
}

// flip swaps client and server.
func (s *stream) flip() {
	s.c2s, s.s2c = s.s2c, s.c2s
	s.c2s.dir, s.s2c.dir = ClientToServer, ServerToClient
	s.conn.Client, s.conn.Server = s.conn.Server, s.conn.Client
	s.guessed = false
}

// Accept implements reassembly.Stream: every segment is taken, and a half
// whose SYN was not captured starts at its first segment.
func (s *stream) Accept(tcp *layers.TCP, ci gopacket.CaptureInfo, dir reassembly.TCPFlowDirection, nextSeq reassembly.Sequence, start *bool, ac reassembly.AssemblerContext) bool {
	if nextSeq == -1 && !tcp.SYN {
		*start = true
	}
	return true
}

// ReassembledSG implements reassembly.Stream.
func (s *stream) ReassembledSG(sg reassembly.ScatterGather, ac reassembly.AssemblerContext) {
	if s.ignored || s.rd.err != nil {
		return
	}
	dir, _, _, skip := sg.Info()
	n, _ := sg.Lengths()
	h := s.first
	if dir != reassembly.TCPDirClientToServer {
		h = s.second
	}
	if skip > 0 {
		h.gap(int64(skip))
	}
	if n == 0 {
		return
	}
	h.feed(sg.Fetch(n), func(off int) time.Time {
		if ci := sg.CaptureInfo(off); !ci.Timestamp.IsZero() {
			return ci.Timestamp
		}
		return ac.GetCaptureInfo().Timestamp
	})
}

// ReassemblyComplete implements reassembly.Stream.
func (s *stream) ReassemblyComplete(ac reassembly.AssemblerContext) bool {
	s.c2s.skipped += int64(len(s.c2s.buf))
	s.s2c.skipped += int64(len(s.s2c.buf))
	s.rd.stats.SkippedBytes += int64(len(s.c2s.buf) + len(s.s2c.buf))
	s.c2s.buf, s.s2c.buf = nil, nil
	s.rd.stats.Unanswered += int64(len(s.pending))
	s.pending = nil
	return true
}

// half is one direction of a connection, split into frames.
type half struct {
	s      *stream
	dir    Dir
	buf    []byte // bytes not yet part of an emitted frame
	pos    int64  // stream offset of buf[0]
	synced bool   // buf starts at a frame boundary
	// tentative marks a boundary found by resynchronisation that the
	// first whole frame must confirm.
	tentative    bool
	tentativeReq bool  // the boundary was judged as a request's
	started      bool  // the first frame of a SYN-started client half was checked
	skipped      int64 // bytes skipped since the last frame
}

// gap records n stream bytes that were never captured.
func (h *half) gap(n int64) {
	h.s.rd.stats.SkippedBytes += int64(len(h.buf)) + n
	h.skipped += int64(len(h.buf)) + n
	h.pos += int64(len(h.buf)) + n
	h.buf = h.buf[:0]
	h.synced = false
}

// minPeek is how many bytes resynchronisation needs to judge an offset.
func (h *half) minPeek() int {
	if h.dir == ClientToServer {
		return 14 // size, key, version, correlation id, client id length
	}
	return 8 // size, correlation id
}

// feed appends stream bytes and emits every frame they complete. timeAt
// gives the capture time of the byte at an offset of data.
func (h *half) feed(data []byte, timeAt func(off int) time.Time) {
	// start is the stream offset of data[0].
	start := h.pos + int64(len(h.buf))
	var b []byte
	if len(h.buf) == 0 {
		b = data // no copy when frames start at a packet boundary
	} else {
		h.buf = append(h.buf, data...)
		b = h.buf
	}
	base := h.pos
	i := 0
	for i < len(b) && h.s.rd.err == nil && !h.s.ignored {
		if !h.synced {
			j, ok := h.resync(b[i:])
			h.skip(int64(j))
			i += j
			if !ok {
				break
			}
			h.synced, h.tentative = true, true
			h.tentativeReq = h.dir == ClientToServer || h.s.mayFlip()
		}
		if h.tentative && h.tentativeReq && h.dir == ServerToClient && !h.s.mayFlip() {
			// Searched for requests while the roles were open; they are
			// settled now and this is the server's half: search again.
			h.synced, h.tentative = false, false
			h.skip(1)
			i++
			continue
		}
		if len(b)-i < 4 {
			break
		}
		size := int32(binary.BigEndian.Uint32(b[i:]))
		limit := h.s.rd.opts.MaxFrame
		if h.tentative {
			limit = min(limit, maxResyncFrame)
		}
		if size < 4 || int(size) > limit {
			h.synced = false
			h.skip(1)
			i++
			continue
		}
		end := i + 4 + int(size)
		if end > len(b) {
			break
		}
		frame := b[i:end]
		if h.tentative {
			asReq := h.dir == ClientToServer || h.s.mayFlip()
			if !h.verify(frame, asReq) {
				// Not a frame after all: look again one byte further on.
				h.synced, h.tentative = false, false
				h.skip(1)
				i++
				continue
			}
			if asReq && h.dir == ServerToClient {
				h.s.flip() // the guessed server sends requests
			}
		}
		h.tentative = false
		if !h.checkFirst(frame) {
			return
		}
		off := base + int64(i)
		t := timeAt(int(base + int64(end) - 1 - start))
		h.frame(frame, off, t)
		i = end
	}
	h.pos = base + int64(i)
	rest := b[i:]
	if len(h.buf) == 0 {
		h.buf = append(h.buf[:0], rest...)
	} else {
		n := copy(h.buf, rest)
		h.buf = h.buf[:n]
	}
	if !h.synced && len(h.buf) > 64<<10 {
		// Unsynced bytes beyond any header we could judge: keep a tail.
		drop := len(h.buf) - h.minPeek()
		h.skip(int64(drop))
		h.pos += int64(drop)
		h.buf = h.buf[:copy(h.buf, h.buf[drop:])]
	}
}

func (h *half) skip(n int64) {
	h.skipped += n
	h.s.rd.stats.SkippedBytes += n
}

// checkFirst drops a connection whose first client frame is no Kafka
// request when no ports were given (it is some other protocol).
func (h *half) checkFirst(frame []byte) bool {
	if h.started || h.dir != ClientToServer {
		return true
	}
	h.started = true
	if h.s.rd.ports == nil && !h.plausibleRequest(frame) {
		h.s.ignored = true
		h.buf = h.buf[:0]
		return false
	}
	return true
}

// resync returns the offset of the first plausible frame start in b, or
// how many bytes may be dropped (keeping a tail that could still start
// one) and false.
func (h *half) resync(b []byte) (int, bool) {
	asReq := h.dir == ClientToServer || h.s.mayFlip()
	need := h.minPeek()
	if asReq {
		need = 14
	}
	for j := 0; j+need <= len(b); j++ {
		if asReq && h.plausibleRequest(b[j:]) || !asReq && h.plausibleResponse(b[j:]) {
			return j, true
		}
	}
	return max(0, len(b)-need+1), false
}

// maxResyncFrame bounds the size of a frame found by resynchronisation,
// so a false boundary cannot make the half buffer up to MaxFrame bytes.
const maxResyncFrame = 8 << 20

// verify confirms a frame found by resynchronisation with Options.Verify,
// as a request or as a response.
func (h *half) verify(frame []byte, asReq bool) bool {
	if asReq && !h.plausibleRequest(frame) {
		return false
	}
	v := h.s.rd.opts.Verify
	if v == nil {
		return true
	}
	if asReq {
		return v(frame, ClientToServer, nil)
	}
	var req *Request
	{
		corr := int32(binary.BigEndian.Uint32(frame[4:]))
		for i := range h.s.pending {
			if h.s.pending[i].CorrelationID == corr {
				req = &h.s.pending[i]
				break
			}
		}
	}
	return v(frame, ServerToClient, req)
}

func (h *half) plausibleRequest(b []byte) bool {
	if len(b) < 14 {
		return false
	}
	size := int32(binary.BigEndian.Uint32(b))
	key := int16(binary.BigEndian.Uint16(b[4:]))
	ver := int16(binary.BigEndian.Uint16(b[6:]))
	corr := int32(binary.BigEndian.Uint32(b[8:]))
	cid := int16(binary.BigEndian.Uint16(b[12:]))
	if size < 10 || int(size) > h.s.rd.opts.MaxFrame || corr < 0 || cid < -1 || int(cid) > int(size)-10 || !h.s.rd.opts.Known(key, ver) {
		return false
	}
	// Client ids are printable text in practice.
	for _, c := range b[14:min(len(b), 14+max(int(cid), 0))] {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

func (h *half) plausibleResponse(b []byte) bool {
	size := int32(binary.BigEndian.Uint32(b))
	if size < 4 || int(size) > h.s.rd.opts.MaxFrame {
		return false
	}
	corr := int32(binary.BigEndian.Uint32(b[4:]))
	for _, p := range h.s.pending {
		if p.CorrelationID == corr {
			return true
		}
	}
	return false
}

// frame emits one frame and pairs it.
func (h *half) frame(b []byte, off int64, t time.Time) {
	s, rd := h.s, h.s.rd
	if s.conn.ID == 0 {
		rd.conns++
		rd.stats.Connections = rd.conns
		s.conn.ID = rd.conns
	}
	ev := Event{Conn: s.conn, Dir: h.dir, Time: t, Data: b, Offset: off, Skipped: h.skipped}
	h.skipped = 0
	if h.dir == ClientToServer {
		rd.stats.Requests++
		if len(b) >= 12 {
			req := Request{
				APIKey:        int16(binary.BigEndian.Uint16(b[4:])),
				Version:       int16(binary.BigEndian.Uint16(b[6:])),
				CorrelationID: int32(binary.BigEndian.Uint32(b[8:])),
				Time:          t, Size: len(b),
			}
			if len(s.pending) >= rd.opts.MaxPending {
				rd.stats.Unanswered++
				s.pending = append(s.pending[:0], s.pending[1:]...)
			}
			s.pending = append(s.pending, req)
		}
		rd.emit(&ev)
		return
	}
	rd.stats.Responses++
	if len(b) >= 8 {
		corr := int32(binary.BigEndian.Uint32(b[4:]))
		for i := range s.pending {
			if s.pending[i].CorrelationID == corr {
				req := s.pending[i]
				ev.Request = &req
				// Kafka answers in order: the requests before this one
				// will get no answer (acks=0 produce requests).
				rd.stats.Unanswered += int64(i)
				s.pending = append(s.pending[:0], s.pending[i+1:]...)
				break
			}
		}
	}
	if ev.Request == nil {
		rd.stats.Unpaired++
	}
	rd.emit(&ev)
}
