package proxy

import (
	"bytes"
	"net"
	"testing"
	"time"
)

// sinkConn is a net.Conn that keeps what is written to it.
type sinkConn struct {
	net.Conn
	buf bytes.Buffer
}

func (s *sinkConn) Write(b []byte) (int, error)      { return s.buf.Write(b) }
func (s *sinkConn) SetWriteDeadline(time.Time) error { return nil }
func (s *sinkConn) RemoteAddr() net.Addr             { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }

// FuzzFraming feeds arbitrary client and broker bytes, cut at arbitrary
// points, through the request and response framers: no panic, every
// broker byte reaches the client unchanged (unless broker addresses were
// rewritten to proxy listeners), and the decode-queue space reserved is
// never more than the queue's size, and once the queue has drained it is
// exactly what the frames being collected hold.
func FuzzFraming(f *testing.F) {
	hbReq, hbResp := heartbeat(1)
	mdReq, mdResp := metadata(2, "10.0.0.1", 9092)
	f.Add(append(hbReq, mdReq...), append(hbResp, mdResp...), uint16(7))
	f.Add(handshakeV0(), []byte{0, 0, 0, 0}, uint16(3))
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff, 0, 1}, []byte{0x7f, 0xff, 0xff, 0xff}, uint16(1))
	f.Add([]byte{0, 0, 0, 8, 0, 12, 0, 4, 0, 0, 0, 1}, []byte{0, 0, 0, 4, 0, 0, 0, 1}, uint16(2))
	// One codec for every input: a codec is safe for concurrent use, and
	// a new one builds its plans again (most of an input's time).
	cd := testCodec(f)
	f.Fuzz(func(t *testing.T, client, broker []byte, cut uint16) {
		if len(client)+len(broker) > 1<<16 {
			return
		}
		p, err := New(Config{Listen: "127.0.0.1:0", Upstream: "127.0.0.1:1", Codec: cd, QueueFrames: 8, QueueBytes: 4096, MaxBuffer: 2048, ListenerIdle: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		sc := &sinkConn{}
		c := newConn(p, p.boot, sc, 1, "127.0.0.1:1")
		step := int(cut%97) + 1
		fr, rs := &framer{}, &respState{}
		for i := 0; i < len(client); i += step {
			c.frameRequests(fr, client[i:min(i+step, len(client))])
		}
		for i := 0; i < len(broker); i += step {
			if err := c.frameResponses(rs, broker[i:min(i+step, len(broker))]); err != nil {
				t.Fatal(err)
			}
		}
		if rs.lost { // framing stopped: everything was forwarded as it came
		} else if rs.hold != nil { // a held response cut short is forwarded at the end
			sc.buf.Write(rs.hold)
		} else if rs.hn > 0 && rs.size == 0 { // as pumpResponses does at the end
			sc.buf.Write(rs.hdr[:rs.hn])
		}
		got := sc.buf.Bytes()
		if !bytes.Equal(got, broker) && !rewroteSome(p) {
			t.Fatalf("the client got % x, the broker sent % x", got, broker)
		}
		// Once the decoding goroutine has drained the queue (Close waits
		// for it; a frame it is decoding keeps its space until done), the
		// space still reserved is exactly what the frames being collected
		// hold.
		p.q.mu.Lock()
		peak := p.q.bytes
		p.q.mu.Unlock()
		if peak > 4096 {
			t.Fatalf("%d queue bytes reserved, over the queue's 4096", peak)
		}
		p.Close()
		p.q.mu.Lock()
		got2, want := p.q.bytes, int64(fr.resv+rs.resv)
		p.q.mu.Unlock()
		if got2 != want {
			t.Fatalf("%d queue bytes reserved after the queue drained, the frames being collected hold %d", got2, want)
		}
	})
}

// rewroteSome reports whether the proxy opened a listener for a broker,
// i.e. rewrote addresses.
func rewroteSome(p *Proxy) bool { return len(p.Listeners()) > 1 }

func handshakeV0() []byte {
	b := []byte{0, 0, 0, 0, 0, 17, 0, 0, 0, 0, 0, 1, 0, 0, 0, 5, 'P', 'L', 'A', 'I', 'N'}
	b[3] = byte(len(b) - 4)
	tok := []byte{0, 0, 0, 5, 0, 'u', 0, 'p', 'w'}
	return append(b, tok...)
}

// FuzzDecodeStream feeds arbitrary bytes to the job stream's reader,
// as a decoding process reads them: no panic, an error or the end of
// the stream, and whatever jobs read before it are whole (their byte
// strings inside the input's length).
func FuzzDecodeStream(f *testing.F) {
	b := []byte(streamMagic)
	for _, j := range sampleJobs() {
		if j.it == nil || j.it.body.len() == 0 {
			b = appendJob(b, j)
		}
	}
	f.Add(b)
	f.Add([]byte(streamMagic))
	f.Add(append([]byte(streamMagic), 0, 0x20, 0, 0))
	f.Fuzz(func(t *testing.T, in []byte) {
		sr, err := newStreamReader(bytes.NewReader(in), 1<<20, func(base Event) *conn { return &conn{base: base} })
		if err != nil {
			return
		}
		for {
			j, err := sr.job()
			if err != nil {
				return
			}
			if j.it != nil && len(j.it.data)+len(j.it.original) > len(in) {
				t.Fatalf("a job of %d bytes from %d bytes of input", len(j.it.data)+len(j.it.original), len(in))
			}
		}
	})
}
