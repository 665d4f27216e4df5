package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// gapExchanges returns exchanges with requests and responses of one and of
// several segments: ApiVersions, a Metadata response of several segments,
// Heartbeat, a Metadata request of several segments, Heartbeat.
func gapExchanges() []exchange {
	xs := sampleExchanges()
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	for i := 0; i < 400; i++ {
		name := fmt.Sprintf("topic-%03d", i)
		md.Topics = append(md.Topics, kmsg.MetadataRequestTopic{Topic: &name})
	}
	mdr := kmsg.NewPtrMetadataResponse()
	mdr.Version = 12
	xs = append(xs, exchange{reqFrame(md, 4), respFrame(mdr, 4)})
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version = 4
	hb.Group, hb.MemberID = "g", "m"
	hbr := kmsg.NewPtrHeartbeatResponse()
	hbr.Version = 4
	xs = append(xs, exchange{reqFrame(hb, 5), respFrame(hbr, 5)})
	return xs
}

// seg is one TCP segment of a scripted connection: frame is the index of
// the frame it belongs to (2*exchange, +1 for the response), part its
// index within the frame.
type seg struct {
	dir         Dir
	seq         uint32
	data        []byte
	frame, part int
	drop, dup   bool
}

// segments splits the exchanges into segments as ConnWriter.Write does,
// starting at the sequence numbers after Open.
func segments(xs []exchange) (out []seg, offsets []int64) {
	next := [2]uint32{1001, 500001}
	var pos [2]int64
	for i, x := range xs {
		for k, b := range [][]byte{x.req, x.resp} {
			d := Dir(k)
			offsets = append(offsets, pos[d])
			pos[d] += int64(len(b))
			for part := 0; len(b) > 0; part++ {
				n := min(len(b), mss)
				out = append(out, seg{dir: d, seq: next[d], data: b[:n], frame: 2*i + k, part: part})
				next[d] += uint32(n)
				b = b[n:]
			}
		}
	}
	return out, offsets
}

// writeSegments writes a connection from its handshake to its FINs,
// segment by segment in list order: dropped ones only advance the sender's
// sequence number (the peer got them, so its ACKs cover them), duplicated
// ones are written twice.
func writeSegments(t *testing.T, segs []seg, extra func(c *ConnWriter, i int)) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, PCAP)
	c := w.Conn(client, server)
	if err := c.Open(t0); err != nil {
		t.Fatal(err)
	}
	at := t0
	for i, s := range segs {
		at = at.Add(100 * time.Microsecond)
		if !s.drop {
			if err := c.WriteSegment(s.dir, at, s.seq, s.data); err != nil {
				t.Fatal(err)
			}
			if s.dup {
				if err := c.WriteSegment(s.dir, at, s.seq, s.data); err != nil {
					t.Fatal(err)
				}
			}
		}
		if end := s.seq + uint32(len(s.data)); seqDiff(end, c.Seq(s.dir)) > 0 {
			c.Skip(s.dir, int(seqDiff(end, c.Seq(s.dir))))
		}
		if extra != nil {
			extra(c, i)
		}
	}
	if err := c.Close(at); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func findSeg(segs []seg, frame, part int) int {
	for i, s := range segs {
		if s.frame == frame && s.part == part {
			return i
		}
	}
	panic(fmt.Sprintf("no segment %d of frame %d", part, frame))
}

