package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/manifester/manifester/internal/frames"
	"github.com/manifester/manifester/internal/pairing"
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
	pending pairing.Pending // in request order; Kafka answers in order
	ignored bool            // not Kafka: the first client bytes were no request
	// ignoreReason says why the connection was ignored (set with ignored).
	ignoreReason string
}

func newStream(rd *reader, c *Conn, firstIsClient, guessed bool) *stream {
	s := &stream{rd: rd, conn: c, guessed: guessed, pending: pairing.Pending{Max: rd.opts.MaxPending, Pool: &rd.pending}}
	// A connection captured from its SYN starts at a frame boundary.
	s.c2s = &half{s: s, dir: ClientToServer, synced: c.SawSYN}
	s.s2c = &half{s: s, dir: ServerToClient, synced: c.SawSYN}
	// A response half captured mid-connection may start with the answer
	// to a request the capture missed: its first byte is tried as one.
	s.c2s.fresh, s.s2c.fresh = !c.SawSYN, !c.SawSYN
	s.first, s.second = s.c2s, s.s2c
	if !firstIsClient {
		s.first, s.second = s.s2c, s.c2s
	}
	return s
}

// mayFlip reports whether the roles are a guess that nothing has relied
// on yet.
func (s *stream) mayFlip() bool {
	return s.guessed && s.conn.ID == 0 && s.pending.Len() == 0
}

// flip swaps client and server.
func (s *stream) flip() {
	s.c2s, s.s2c = s.s2c, s.c2s
	s.c2s.dir, s.s2c.dir = ClientToServer, ServerToClient
	s.conn.Client, s.conn.Server = s.conn.Server, s.conn.Client
	s.guessed = false
}

// complete ends the connection: a frame left unfinished is reported as
// cut, the requests still waiting are unanswered, and a connection that
// carried no frame is counted as ignored, with the reason.
func (s *stream) complete(sawPayload bool) {
	if !s.ignored {
		s.c2s.unfinished()
		s.s2c.unfinished()
	}
	s.c2s.skipped, s.s2c.skipped = 0, 0
	s.c2s.buf, s.s2c.buf = nil, nil
	s.rd.stats.Unanswered += int64(s.pending.Clear())
	if s.conn.ID != 0 {
		if s.rd.opts.Closed != nil {
			s.rd.opts.Closed(s.conn)
		}
		return
	}
	reason := s.ignoreReason
	switch {
	case reason != "":
	case !sawPayload:
		reason = "no payload"
	default:
		reason = "no Kafka frame"
		if p := guessProtocol(s.c2s.head); p != "" {
			reason = p
		} else if p := guessProtocol(s.s2c.head); p != "" {
			reason = p
		}
	}
	if s.rd.stats.Ignored == nil {
		s.rd.stats.Ignored = map[string]int64{}
	}
	s.rd.stats.Ignored[reason]++
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
	skipped      int64 // bytes skipped since the last frame (lost ones included)
	lost         int64 // of skipped, bytes that were never captured
	// discard is how many bytes after a gap still belong to the frame the
	// gap cut (reported already); the next frame starts after them.
	discard int64
	// fresh: nothing of this half was looked at yet, and its start was
	// not captured; the first byte may begin a response whose request was
	// not captured.
	fresh bool
	// head holds the first bytes of the half, to name the protocol of a
	// connection that carried no Kafka frame.
	head []byte
	last time.Time // capture time of the latest bytes
	// kept: the consumer kept a frame out of buf ([Event.Keep]); the
	// buffer is the consumer's now. room is the largest capacity of the
	// buffers so given away: the next buffer may reserve up to it.
	kept bool
	room int
}

// Cut describes a frame that a gap in the capture (or its end) cut short.
type Cut struct {
	// Size is the frame's size from its size prefix, prefix included; -1
	// when the prefix itself was not captured.
	Size int64
	// Captured is how many of its bytes were captured before the gap (the
	// event's Data); bytes after the gap are not delivered.
	Captured int
	// GapOffset and GapSize locate the missing bytes in the direction's
	// byte stream. AtEnd: the frame was cut by the end of the connection
	// or capture rather than by a gap (GapSize is then what the size
	// prefix announced and never came, or 0 when unknown).
	GapOffset int64
	GapSize   int64
	AtEnd     bool
}

