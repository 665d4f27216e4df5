package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/manifester/manifester/internal/pairing"
)

// throughStream, set while TestThroughDecodeStream runs, makes start put
// the decoding side across the job stream: the proxy writes it to a pipe
// (Config.DecodeTo) and DecodeStream reads the other end, as a decoding
// process does, with the Sink and test hooks the test gave.
var throughStream bool

// decodeThroughStream moves cfg's decoding side to a DecodeStream over a
// pipe. The proxy keeps no Sink or hook of its own, so that any event it
// delivered itself would be missing. Closing the stream's end (the proxy
// does, at Close) waits for DecodeStream, so that events are all
// delivered when Close returns, as they are without the stream.
func decodeThroughStream(t *testing.T, cfg *Config) {
	pr, pw := io.Pipe()
	dcfg := *cfg
	done := make(chan error, 1)
	go func() {
		err := DecodeStream(pr, dcfg)
		pr.CloseWithError(errors.New("DecodeStream returned"))
		done <- err
	}()
	cfg.DecodeTo = &streamEnd{pw: pw, done: done, t: t}
	cfg.Sink, cfg.testWork = nil, nil
}

type streamEnd struct {
	pw   *io.PipeWriter
	done chan error
	t    *testing.T
	once sync.Once
}

func (s *streamEnd) Write(b []byte) (int, error) { return s.pw.Write(b) }

func (s *streamEnd) Close() error {
	s.once.Do(func() {
		s.pw.Close()
		if err := <-s.done; err != nil {
			s.t.Errorf("DecodeStream: %v", err)
		}
	})
	return nil
}

// TestThroughDecodeStream runs the proxy's tests of what its decoding
// side reports (order, topic names, secrets, rewriting, summaries,
// faults, skipped frames, reused trees) again with that side across the
// job stream, each test's own checks unchanged.
func TestThroughDecodeStream(t *testing.T) {
	throughStream = true
	defer func() { throughStream = false }()
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"PipelineOrder", TestPipelineOrder},
		{"ReuseTreesSameLog", TestReuseTreesSameLog},
		{"TopicIDNames", TestTopicIDNames},
		{"LegacyPlainTokens", TestLegacyPlainTokens},
		{"LegacyScramTokens", TestLegacyScramTokens},
		{"Rewrite", TestRewrite},
		{"SummaryMode", TestSummaryMode},
		{"UndecodableFrames", TestUndecodableFrames},
		{"UpstreamDropsMidFrame", TestUpstreamDropsMidFrame},
		{"ClientDropsMidFrame", TestClientDropsMidFrame},
		{"BytesInOrderWhenDecodingFallsBehind", TestBytesInOrderWhenDecodingFallsBehind},
		{"TailHeldFetchStreams", TestTailHeldFetchStreams},
		{"TailRewriteMisfit", TestTailRewriteMisfit},
		{"TailOffAfterLongerListener", TestTailOffAfterLongerListener},
		{"TailRewritePadded", TestTailRewritePadded},
		{"RewriteCorruptBatch", TestRewriteCorruptBatch},
		{"ClientGoesAway", TestClientGoesAway},
		{"CloseMidFrame", TestCloseMidFrame},
	} {
		t.Run(tc.name, tc.fn)
	}
}

// TestStreamSameLog sends the same exchanges through a proxy that
// decodes in process and one whose decoding is across the job stream,
// and checks that every event's JSON line is the same but for what
// differs between two runs (times, latencies, addresses).
func TestStreamSameLog(t *testing.T) {
	logs := map[bool][]map[string]any{}
	for _, remote := range []bool{false, true} {
		throughStream = remote
		up := orderBroker(t)
		jl := &jsonLines{t: t}
		p, _ := start(t, up, func(c *Config) { c.NoRewrite, c.DecodeWorkers, c.Sink = true, 3, jl.sink })
		runOrderExchanges(t, p.Addr(), 3, 1, 18, 1, 3, 1, 1, 18, 3, 1)
		p.Close()
		throughStream = false
		logs[remote] = jl.runFree("time", "latency_us", "src", "dst", "client", "upstream", "listener", "detail")
	}
	if len(logs[false]) < 20 || len(logs[false]) != len(logs[true]) {
		t.Fatalf("%d lines in process and %d across the stream, want the same, at least 20", len(logs[false]), len(logs[true]))
	}
	for i := range logs[false] {
		a, _ := json.Marshal(logs[false][i])
		b, _ := json.Marshal(logs[true][i])
		if string(a) != string(b) {
			t.Errorf("line %d differs across the stream:\n%s\nin process:\n%s", i, b, a)
		}
	}
}