// TestReadGapsAndRetransmissions drops one segment at several positions,
// duplicates, overlaps and reorders segments, and checks that exactly the
// frames a gap cut are reported as cut (with the gap's offset and size),
// every other frame comes out whole, and pairing goes on.
func TestReadGapsAndRetransmissions(t *testing.T) {
	xs := gapExchanges()
	frames := func() [][]byte {
		var out [][]byte
		for _, x := range xs {
			out = append(out, x.req, x.resp)
		}
		return out
	}()
	type want struct {
		cut        map[int]Cut // frame index: the cut reported
		lost       map[int]bool
		orphan     map[int]bool // responses without their request
		unanswered int64
		gaps       int64
		retrans    bool
	}
	cases := []struct {
		name   string
		mutate func(segs []seg) []seg
		want   func(offsets []int64) want
	}{
		{"inside a request", func(s []seg) []seg { s[findSeg(s, 6, 1)].drop = true; return s },
			func(off []int64) want {
				return want{cut: map[int]Cut{6: {Size: int64(len(frames[6])), Captured: mss, GapOffset: off[6] + mss, GapSize: mss}}, gaps: 1}
			}},
		{"inside a response", func(s []seg) []seg { s[findSeg(s, 3, 2)].drop = true; return s },
			func(off []int64) want {
				return want{cut: map[int]Cut{3: {Size: int64(len(frames[3])), Captured: 2 * mss, GapOffset: off[3] + 2*mss, GapSize: mss}}, gaps: 1}
			}},
		{"last segment of a response", func(s []seg) []seg {
			last := 0
			for i, g := range s {
				if g.frame == 3 {
					last = i
				}
			}
			s[last].drop = true
			return s
		}, func(off []int64) want {
			n := len(frames[3]) % mss
			return want{cut: map[int]Cut{3: {Size: int64(len(frames[3])), Captured: len(frames[3]) - n, GapOffset: off[3] + int64(len(frames[3])-n), GapSize: int64(n)}}, gaps: 1}
		}},
		{"request at a boundary", func(s []seg) []seg { s[findSeg(s, 4, 0)].drop = true; return s },
			func([]int64) want { return want{lost: map[int]bool{4: true}, orphan: map[int]bool{5: true}, gaps: 1} }},
		{"response at a boundary", func(s []seg) []seg { s[findSeg(s, 1, 0)].drop = true; return s },
			func([]int64) want { return want{lost: map[int]bool{1: true}, unanswered: 1, gaps: 1} }},
		{"size prefix of a request", func(s []seg) []seg { s[findSeg(s, 6, 0)].drop = true; return s },
			func([]int64) want { return want{lost: map[int]bool{6: true}, orphan: map[int]bool{7: true}, gaps: 1} }},
		{"duplicates", func(s []seg) []seg {
			for i := range s {
				s[i].dup = true
			}
			return s
		}, func([]int64) want { return want{retrans: true} }},
		{"overlapping retransmission", func(s []seg) []seg {
			// A segment resent as one that spans the end of one segment
			// and the start of the next.
			i := findSeg(s, 3, 1)
			a, b := s[i], s[i+1]
			over := seg{dir: a.dir, seq: a.seq + 700, data: append(bytes.Clone(a.data[700:]), b.data[:500]...), frame: -1}
			return append(s[:i+2:i+2], append([]seg{over}, s[i+2:]...)...)
		}, func([]int64) want { return want{retrans: true} }},
		{"out of order", func(s []seg) []seg {
			i := findSeg(s, 3, 1)
			s[i], s[i+1] = s[i+1], s[i]
			j := findSeg(s, 6, 0)
			s[j], s[j+1] = s[j+1], s[j]
			return s
		}, func([]int64) want { return want{} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			segs, offsets := segments(xs)
			w := tc.want(offsets)
			data := writeSegments(t, tc.mutate(segs), nil)
			evs, st := readAll(t, data, Options{})
			i := 0
			for fi, f := range frames {
				if w.lost[fi] {
					continue
				}
				if i >= len(evs) {
					t.Fatalf("frame %d missing: %d events", fi, len(evs))
				}
				ev := evs[i]
				i++
				if ev.Dir != Dir(fi%2) || ev.Offset != offsets[fi] {
					t.Fatalf("event %d: dir %v offset %d, want frame %d (dir %v offset %d)", i-1, ev.Dir, ev.Offset, fi, Dir(fi%2), offsets[fi])
				}
				if c, ok := w.cut[fi]; ok {
					if ev.Cut == nil || *ev.Cut != c {
						t.Errorf("frame %d: cut %+v, want %+v", fi, ev.Cut, c)
					}
					if !bytes.Equal(ev.Data, f[:c.Captured]) {
						t.Errorf("frame %d: cut data differs from the captured start", fi)
					}
				} else if ev.Cut != nil || !bytes.Equal(ev.Data, f) {
					t.Errorf("frame %d: cut %+v, %d bytes; want it whole (%d bytes)", fi, ev.Cut, len(ev.Data), len(f))
				}
				if fi%2 == 1 {
					corr := int32(binary.BigEndian.Uint32(f[4:]))
					if w.orphan[fi] {
						if ev.Req != nil {
							t.Errorf("frame %d: paired with %+v, its request was lost", fi, ev.Req)
						}
					} else if ev.Req == nil || ev.Req.CorrelationID != corr {
						t.Errorf("frame %d: paired with %+v, want correlation id %d", fi, ev.Req, corr)
					}
				}
			}
			if i != len(evs) {
				t.Errorf("%d events, want %d", len(evs), i)
			}
			if st.Gaps != w.gaps || st.Unanswered != w.unanswered || int(st.CutFrames) != len(w.cut) {
				t.Errorf("stats %+v; want %d gaps, %d unanswered, %d cut", st, w.gaps, w.unanswered, len(w.cut))
			}
			if (st.RetransmittedBytes > 0) != w.retrans {
				t.Errorf("%d bytes retransmitted, want some: %v", st.RetransmittedBytes, w.retrans)
			}
		})
	}
}