// gap records n stream bytes that were never captured. A frame the gap
// cuts is reported (Event.Cut); when its size prefix was captured and the
// gap ends inside it, the stream stays in step and the next frame starts
// right after it; otherwise the first frame after the gap is searched for.
func (h *half) gap(n int64) {
	h.s.rd.stats.Gaps++
	h.s.rd.stats.GapBytes += n
	h.lose(n)
}

// lose is gap without counting the gap: n bytes of the stream are
// missing.
func (h *half) lose(n int64) {
	at := h.pos + int64(len(h.buf))
	end := at + n
	// lostBefore counts missing bytes that belong to no reported frame:
	// the next frame says they were skipped before it.
	lostBefore := func(k int64) {
		h.skipped += k
		h.lost += k
	}
	switch {
	case h.discard > 0:
		// Another gap inside a frame already reported as cut.
		if n < h.discard {
			h.discard -= n
		} else {
			lostBefore(n - h.discard)
			h.discard, h.synced = 0, false
		}
	case h.synced && !h.tentative && len(h.buf) > 0 && !h.s.ignored:
		size := int64(-1)
		if prefix, ok := frames.Size(h.buf); ok {
			size = int64(prefix) + frames.SizeLen
		}
		h.cut(size, at, n, false)
		frameEnd := h.pos + size
		switch {
		case size < 0:
			lostBefore(n)
			h.synced = false
		case frameEnd > end:
			h.discard = frameEnd - end
		case frameEnd < end:
			lostBefore(end - frameEnd)
			h.synced = false
		}
	default:
		h.skip(int64(len(h.buf)))
		lostBefore(n)
		h.synced, h.tentative = false, false
	}
	h.pos = end
	h.buf = h.buf[:0]
}

// unfinished reports a frame left incomplete when the connection ends.
func (h *half) unfinished() {
	if len(h.buf) == 0 {
		return
	}
	if h.synced && !h.tentative && h.discard == 0 {
		size := int64(-1)
		missing := int64(0)
		if prefix, ok := frames.Size(h.buf); ok {
			size = int64(prefix) + frames.SizeLen
			missing = size - int64(len(h.buf))
		}
		h.cut(size, h.pos+int64(len(h.buf)), missing, true)
	} else {
		h.skip(int64(len(h.buf)))
	}
	h.pos += int64(len(h.buf))
	h.buf = h.buf[:0]
}

// cut emits the captured start of a frame cut short (h.buf). A request's
// header, when captured, still goes on the pending list, so that its
// response is paired; a response's correlation id pairs it.
func (h *half) cut(size, gapAt, gapSize int64, atEnd bool) {
	s, rd := h.s, h.s.rd
	rd.stats.CutFrames++
	rd.stats.SkippedBytes += int64(len(h.buf))
	s.number()
	ev := Event{Conn: s.conn, Dir: h.dir, Time: h.last, Data: h.buf, Offset: h.pos, Skipped: h.skipped, Lost: h.lost,
		Cut: &Cut{Size: size, Captured: len(h.buf), GapOffset: gapAt, GapSize: gapSize, AtEnd: atEnd}}
	h.skipped, h.lost = 0, 0
	b := h.buf
	if h.dir == ClientToServer {
		if key, ver, corr, ok := frames.PeekRequest(b); ok {
			s.addPending(Request{APIKey: key, Version: ver, CorrelationID: corr, Time: h.last, Size: int(max(size, int64(len(b))))})
		}
	} else if corr, ok := frames.PeekResponse(b); ok {
		ev.Request = s.answer(corr)
	}
	rd.emit(&ev)
}

// minPeek is how many bytes resynchronisation needs to judge an offset.
func (h *half) minPeek() int {
	if h.dir == ClientToServer {
		return 14 // size, key, version, correlation id, client id length
	}
	return 8 // size, correlation id
}

// feed takes stream bytes, captured at t, and emits every frame they
// complete. When data ends the frame buf holds the start of and goes on,
// the frame takes only its own bytes (buf has room for them, see add),
// and the bytes after it are taken next.
func (h *half) feed(data []byte, t time.Time) {
	for at := 0; at < len(data); {
		n := len(data) - at
		if rest := h.frameRest(); rest > 0 {
			n = min(n, rest)
		}
		h.take(data[at:at+n], t)
		at += n
	}
}