// sampleJobs are jobs with every field of the stream set, and the edge
// cases of each: nil against empty bytes, a frame still in the queue's
// chunks, a skipped report with and without an item.
func sampleJobs() []*job {
	at := time.Unix(1700000000, 123456789)
	c1 := &conn{id: 7, base: Event{Conn: 7, Client: "127.0.0.1:5000", Listener: "127.0.0.1:19092", Upstream: "b:9092"}}
	c0 := &conn{id: 0}
	var big frameBody
	long := bytes.Repeat([]byte("0123456789abcdef"), 3000) // 48,000 bytes: pooled chunks
	big.add(len(long), long[:20000])
	big.add(len(long), long[20000:])
	return []*job{
		{it: &item{kind: kindEvent, conn: c0, ev: &Event{Kind: EventListen, Time: at, Listener: "127.0.0.1:1", Upstream: "x:1", Detail: "node 1"}}},
		{it: &item{kind: kindEvent, conn: c1, ev: &Event{Kind: EventOpen, Time: at, Conn: 7, Client: "c", Listener: "l", Upstream: "u"}}},
		{it: &item{kind: kindRequest, conn: c1, data: []byte{0, 0, 0, 1, 2}, at: at, index: 3, offset: 1 << 40}},
		{skipped: &Event{Kind: EventSkipped, Time: at, Conn: 7, Count: 12, Detail: "decoding fell behind"},
			it: &item{kind: kindResponse, conn: c1, data: []byte{}, original: []byte{9, 9}, rewritten: true, paired: true, at: at,
				req: pairing.Request{APIKey: 3, Version: -1, CorrelationID: -5, Time: at.Add(-1500 * time.Microsecond), Size: 99, Raw: true}}},
		{it: &item{kind: kindRawRequest, conn: c1, body: big, at: at, index: 1 << 20}},
		{it: &item{kind: kindRawResponse, conn: c1, data: nil, original: []byte{}, at: at}},
		{skipped: &Event{Kind: EventSkipped, Time: at, Count: 1, Data: []byte{}, Original: []byte{1}}},
		// Held responses of directMin bytes and more, which the sending
		// feeder writes from where they lie (appendJobSplit): one as it
		// came, one rewritten, its original after its data.
		{it: &item{kind: kindResponse, conn: c1, data: bytes.Repeat([]byte{7}, directMin), paired: true, at: at, index: 4}},
		{skipped: &Event{Kind: EventSkipped, Time: at, Count: 2},
			it: &item{kind: kindResponse, conn: c1, data: bytes.Repeat([]byte{8}, directMin+5), original: bytes.Repeat([]byte{9}, directMin+3),
				rewritten: true, paired: true, at: at, index: 5, req: pairing.Request{APIKey: 1, Version: 16, CorrelationID: 77, Time: at.Add(-time.Millisecond)}}},
		{it: &item{kind: kindEvent, conn: c1, ev: &Event{Kind: EventClose, Time: at, Conn: 7, Dir: "request", Detail: "é\x00"}}},
	}
}

// TestAppendJobSplit: a record split around its data (head, data, rest)
// is, written in turn, the record appendJob makes, for every sample job;
// data comes out alone for the held responses of directMin bytes and
// more, from where it lies, and for no other.
func TestAppendJobSplit(t *testing.T) {
	whole, split := sampleJobs(), sampleJobs() // appendJob empties a frame's chunks
	for i := range whole {
		want := appendJob([]byte("x"), whole[i])
		head, data, rest := appendJobSplit([]byte("x"), []byte("y"), split[i], true)
		if got := slices.Concat(head, data, rest[1:]); !bytes.Equal(got, want) {
			t.Errorf("job %d: split record differs from the whole one (%d bytes against %d)", i, len(got), len(want))
		}
		it := split[i].it
		big := it != nil && len(it.data) >= directMin
		if (data != nil) != big || big && &data[0] != &it.data[0] {
			t.Errorf("job %d: data %d bytes split out, want the item's own %v", i, len(data), big)
		}
	}
}

