package capdecode

import (
	"bytes"
	"context"
	"encoding/binary"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/pipeline"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
)

func newCodec(t *testing.T) *codec.Codec {
	t.Helper()
	reg, err := schema.Load(testshared.Spec(t, "4.3"))
	if err != nil {
		t.Fatal(err)
	}
	return codec.New(reg)
}

// reqFrame and respFrame encode with kmsg, an independent encoder.
func reqFrame(r kmsg.Request, corr int32) []byte {
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("capdecode-test")).AppendRequest(nil, r, corr)
}

func respFrame(r kmsg.Response, corr int32) []byte {
	b := binary.BigEndian.AppendUint32(make([]byte, 4, 64), uint32(corr))
	if r.IsFlexible() && r.Key() != 18 {
		b = append(b, 0) // empty header tagged fields
	}
	b = r.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

var (
	client = netip.MustParseAddrPort("10.0.0.1:51000")
	server = netip.MustParseAddrPort("10.0.0.2:9092")
	t0     = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

// heartbeat is a Heartbeat v4 exchange whose response carries error 27.
func heartbeat(corr int32) (req, resp []byte) {
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version = 4
	hb.Group, hb.MemberID = "g", "m"
	hbr := kmsg.NewPtrHeartbeatResponse()
	hbr.Version = 4
	hbr.ErrorCode = 27
	return reqFrame(hb, corr), respFrame(hbr, corr)
}

// writeCapture writes a capture of one connection: n Heartbeat exchanges
// 3 ms apart (the response 1 ms after its request), then a response
// whose request was never sent.
func writeCapture(t *testing.T, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.PCAP)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Conn(client, server)
	if err := c.Open(t0); err != nil {
		t.Fatal(err)
	}
	at := t0
	for i := range n {
		req, resp := heartbeat(int32(i + 1))
		if err := c.Write(capture.ClientToServer, at, req); err != nil {
			t.Fatal(err)
		}
		if err := c.Write(capture.ServerToClient, at.Add(time.Millisecond), resp); err != nil {
			t.Fatal(err)
		}
		at = at.Add(3 * time.Millisecond)
	}
	_, orphan := heartbeat(999)
	if err := c.Write(capture.ServerToClient, at, orphan); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(at); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestFramesOfACapture reads a capture's events into Frames and checks
// what they carry and what they decode to.
func TestFramesOfACapture(t *testing.T) {
	c := newCodec(t)
	data := writeCapture(t, 3)
	rd := NewReader(c.Reg, report.Options{Roundtrip: true})
	var got []*Frame
	var evData [][]byte
	_, err := capture.Read(bytes.NewReader(data), Options(c, nil), func(ev *capture.Event) error {
		got = append(got, rd.Frame(ev))
		evData = append(evData, bytes.Clone(ev.Data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 7 || rd.Frames() != 7 {
		t.Fatalf("%d frames (Frames() %d), want 3 exchanges and an orphan: 7", len(got), rd.Frames())
	}
	for i, f := range got {
		if f.Index != i {
			t.Errorf("frame %d: Index %d", i, f.Index)
		}
		if !bytes.Equal(f.Data, evData[i]) {
			t.Errorf("frame %d: Data is not the event's", i)
		}
		if !f.Options.Roundtrip || !f.Options.NewerAsWarning {
			t.Errorf("frame %d: options %+v lost the base settings", i, f.Options)
		}
	}
	req, resp, orphan := got[0], got[1], got[6]
	if req.Response || req.Src != client.String() || req.Dst != server.String() || req.Options.Kind == schema.TypeResponse {
		t.Errorf("request frame: %+v", req)
	}
	if !resp.Response || !resp.Paired || resp.Src != server.String() || resp.Options.API == nil || resp.Options.API.Key != 12 || resp.Options.Version != 4 {
		t.Errorf("response frame: %+v", resp)
	}
	if resp.Latency == nil || *resp.Latency != 1000 {
		t.Errorf("response latency %v, want 1000 µs", resp.Latency)
	}
	if orphan.Paired || orphan.Latency != nil || len(orphan.Hints) == 0 || orphan.Hints[0] != (report.Hint{APIKey: 12, Version: 4}) {
		t.Errorf("unpaired response: paired %v, latency %v, hints %v", orphan.Paired, orphan.Latency, orphan.Hints)
	}
	if offs := []int64{got[0].Offset, got[2].Offset, got[1].Offset, got[3].Offset}; offs[0] != 0 || offs[1] != int64(len(evData[0])) || offs[2] != 0 || offs[3] != int64(len(evData[1])) {
		t.Errorf("stream offsets %v", offs)
	}

	r := resp.Decode(c, nil)
	if r.Error != "" || r.Kind != "response" || r.APIKey != 12 || r.Index != 1 || r.Src != server.String() || r.LatencyMicros == nil || r.Time == nil || !r.Time.Equal(t0.Add(time.Millisecond)) {
		t.Errorf("decoded response: %+v", r)
	}
	if !r.OK() {
		t.Errorf("response does not round-trip: %+v", r)
	}
	if r := req.Decode(c, nil); r.Error != "" || r.Kind != "request" || r.CorrelationID != 1 {
		t.Errorf("decoded request: %+v", r)
	}
	// The orphan is decoded by trying the responses of the spec, its
	// neighbours' API first.
	r = orphan.Decode(c, nil)
	if !r.APIUnknown || r.CorrelationID != 999 || len(r.Candidates) == 0 {
		t.Fatalf("unpaired response: %+v", r)
	}
	if cd := r.Candidates[0]; cd.APIKey != 12 || cd.Version != 4 {
		t.Errorf("unpaired response's first candidate %+v, want the neighbours' Heartbeat v4", cd)
	}
}

// TestHintsKept keeps the latest requests, newest first, without repeats
// in a row, at most hintsKept per list.
func TestHintsKept(t *testing.T) {
	h := hints{conn: map[int][]report.Hint{}}
	for k := range int16(20) {
		h.add(1, report.Hint{APIKey: k})
		h.add(1, report.Hint{APIKey: k}) // a repeat is kept once
	}
	h.add(2, report.Hint{APIKey: 99})
	near := h.near(1)
	if len(near) != 2*hintsKept {
		t.Fatalf("near: %d hints, want %d", len(near), 2*hintsKept)
	}
	if near[0].APIKey != 19 || near[hintsKept-1].APIKey != 12 || near[hintsKept].APIKey != 99 {
		t.Errorf("near(1) = %v", near)
	}
	// near returns a copy: changing it changes nothing kept.
	near[0].APIKey = -1
	if h.near(1)[0].APIKey != 19 {
		t.Error("near shares the kept list")
	}
}

// TestVerifier accepts frames that decode and refuses those that do not.
func TestVerifier(t *testing.T) {
	c := newCodec(t)
	v := Verifier(c)
	req, resp := heartbeat(7)
	if !v(req, capture.ClientToServer, nil) {
		t.Error("a Heartbeat request is refused")
	}
	hbReq := &capture.Request{APIKey: 12, Version: 4, CorrelationID: 7}
	if !v(resp, capture.ServerToClient, hbReq) {
		t.Error("a Heartbeat response with its request is refused")
	}
	if !v(resp, capture.ServerToClient, nil) {
		t.Error("a Heartbeat response without its request is refused")
	}
	bad := slices.Clone(req)
	bad = bad[:len(bad)-3]
	binary.BigEndian.PutUint32(bad, uint32(len(bad)-4))
	if v(bad, capture.ClientToServer, nil) {
		t.Error("a truncated request is accepted")
	}
	if v(resp, capture.ServerToClient, &capture.Request{APIKey: 30000, Version: 0}) {
		t.Error("a response to an unknown API is accepted")
	}
	if v(resp[:len(resp)-1], capture.ServerToClient, hbReq) {
		t.Error("a response one byte short is accepted")
	}
}

// TestPipelineOrder decodes a capture's frames on four workers through
// package pipeline and checks that the reports come out in capture order,
// as decoding them one by one gives them.
func TestPipelineOrder(t *testing.T) {
	c := newCodec(t)
	data := writeCapture(t, 200)
	var serial []string
	rd := NewReader(c.Reg, report.Options{})
	if _, err := capture.Read(bytes.NewReader(data), Options(c, nil), func(ev *capture.Event) error {
		r := rd.Frame(ev).Decode(c, nil)
		serial = append(serial, r.Summary())
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	type job struct {
		f *Frame
		r *report.Frame
	}
	var parallel []string
	pl := pipeline.New(context.Background(), pipeline.Config{Workers: 4}, pipeline.Stages[*job]{
		Work: func(j *job) error { j.r = j.f.Decode(c, nil); return nil },
		Emit: func(j *job) error { parallel = append(parallel, j.r.Summary()); return nil },
	})
	rd = NewReader(c.Reg, report.Options{})
	if _, err := capture.Read(bytes.NewReader(data), Options(c, nil), func(ev *capture.Event) error {
		return pl.Submit(&job{f: rd.Frame(ev)})
	}); err != nil {
		t.Fatal(err)
	}
	if err := pl.Close(); err != nil {
		t.Fatal(err)
	}
	if len(serial) != 401 || !slices.Equal(serial, parallel) {
		t.Fatalf("%d frames one by one, %d through the pipeline; equal: %v", len(serial), len(parallel), slices.Equal(serial, parallel))
	}
}

// TestOrphansLeanAfterTheFirst: the first report.FullSearches responses
// without their request search every response schema with the full
// allowance, later ones in proportion to their size; a lean search still
// tries the neighbours' API first, and finds it.
func TestOrphansLeanAfterTheFirst(t *testing.T) {
	c := newCodec(t)
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.PCAP)
	if err != nil {
		t.Fatal(err)
	}
	conn := w.Conn(client, server)
	if err := conn.Open(t0); err != nil {
		t.Fatal(err)
	}
	req, resp := heartbeat(1)
	at := t0
	for _, fr := range []struct {
		dir capture.Dir
		b   []byte
	}{{capture.ClientToServer, req}, {capture.ServerToClient, resp}} {
		if err := conn.Write(fr.dir, at, fr.b); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Millisecond)
	}
	n := report.FullSearches + 4
	for i := range n {
		_, orphan := heartbeat(int32(1000 + i))
		if err := conn.Write(capture.ServerToClient, at, orphan); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Millisecond)
	}
	if err := conn.Close(at); err != nil {
		t.Fatal(err)
	}
	rd := NewReader(c.Reg, report.Options{})
	var orphans []*Frame
	if _, err := capture.Read(bytes.NewReader(buf.Bytes()), Options(c, nil), func(ev *capture.Event) error {
		if f := rd.Frame(ev); f.Response && !f.Paired {
			orphans = append(orphans, f)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(orphans) != n {
		t.Fatalf("%d orphans, want %d", len(orphans), n)
	}
	for i, f := range orphans {
		if lean := i >= report.FullSearches; f.Options.LeanSearch != lean {
			t.Errorf("orphan %d: lean search %v, want %v", i, f.Options.LeanSearch, lean)
		}
		r := f.Decode(c, nil)
		if len(r.Candidates) == 0 || r.Candidates[0].APIKey != 12 || r.Candidates[0].Version != 4 {
			t.Errorf("orphan %d: candidates %v, want Heartbeat v4 first", i, r.Candidates)
		}
		if cut := i >= report.FullSearches; r.CandidatesIncomplete != cut {
			t.Errorf("orphan %d: search incomplete %v, want %v", i, r.CandidatesIncomplete, cut)
		}
	}
}

// TestForget: a connection forgotten keeps no hints of its own; the
// capture's stay.
func TestForget(t *testing.T) {
	r := NewReader(nil, report.Options{})
	r.hints.add(1, report.Hint{APIKey: 12, Version: 4})
	r.hints.add(2, report.Hint{APIKey: 3, Version: 12})
	r.Forget(1)
	if _, ok := r.hints.conn[1]; ok || len(r.hints.conn) != 1 {
		t.Errorf("hints per connection after Forget(1): %v", r.hints.conn)
	}
	if got := r.hints.near(1); len(got) != 2 || got[0] != (report.Hint{APIKey: 3, Version: 12}) {
		t.Errorf("near(1) = %v, want the capture's hints, newest first", got)
	}
}