// take appends stream bytes captured at t and emits every frame they
// complete.
func (h *half) take(data []byte, t time.Time) {
	if len(data) > 0 {
		h.last = t
	}
	if len(h.head) < 8 {
		h.head = append(h.head, data[:min(len(data), 8-len(h.head))]...)
	}
	if h.discard > 0 {
		// The rest of a frame cut by a gap (reported already).
		n := min(h.discard, int64(len(data)))
		h.discard -= n
		h.s.rd.stats.SkippedBytes += n
		h.pos += n
		data = data[n:]
		if len(data) == 0 {
			return
		}
	}
	var b []byte
	inBuf := len(h.buf) > 0 // b is buf, not data
	if inBuf {
		h.add(data)
		b = h.buf
	} else {
		b = data // no copy when frames start at a packet boundary
	}
	base := h.pos
	i := 0
	for i < len(b) && h.s.rd.err == nil && !h.s.ignored {
		if !h.synced {
			j, ok, asReq := h.resync(b[i:])
			h.skip(int64(j))
			i += j
			if !ok {
				break
			}
			h.synced, h.tentative = true, true
			h.tentativeReq = asReq
		}
		if h.tentative && h.tentativeReq && h.dir == ServerToClient && !h.s.mayFlip() {
			// Searched for requests while the roles were open; they are
			// settled now and this is the server's half: search again.
			h.synced, h.tentative = false, false
			h.skip(1)
			i++
			continue
		}
		limit := h.s.rd.opts.MaxFrame
		if h.tentative {
			limit = min(limit, maxResyncFrame)
		}
		n, err := frames.Whole(b[i:], 4, limit)
		if err != nil {
			h.synced, h.tentative = false, false
			h.skip(1)
			i++
			continue
		}
		if n == 0 {
			break
		}
		end := i + n
		frame := b[i:end]
		if h.tentative {
			asReq := h.tentativeReq && (h.dir == ClientToServer || h.s.mayFlip())
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
		h.frame(frame, base+int64(i), t, inBuf)
		i = end
	}
	h.pos = base + int64(i)
	rest := b[i:]
	switch {
	case h.kept:
		// The consumer kept frames out of buf: the bytes after them (of
		// the last packet) start a buffer of the half's own.
		h.room = max(h.room, cap(h.buf))
		h.kept, h.buf = false, nil
		h.add(rest)
	case inBuf:
		h.buf = h.buf[:copy(h.buf, rest)]
	default:
		h.add(rest) // buf is empty
	}
	if !h.synced && len(h.buf) > 64<<10 {
		// Unsynced bytes beyond any header we could judge: keep a tail.
		drop := len(h.buf) - h.minPeek()
		h.skip(int64(drop))
		h.pos += int64(drop)
		h.buf = h.buf[:copy(h.buf, h.buf[drop:])]
	}
}

// frameRest is how many more bytes complete the frame whose start buf
// holds: 0 when buf holds no frame's size prefix in range.
func (h *half) frameRest() int {
	if !h.synced || h.discard > 0 {
		return 0
	}
	size, ok := frames.Size(h.buf)
	if !ok || !frames.InRange(size, 4, h.s.rd.opts.MaxFrame) {
		return 0
	}
	return frames.SizeLen + int(size) - len(h.buf)
}

// add appends p to buf. When buf lacks room and starts a frame whose size
// prefix it holds (or p does, buf being empty), it grows to the frame's
// size, but never beyond twice what it will hold or the room of the
// buffers the consumer kept, whichever is more: a size prefix is never
// trusted with more memory than bytes the capture really carried (of
// this frame, or of a frame as big in this half, whose buffer the half
// would have kept otherwise). (Left to append, a buffer grows by a
// quarter at a time beyond a few hundred bytes: a frame of 500 KB was
// copied four times over as it grew, in every connection.)
func (h *half) add(p []byte) {
	need := len(h.buf) + len(p)
	if need > cap(h.buf) && h.synced {
		head := h.buf
		if len(head) == 0 {
			head = p
		}
		if size, ok := frames.Size(head); ok {
			c := max(int64(need), min(frames.SizeLen+int64(size), int64(max(2*need, h.room))))
			buf := make([]byte, len(h.buf), c)
			copy(buf, h.buf)
			h.buf = buf
		}
	}
	h.buf = append(h.buf, p...)
}

func (h *half) skip(n int64) {
	h.skipped += n
	h.s.rd.stats.SkippedBytes += n
}

// checkFirst looks at the first client frame of a connection when no
// ports were given. A frame that does not read as a Kafka request at all
// (another protocol) makes the connection ignored, with the reason; one
// that looks like Kafka but fails the stricter checks of
// resynchronisation is decoded all the same, and the connection says why
// it is suspect ([Conn.Note]).
func (h *half) checkFirst(frame []byte) bool {
	if h.started || h.dir != ClientToServer {
		return true
	}
	h.started = true
	if h.s.rd.ports != nil {
		return true
	}
	why := h.whyNotRequest(frame)
	if why == "" {
		return true
	}
	if !kafkaLike(frame) {
		h.s.ignored = true
		h.s.ignoreReason = "not Kafka"
		if p := guessProtocol(h.head); p != "" {
			h.s.ignoreReason = p
		}
		h.skip(int64(len(h.buf)))
		h.buf = h.buf[:0]
		return false
	}
	if !h.newerVersion(frame) {
		h.s.conn.Note = "its first request fails the framing checks (" + why + "); decoded anyway"
		h.s.rd.stats.Suspect++
	}
	return true
}

// newerVersion reports whether the request names a known API at a version
// above the ones the spec defines (a client newer than the spec).
func (h *half) newerVersion(b []byte) bool {
	key, ver, _, _ := frames.PeekRequest(b)
	known := h.s.rd.opts.Known
	if ver <= 0 || known(key, ver) {
		return false
	}
	for v := ver - 1; v >= 0; v-- {
		if known(key, v) {
			return true
		}
	}
	return false
}

// kafkaLike reports whether a whole frame (size prefix consistent) has a
// header that could be a Kafka request's, known to the spec or not.
func kafkaLike(b []byte) bool {
	key, ver, _, ok := frames.PeekRequest(b)
	if !ok {
		return false
	}
	return key >= 0 && key < 1024 && ver >= 0 && ver < 128
}

// guessProtocol names a few protocols by their first bytes.
func guessProtocol(head []byte) string {
	switch {
	case len(head) >= 3 && head[0] == 0x16 && head[1] == 3 && head[2] <= 4:
		return "TLS"
	case len(head) >= 4 && (bytes.HasPrefix(head, []byte("GET ")) || bytes.HasPrefix(head, []byte("POST")) ||
		bytes.HasPrefix(head, []byte("PUT ")) || bytes.HasPrefix(head, []byte("HEAD")) || bytes.HasPrefix(head, []byte("HTTP")) ||
		bytes.HasPrefix(head, []byte("DELE")) || bytes.HasPrefix(head, []byte("OPTI")) || bytes.HasPrefix(head, []byte("PATC"))):
		return "HTTP"
	case bytes.HasPrefix(head, []byte("PRI * HTTP/2")):
		return "HTTP/2"
	case bytes.HasPrefix(head, []byte("SSH-")):
		return "SSH"
	}
	return ""
}

// resync returns the offset of the first plausible frame start in b, and
// whether it was judged as a request's; or how many bytes may be dropped
// (keeping a tail that could still start one) and false.
func (h *half) resync(b []byte) (int, bool, bool) {
	asReq := h.dir == ClientToServer || h.s.mayFlip()
	need := h.minPeek()
	if asReq {
		need = 14
	}
	if h.fresh && len(b) >= need {
		h.fresh = false
		if asReq && h.plausibleRequest(b) {
			return 0, true, true
		}
		if h.dir == ServerToClient && h.plausibleOrphan(b) {
			// The first byte captured of a server's half: maybe the
			// answer to a request sent before the capture began.
			return 0, true, false
		}
	}
	for j := 0; j+need <= len(b); j++ {
		if asReq && h.plausibleRequest(b[j:]) || !asReq && h.plausibleResponse(b[j:]) {
			return j, true, asReq
		}
	}
	return max(0, len(b)-need+1), false, asReq
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
	corr, _ := frames.PeekResponse(frame)
	return v(frame, ServerToClient, h.s.pending.Find(corr))
}

// plausibleRequest reports whether b starts with the header of a request
// the spec defines: size in range, known API key at a valid version,
// non-negative correlation id, and a client id that fits in the frame and
// is text (valid UTF-8 without control characters).
func (h *half) plausibleRequest(b []byte) bool {
	return len(b) >= 14 && h.whyNotRequest(b) == ""
}

// whyNotRequest says why b (at least 14 bytes, or a whole frame) does not
// read as the start of a request ("" when it does).
func (h *half) whyNotRequest(b []byte) string {
	if len(b) < 12 {
		return "shorter than a request header"
	}
	size, _ := frames.Size(b)
	key, ver, corr, _ := frames.PeekRequest(b)
	switch {
	case size < 10 || int(size) > h.s.rd.opts.MaxFrame:
		return fmt.Sprintf("size %d out of range", size)
	case !h.s.rd.opts.Known(key, ver):
		return fmt.Sprintf("API key %d at version %d is not in the spec", key, ver)
	case corr < 0:
		return fmt.Sprintf("negative correlation id %d", corr)
	case len(b) < 14:
		return "no client id"
	}
	cid := int16(binary.BigEndian.Uint16(b[12:]))
	if cid < -1 || int(cid) > int(size)-10 {
		return fmt.Sprintf("client id length %d does not fit", cid)
	}
	// Client ids are text in practice: valid UTF-8 without control
	// characters (a cut-off rune at the end of b is fine).
	id := b[14:min(len(b), 14+max(int(cid), 0))]
	for i := 0; i < len(id); {
		r, n := utf8.DecodeRune(id[i:])
		if r == utf8.RuneError && n <= 1 {
			if len(id) < int(cid) && !utf8.FullRune(id[i:]) {
				break // b ends inside the id
			}
			return "client id is not valid UTF-8"
		}
		if unicode.IsControl(r) {
			return fmt.Sprintf("client id has the control character %U", r)
		}
		i += n
	}
	return ""
}

func (h *half) plausibleResponse(b []byte) bool {
	size, _ := frames.Size(b)
	if !frames.InRange(size, 4, h.s.rd.opts.MaxFrame) {
		return false
	}
	corr, _ := frames.PeekResponse(b)
	return h.s.pending.Find(corr) != nil
}

// plausibleOrphan reports whether b could start a response to a request
// that was not captured: size in range and a non-negative correlation id.
// Options.Verify then has the last word.
func (h *half) plausibleOrphan(b []byte) bool {
	size, _ := frames.Size(b)
	corr, _ := frames.PeekResponse(b)
	return size >= 4 && size <= maxResyncFrame && int(size) <= h.s.rd.opts.MaxFrame && corr >= 0
}

// number gives the connection its number when its first frame comes out.
func (s *stream) number() {
	if s.conn.ID == 0 {
		s.rd.numbered++
		s.rd.stats.Connections = s.rd.numbered
		s.conn.ID = s.rd.numbered
	}
}

// addPending adds a request awaiting its response; beyond
// Options.MaxPending on the connection, or Options.MaxPendingTotal over
// all, the connection's oldest is dropped, counted as unanswered.
func (s *stream) addPending(req Request) {
	if s.pending.Add(req) {
		s.rd.stats.Unanswered++
	}
}

// answer removes and returns the pending request with the correlation id
// (nil when there is none). Kafka answers in order: the requests before it
// will get no answer (acks=0 produce requests), counted as unanswered.
func (s *stream) answer(corr int32) *Request {
	req, passed, ok := s.pending.Answer(corr)
	if !ok {
		return nil
	}
	s.rd.stats.Unanswered += int64(passed)
	return &req
}

// frame emits one frame and pairs it; inBuf: b lies in the half's buffer
// (the consumer may keep it, see Event.Keep).
func (h *half) frame(b []byte, off int64, t time.Time, inBuf bool) {
	s, rd := h.s, h.s.rd
	s.number()
	ev := Event{Conn: s.conn, Dir: h.dir, Time: t, Data: b, Offset: off, Skipped: h.skipped, Lost: h.lost}
	if inBuf {
		ev.from = h
	}
	h.skipped, h.lost = 0, 0
	if h.dir == ClientToServer {
		rd.stats.Requests++
		if key, ver, corr, ok := frames.PeekRequest(b); ok {
			s.addPending(Request{APIKey: key, Version: ver, CorrelationID: corr, Time: t, Size: len(b)})
		}
		rd.emit(&ev)
		return
	}
	rd.stats.Responses++
	if corr, ok := frames.PeekResponse(b); ok {
		ev.Request = s.answer(corr)
	}
	if ev.Request == nil {
		rd.stats.Unpaired++
	}
	rd.emit(&ev)
}