// TestStreamRoundTrip writes jobs and reads them back: every field the
// decoding side reads comes out as it went in.
func TestStreamRoundTrip(t *testing.T) {
	jobs := sampleJobs()
	want := make([]item, len(jobs))
	for i, j := range jobs {
		if j.it != nil {
			want[i] = *j.it
			if j.it.data == nil && j.it.body.len() > 0 {
				want[i].data = bytes.Repeat([]byte("0123456789abcdef"), 3000)
			}
		}
	}
	b := []byte(streamMagic)
	for _, j := range jobs {
		b = appendJob(b, j)
	}
	made := 0
	sr, err := newStreamReader(bytes.NewReader(b), 1<<20, func(base Event) *conn { made++; return &conn{id: base.Conn, base: base} })
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range jobs {
		got, err := sr.job()
		if err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
		if !reflect.DeepEqual(got.skipped, j.skipped) && !sameEvent(got.skipped, j.skipped) {
			t.Errorf("job %d: skipped %+v, want %+v", i, got.skipped, j.skipped)
		}
		if (got.it == nil) != (j.it == nil) {
			t.Fatalf("job %d: item %v, want %v", i, got.it, j.it)
		}
		if j.it == nil {
			continue
		}
		g, w := got.it, want[i]
		if g.kind != w.kind || g.conn.base.Conn != w.conn.base.Conn || g.conn.base.Client != w.conn.base.Client ||
			g.conn.base.Listener != w.conn.base.Listener || g.conn.base.Upstream != w.conn.base.Upstream {
			t.Errorf("job %d: kind %d conn %+v, want %d %+v", i, g.kind, g.conn.base, w.kind, w.conn.base)
		}
		if w.kind == kindEvent {
			if !sameEvent(g.ev, w.ev) {
				t.Errorf("job %d: event %+v, want %+v", i, g.ev, w.ev)
			}
			continue
		}
		if !bytes.Equal(g.data, w.data) || g.data == nil || (g.original == nil) != (w.original == nil) || !bytes.Equal(g.original, w.original) {
			t.Errorf("job %d: data %d bytes (nil %v), original %v; want %d bytes, %v", i, len(g.data), g.data == nil, g.original, len(w.data), w.original)
		}
		if g.rewritten != w.rewritten || g.paired != w.paired || !g.at.Equal(w.at) || g.index != w.index || g.offset != w.offset {
			t.Errorf("job %d: %v %v %v %d %d, want %v %v %v %d %d", i, g.rewritten, g.paired, g.at, g.index, g.offset, w.rewritten, w.paired, w.at, w.index, w.offset)
		}
		gr, wr := g.req, w.req
		if gr.APIKey != wr.APIKey || gr.Version != wr.Version || gr.CorrelationID != wr.CorrelationID || gr.Size != wr.Size || gr.Raw != wr.Raw {
			t.Errorf("job %d: request %+v, want %+v", i, gr, wr)
		}
		if w.paired && gr.Latency(g.at) != wr.Latency(w.at) {
			t.Errorf("job %d: latency %d µs, want %d", i, gr.Latency(g.at), wr.Latency(w.at))
		}
	}
	if _, err := sr.job(); err != io.EOF {
		t.Errorf("after the last job: %v, want io.EOF", err)
	}
	// One connection per id, while it is open: c0 and c1 (the other jobs
	// name the same two), and none after c1's close.
	if made != 2 || len(sr.conns) != 1 {
		t.Errorf("%d connections made, %d left open; want 2 and 1", made, len(sr.conns))
	}
}

func sameEvent(a, b *Event) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Kind == b.Kind && a.Time.Equal(b.Time) && a.Conn == b.Conn && a.Client == b.Client && a.Listener == b.Listener &&
		a.Upstream == b.Upstream && a.Dir == b.Dir && a.Detail == b.Detail && a.Rewritten == b.Rewritten && a.Count == b.Count &&
		(a.Data == nil) == (b.Data == nil) && bytes.Equal(a.Data, b.Data) && (a.Original == nil) == (b.Original == nil) && bytes.Equal(a.Original, b.Original)
}