// TestReadUnicodeClientID: a client id that is valid UTF-8 but not ASCII
// is a client id like any other, with and without the handshake captured
// (without it, both halves lock on at their first byte).
func TestReadUnicodeClientID(t *testing.T) {
	fm := kmsg.NewRequestFormatter(kmsg.FormatterClientID("Zürich-日本-consumer"))
	var xs []exchange
	for i, x := range sampleExchanges() {
		key := int16(binary.BigEndian.Uint16(x.req[4:]))
		req := kmsg.RequestForKey(key)
		req.SetVersion(int16(binary.BigEndian.Uint16(x.req[6:])))
		// All three are flexible versions: header tags after the id.
		if err := req.ReadFrom(x.req[4+10+len("capture-test")+1:]); err != nil {
			t.Fatalf("exchange %d: %v", i, err)
		}
		// Re-encode through the formatter with the new client id; the
		// body bytes stay those kmsg wrote.
		b := fm.AppendRequest(nil, req, int32(i+1))
		xs = append(xs, exchange{b, x.resp})
	}
	for _, open := range []bool{true, false} {
		data := writeCapture(t, PCAP, xs, open, 0, 0)
		evs, st := readAll(t, data, Options{})
		if len(evs) != 2*len(xs) || st.SkippedBytes != 0 || len(st.Ignored) != 0 {
			t.Fatalf("handshake %v: %d frames (want %d), stats %+v", open, len(evs), 2*len(xs), st)
		}
		for i, ev := range evs {
			want := xs[i/2].req
			if i%2 == 1 {
				want = xs[i/2].resp
			}
			if !bytes.Equal(ev.Data, want) || ev.Offset != int64(0) && i < 2 {
				t.Errorf("handshake %v: frame %d differs or starts at %d", open, i, ev.Offset)
			}
			if i%2 == 1 && ev.Req == nil {
				t.Errorf("handshake %v: response %d unpaired", open, i/2)
			}
		}
	}
}

