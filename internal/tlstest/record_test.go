package tlstest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/testdeadline"
)

// TestConnRecordsCausally: a client writing and reading an echo server
// from two goroutines at once is recorded whole in both directions, and
// at every point of the recording it has read no more than it wrote.
func TestConnRecordsCausally(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, c)
	}()
	d := &Dialer{}
	c, err := d.DialContext(testdeadline.Context(t), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(testdeadline.Deadline(t))
	var sent bytes.Buffer
	for i := range 300 {
		fmt.Fprintf(&sent, "message %d: %s|", i, bytes.Repeat([]byte("ü"), i%97))
	}
	wrote := make(chan error, 1)
	go func() {
		b := sent.Bytes()
		for len(b) > 0 {
			n := min(len(b), 1+len(b)%501)
			if _, err := c.Write(b[:n]); err != nil {
				wrote <- err
				return
			}
			b = b[n:]
		}
		wrote <- nil
	}()
	got := make([]byte, sent.Len())
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("reading the echo: %v", err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	c.Close()
	if !bytes.Equal(got, sent.Bytes()) {
		t.Fatal("the echo differs from what was sent")
	}
	recs := d.Recordings()
	if len(recs) != 1 {
		t.Fatalf("%d recordings, want 1", len(recs))
	}
	r := recs[0]
	if r.Client != addrPort(c.LocalAddr()) || r.Server.String() != ln.Addr().String() || r.End.IsZero() {
		t.Errorf("recording of %s -> %s (end %v), want %s -> %s, closed", r.Client, r.Server, r.End, c.LocalAddr(), ln.Addr())
	}
	for _, dir := range []capture.Dir{capture.ClientToServer, capture.ServerToClient} {
		if !bytes.Equal(r.Stream(dir), sent.Bytes()) {
			t.Errorf("%s: %d bytes recorded, %d passed", dir, len(r.Stream(dir)), sent.Len())
		}
	}
	var w, rd int
	last := r.Start
	for i, ch := range r.Chunks {
		if ch.Dir == capture.ClientToServer {
			w += len(ch.Data)
		} else {
			rd += len(ch.Data)
		}
		if rd > w {
			t.Fatalf("chunk %d: %d bytes read before %d were written", i, rd, w)
		}
		if ch.Time.Before(last) {
			t.Fatalf("chunk %d: time %v before %v", i, ch.Time, last)
		}
		last = ch.Time
	}
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// metadata returns a Metadata v1 request and its response, correlation
// id corr, encoded by kmsg.
func metadata(corr int32) (req, resp []byte) {
	r := kmsg.NewPtrMetadataRequest()
	r.Version = 1
	req = kmsg.NewRequestFormatter(kmsg.FormatterClientID("tlstest")).AppendRequest(nil, r, corr)
	m := kmsg.NewPtrMetadataResponse()
	m.Version = 1
	b := m.AppendTo(binary.BigEndian.AppendUint32(make([]byte, 4), uint32(corr)))
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return req, b
}

// plainRecordings are two connections between the same addresses
// carrying Kafka in the clear, their exchanges interleaved in time.
func plainRecordings() (a, b *Recording) {
	q1, r1 := metadata(1)
	q2, r2 := metadata(2)
	client, server := netip.MustParseAddrPort("127.0.0.1:50000"), netip.MustParseAddrPort("127.0.0.1:9092")
	a = &Recording{Client: client, Server: server, Start: at(0), End: at(10), Chunks: []Chunk{
		{capture.ClientToServer, at(1), q1}, {capture.ServerToClient, at(3), r1},
		{capture.ClientToServer, at(5), q2}, {capture.ServerToClient, at(6), r2},
	}}
	b = &Recording{Client: client, Server: server, Start: at(0), End: at(10), Chunks: []Chunk{
		{capture.ClientToServer, at(2), q1}, {capture.ServerToClient, at(4), r1},
	}}
	return a, b
}

type event struct {
	conn       int
	client     netip.AddrPort
	server     netip.AddrPort
	dir        capture.Dir
	time       time.Time
	corr       int32
	cut        bool
	paired     bool
	lostBefore int64
}

func readEvents(t *testing.T, f capture.Format, recs ...*Recording) ([]event, capture.Stats) {
	t.Helper()
	var b bytes.Buffer
	if err := WritePcap(&b, f, recs...); err != nil {
		t.Fatal(err)
	}
	var evs []event
	st, err := capture.Read(&b, readOptions(t), func(ev *capture.Event) error {
		e := event{conn: ev.Conn.ID, client: ev.Conn.Client, server: ev.Conn.Server, dir: ev.Dir, time: ev.Time,
			cut: ev.Cut != nil, paired: ev.Request != nil, lostBefore: ev.Lost}
		if ev.Dir == capture.ClientToServer && len(ev.Data) >= 12 {
			e.corr = int32(binary.BigEndian.Uint32(ev.Data[8:]))
		} else if len(ev.Data) >= 8 {
			e.corr = int32(binary.BigEndian.Uint32(ev.Data[4:]))
		}
		evs = append(evs, e)
		return nil
	})
	if err != nil {
		t.Fatalf("capture.Read: %v", err)
	}
	return evs, st
}

// TestWritePcapInterleaves: two recordings between the same addresses
// become two connections (the second with another client port, the
// server's kept), their frames in time order, with their times, in pcap
// and pcapng alike.
func TestWritePcapInterleaves(t *testing.T) {
	a, b := plainRecordings()
	for _, f := range []capture.Format{capture.PCAP, capture.PCAPNG} {
		evs, st := readEvents(t, f, a, b)
		want := []struct {
			conn int
			dir  capture.Dir
			sec  int
			corr int32
		}{{1, 0, 1, 1}, {2, 0, 2, 1}, {1, 1, 3, 1}, {2, 1, 4, 1}, {1, 0, 5, 2}, {1, 1, 6, 2}}
		if len(evs) != len(want) || st.Connections != 2 || st.Requests != 3 || st.Responses != 3 || st.Unpaired != 0 {
			t.Fatalf("format %d: %d frames (%+v), stats %+v", f, len(evs), evs, st)
		}
		for i, w := range want {
			e := evs[i]
			if e.conn != w.conn || e.dir != w.dir || !e.time.Equal(at(w.sec)) || e.corr != w.corr || e.cut || (e.dir == capture.ServerToClient) != e.paired {
				t.Errorf("format %d: frame %d is %+v, want %+v", f, i, e, w)
			}
		}
		for _, e := range evs {
			if e.server != a.Server {
				t.Errorf("server %s, want %s", e.server, a.Server)
			}
			if e.conn == 1 && e.client != a.Client {
				t.Errorf("first connection's client %s, want %s", e.client, a.Client)
			}
			if e.conn == 2 && (e.client == a.Client || e.client.Addr() != a.Client.Addr()) {
				t.Errorf("second connection's client %s, want another port of %s", e.client, a.Client.Addr())
			}
		}
	}
}

// TestWritePcapSkip: bytes a recording's skip leaves out are a gap in
// the capture (two when the skip spans chunks written at different
// times), and the frame a gap cuts is reported cut: inside a response,
// the next response is whole and paired; across the end of the first
// request and the header of the second, the second response answers a
// request never seen. A skip past the end of its stream is refused.
func TestWritePcapSkip(t *testing.T) {
	a, _ := plainRecordings()
	q1, r1 := a.Chunks[0].Data, a.Chunks[1].Data
	cases := []struct {
		name       string
		skip       Skip
		gaps       int64
		cut        []int // indexes of the frames cut
		lastPaired bool
	}{
		{"inside a response", Skip{capture.ServerToClient, 9, 3}, 1, []int{1}, true},
		{"across two requests", Skip{capture.ClientToServer, int64(len(q1)) - 2, 5}, 2, []int{0}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := a.WithSkip(c.skip.Dir, c.skip.Offset, c.skip.N)
			if len(a.Skips) != 0 {
				t.Fatal("WithSkip changed its receiver")
			}
			evs, st := readEvents(t, capture.PCAP, r)
			if st.Gaps != c.gaps || st.GapBytes != c.skip.N {
				t.Errorf("%d gaps of %d bytes, want %d of %d", st.Gaps, st.GapBytes, c.gaps, c.skip.N)
			}
			var cut []int
			for i, e := range evs {
				if e.cut {
					cut = append(cut, i)
				}
			}
			if fmt.Sprint(cut) != fmt.Sprint(c.cut) {
				t.Errorf("frames cut: %v, want %v (frames %+v)", cut, c.cut, evs)
			}
			if last := evs[len(evs)-1]; last.cut || last.dir != capture.ServerToClient || last.corr != 2 || last.paired != c.lastPaired {
				t.Errorf("last frame %+v, want the second response, whole, paired %v", last, c.lastPaired)
			}
		})
	}
	var b bytes.Buffer
	if err := WritePcap(&b, capture.PCAP, a.WithSkip(capture.ServerToClient, int64(len(r1))+1, int64(len(r1)))); err == nil {
		t.Error("a skip past the end of the stream was accepted")
	}
}