// TestStreamBadInput: a stream cut anywhere, or with a byte changed,
// gives an error naming the record's byte offset and the field (never a
// panic); one cut between records ends cleanly; a lying length costs
// what was sent, not what it claims.
func TestStreamBadInput(t *testing.T) {
	b := []byte(streamMagic)
	var ends []int
	for _, j := range sampleJobs() {
		if j.it != nil && (j.it.body.len() > 0 || len(j.it.data) >= directMin) {
			continue // tens of kilobytes of one string: cut at every byte, a minute under -race
		}
		b = appendJob(b, j)
		ends = append(ends, len(b))
	}
	isEnd := map[int]bool{len(streamMagic): true}
	for _, e := range ends {
		isEnd[e] = true
	}
	read := func(in []byte) error {
		sr, err := newStreamReader(bytes.NewReader(in), 1<<20, func(base Event) *conn { return &conn{base: base} })
		if err != nil {
			return err
		}
		for {
			if _, err := sr.job(); err != nil {
				return err
			}
		}
	}
	for n := 0; n < len(b); n++ {
		err := read(b[:n])
		switch {
		case n == 0 || isEnd[n]:
			if err != io.EOF {
				t.Errorf("cut at %d, between records: %v, want io.EOF", n, err)
			}
		case err == io.EOF || err == nil:
			t.Errorf("cut at %d: %v, want an error", n, err)
		case n >= len(streamMagic) && !strings.Contains(err.Error(), "record at byte "):
			t.Errorf("cut at %d: %q names no record offset", n, err)
		}
	}
	// Each byte changed: an error or a stream that still reads (a changed
	// string byte is still a string), never a panic.
	for i := range b {
		c := bytes.Clone(b)
		c[i] ^= 0xff
		_ = read(c)
	}
	// A header that is not ours.
	if err := read([]byte("GET / HTTP/1.1\r\n")); err == nil || !strings.Contains(err.Error(), "not a manifester decoding stream") {
		t.Errorf("a foreign header: %v", err)
	}
	// A record that claims 900 KiB and sends 3 bytes.
	lie := append([]byte(streamMagic), 0, 0x0e, 0x10, 0, 2, 1, 2)
	err := read(lie)
	var se *errStream
	if !errors.As(err, &se) || se.off != int64(len(streamMagic)) || se.field != "body" {
		t.Errorf("a lying length: %v", err)
	}
	// Over the limit.
	over := append([]byte(streamMagic), 0, 0x20, 0, 0) // 2 MiB
	if err := read(over); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("a record over the limit: %v", err)
	}
}

// TestStreamLyingLengthAllocates: a record that claims 300 MiB and sends
// nothing makes the reader allocate about what was sent, not the claim.
func TestStreamLyingLengthAllocates(t *testing.T) {
	lie := append([]byte(streamMagic), 0x12, 0xc0, 0, 0, 1) // 300 MiB
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 10
	for range runs {
		sr, err := newStreamReader(bytes.NewReader(lie), 1<<30, func(base Event) *conn { return &conn{base: base} })
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sr.job(); err == nil {
			t.Fatal("no error")
		}
	}
	runtime.ReadMemStats(&after)
	if allocs := (after.TotalAlloc - before.TotalAlloc) / runs; allocs > 2<<20 {
		t.Errorf("%d bytes allocated for a record of one byte that claims 300 MiB", allocs)
	}
}

// refusingWriter takes n writes, then fails every write.
type refusingWriter struct {
	mu sync.Mutex
	n  int
}

func (w *refusingWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == 0 {
		return 0, errors.New("broken pipe (test)")
	}
	w.n--
	return len(b), nil
}

// TestDecodeToFails: when the decoding process stops reading, forwarding
// goes on, byte for byte, and Close says what went unlogged.
func TestDecodeToFails(t *testing.T) {
	up := orderBroker(t)
	p, _ := start(t, up, func(c *Config) { c.NoRewrite, c.DecodeTo, c.Sink = true, &refusingWriter{}, nil })
	runOrderExchanges(t, p.Addr(), 3, 1, 18, 1)
	err := p.Close()
	if err == nil || !strings.Contains(err.Error(), "broken pipe (test)") || !strings.Contains(err.Error(), "8 frames") {
		t.Errorf("Close: %v, want the write's error and 8 frames unlogged", err)
	}
}

// TestDecodeStreamGivesRecordsBack: with a Sink that keeps nothing
// (Config.ReuseTrees), the job stream's records go back to the held pools
// once their events are delivered, and every event is still delivered
// whole; with a Sink that may keep events, they do not.
func TestDecodeStreamGivesRecordsBack(t *testing.T) {
	b := []byte(streamMagic)
	frames := 0
	for _, j := range sampleJobs() {
		b = appendJob(b, j)
		if j.it != nil && j.it.kind != kindEvent {
			frames++
		}
	}
	for _, reuse := range []bool{false, true} {
		drainHeld()
		var framesSeen int
		err := DecodeStream(bytes.NewReader(b), Config{Codec: testCodec(t), ReuseTrees: reuse, Sink: func(e *Event) {
			if e.Kind == EventFrame {
				framesSeen++
				if e.Frame == nil || e.Frame.Size != len(e.Data) {
					t.Errorf("a frame event without its report, or of another size")
				}
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if framesSeen != frames {
			t.Errorf("reuse %v: %d frame events, want %d", reuse, framesSeen, frames)
		}
		// The two held responses' records (of directMin bytes and more)
		// are of pooled classes; the others are too small to be pooled.
		if kept := heldBudget.Kept(); reuse && kept < 2*directMin || !reuse && kept != 0 {
			t.Errorf("reuse %v: the held pools keep %d bytes after the stream", reuse, kept)
		}
	}
	drainHeld()
}