// TestReadIgnoredConnections: connections that carry no Kafka are counted
// by reason, and one whose first request looks like Kafka but fails the
// framing checks is decoded and flagged, not dropped.
func TestReadIgnoredConnections(t *testing.T) {
	xs := sampleExchanges()
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, PCAP)
	cl := func(port uint16) netip.AddrPort { return netip.AddrPortFrom(client.Addr(), port) }
	httpc := w.Conn(cl(40001), netip.MustParseAddrPort("10.0.0.3:80"))
	tlsc := w.Conn(cl(40002), netip.MustParseAddrPort("10.0.0.3:443"))
	idle := w.Conn(cl(40003), server)
	odd := w.Conn(cl(40004), server)
	for _, c := range []*ConnWriter{httpc, tlsc, idle, odd} {
		if err := c.Open(t0); err != nil {
			t.Fatal(err)
		}
	}
	httpc.Write(ClientToServer, t0, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	httpc.Write(ServerToClient, t0, []byte("HTTP/1.1 200 OK\r\n\r\n"))
	tlsc.Write(ClientToServer, t0, append([]byte{0x16, 3, 1, 0, 0x40, 1, 0, 0, 0x3c, 3, 3}, make([]byte, 0x3c)...))
	fm := kmsg.NewRequestFormatter(kmsg.FormatterClientID("bad\x01id"))
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version = 4
	odd.Write(ClientToServer, t0, fm.AppendRequest(nil, hb, 1))
	odd.Write(ServerToClient, t0, xs[2].resp[:4+4]) // cut short by the end
	for _, c := range []*ConnWriter{httpc, tlsc, idle, odd} {
		c.Close(t0)
	}
	var notes []string
	st, err := Read(bytes.NewReader(buf.Bytes()), Options{Known: known(t), Verify: verify(t)}, func(ev *Event) error {
		notes = append(notes, ev.Conn.Note)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantIgnored := map[string]int64{"HTTP": 1, "TLS": 1, "no payload": 1}
	if fmt.Sprint(st.Ignored) != fmt.Sprint(wantIgnored) || st.Connections != 1 || st.Suspect != 1 {
		t.Errorf("stats %+v, want ignored %v, 1 connection, 1 suspect", st, wantIgnored)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "control character U+0001") {
		t.Errorf("notes %q", notes)
	}
}

// TestReadPortReuse: a port pair used again by a new connection (a new
// SYN, the old connection's end not captured) is a second connection,
// and its frames pair among themselves.
func TestReadPortReuse(t *testing.T) {
	xs := sampleExchanges()
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, PCAP)
	for round := 0; round < 2; round++ {
		c := w.Conn(client, server)
		if round == 1 {
			// Other initial sequence numbers, no FIN before.
			c.Skip(ClientToServer, 7777)
			c.Skip(ServerToClient, 99999)
		}
		c.Open(t0)
		for _, x := range xs {
			c.Write(ClientToServer, t0, x.req)
			c.Write(ServerToClient, t0, x.resp)
		}
	}
	evs, st := readAll(t, buf.Bytes(), Options{})
	if len(evs) != 4*len(xs) || st.Connections != 2 || st.Gaps != 0 || st.Unpaired != 0 {
		t.Fatalf("%d frames, stats %+v", len(evs), st)
	}
}

// TestReadLateSegment: a segment the capture puts after the
// acknowledgement of it (and after the response to its request) arrives
// after its hole was declared a gap: its bytes are counted as late, not
// as retransmitted, and the frames after it are unaffected.
func TestReadLateSegment(t *testing.T) {
	xs := gapExchanges()
	segs, _ := segments(xs)
	i := findSeg(segs, 6, 0)
	first := segs[i]
	rest := append(slices.Clone(segs[:i]), segs[i+1:]...)
	j := findSeg(rest, 7, 0)
	reordered := append(slices.Clone(rest[:j+1]), append([]seg{first}, rest[j+1:]...)...)
	evs, st := readAll(t, writeSegments(t, reordered, nil), Options{})
	if st.LateBytes != int64(len(first.data)) || st.RetransmittedBytes != 0 || st.Gaps != 1 {
		t.Errorf("stats %+v; want %d late bytes", st, len(first.data))
	}
	last := evs[len(evs)-1]
	if !bytes.Equal(last.Data, xs[4].resp) || last.Req == nil {
		t.Errorf("the last exchange is not intact after the late segment")
	}
}

// TestReadBogusAck: one acknowledgement far beyond anything the other
// side sent (a damaged packet) does not declare a gap of a gigabyte in its
// stream, which made every byte it sent after it late and lost; it is
// ignored, and the connection reads on.
func TestReadBogusAck(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, PCAP)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Conn(netip.MustParseAddrPort("10.0.0.1:51000"), netip.MustParseAddrPort("10.0.0.2:9092"))
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := c.Open(t0); err != nil {
		t.Fatal(err)
	}
	const n = 6
	for i := int32(0); i < n; i++ {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		if i == 2 {
			c.Skip(ClientToServer, 1<<30)
			if err := c.WriteSegment(ServerToClient, at, c.Seq(ServerToClient), nil); err != nil {
				t.Fatal(err)
			}
			c.Skip(ClientToServer, -(1 << 30))
		}
		if err := c.Write(ClientToServer, at, reqFrame(kmsg.NewPtrHeartbeatRequest(), i)); err != nil {
			t.Fatal(err)
		}
		if err := c.Write(ServerToClient, at, respFrame(kmsg.NewPtrHeartbeatResponse(), i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	frames, st := readAll(t, buf.Bytes(), Options{})
	unpaired := 0
	for _, f := range frames {
		if f.Dir == ServerToClient && f.Req == nil {
			unpaired++
		}
	}
	if len(frames) != 2*n || unpaired != 0 || st.Gaps != 0 || st.LateBytes != 0 {
		t.Errorf("%d frames of %d, %d responses without their request, %d gaps, %d late bytes", len(frames), 2*n, unpaired, st.Gaps, st.LateBytes)
	}
}

// TestReadStraySYN: a SYN on the port pair of a live connection (a
// damaged or stray packet) that nothing answers does not end it: the
// requests after it are read on the same connection and pair their
// responses. (TestReadPortReuse: a SYN the server answers opens a new one.)
func TestReadStraySYN(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, PCAP)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Conn(netip.MustParseAddrPort("10.0.0.1:51000"), netip.MustParseAddrPort("10.0.0.2:9092"))
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := c.Open(t0); err != nil {
		t.Fatal(err)
	}
	stray := w.Conn(netip.MustParseAddrPort("10.0.0.1:51000"), netip.MustParseAddrPort("10.0.0.2:9092"))
	stray.Skip(ClientToServer, 123456789)
	const n = 6
	for i := int32(0); i < n; i++ {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		if i == 2 {
			if err := stray.packet(ClientToServer, at, nil, flags{syn: true}); err != nil { // a SYN, unanswered
				t.Fatal(err)
			}
		}
		if err := c.Write(ClientToServer, at, reqFrame(kmsg.NewPtrHeartbeatRequest(), i)); err != nil {
			t.Fatal(err)
		}
		if err := c.Write(ServerToClient, at, respFrame(kmsg.NewPtrHeartbeatResponse(), i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	frames, st := readAll(t, buf.Bytes(), Options{})
	unpaired := 0
	for _, f := range frames {
		if f.Dir == ServerToClient && f.Req == nil {
			unpaired++
		}
	}
	if len(frames) != 2*n || unpaired != 0 || st.Connections != 1 {
		t.Errorf("%d frames of %d, %d responses without their request, %d connections", len(frames), 2*n, unpaired, st.Connections)
	}
}

// TestReadStrayRST: a RST whose sequence number is nowhere near its
// sender's stream (a damaged or forged packet, which a TCP stack ignores
// too) does not end the connection: the bytes after it are read, not
// dropped as duplicates.
func TestReadStrayRST(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, PCAP)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Conn(netip.MustParseAddrPort("10.0.0.1:51000"), netip.MustParseAddrPort("10.0.0.2:9092"))
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := c.Open(t0); err != nil {
		t.Fatal(err)
	}
	const n = 6
	for i := int32(0); i < n; i++ {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		if i == 2 {
			c.Skip(ClientToServer, 1<<30)
			if err := c.packet(ClientToServer, at, nil, flags{rst: true}); err != nil {
				t.Fatal(err)
			}
			c.Skip(ClientToServer, -(1 << 30))
		}
		if err := c.Write(ClientToServer, at, reqFrame(kmsg.NewPtrHeartbeatRequest(), i)); err != nil {
			t.Fatal(err)
		}
		if err := c.Write(ServerToClient, at, respFrame(kmsg.NewPtrHeartbeatResponse(), i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	frames, st := readAll(t, buf.Bytes(), Options{})
	if len(frames) != 2*n || st.RetransmittedBytes != 0 {
		t.Errorf("%d frames of %d, %d bytes dropped as retransmitted", len(frames), 2*n, st.RetransmittedBytes)
	}
}
