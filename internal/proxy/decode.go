package proxy

import (
	"context"
	"io"
	"net"
	"time"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/pairing"
	"github.com/manifester/manifester/internal/pipeline"
	"github.com/manifester/manifester/internal/redact"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

type itemKind uint8

const (
	kindEvent itemKind = iota
	kindRequest
	kindResponse
	kindRawRequest  // a raw SASL token after a SaslHandshake v0, from the client
	kindRawResponse // and from the broker
)

// item is one entry of the decoding queue.
type item struct {
	kind     itemKind
	conn     *conn
	ev       *Event    // kindEvent
	data     []byte    // the frame as forwarded
	body     frameBody // or its copy, while queued (data is nil then)
	original []byte    // before rewriting
	// held is the buffer of a held response (data, or original when
	// rewritten), from heldPools: the sending feeder gives it back once
	// the record is written, the emitter (Config.ReuseTrees) once the
	// frame's event is delivered.
	held      []byte
	rewritten bool
	req       pairing.Request // for a response: its request
	paired    bool
	at        time.Time
	index     int   // frame number in its direction of the connection
	offset    int64 // where the frame starts in that direction's stream
	reserved  int   // queue bytes reserved for it
}

// event queues a non-frame event of the proxy's own (not of a
// connection) without ever blocking the caller.
func (p *Proxy) event(e *Event) { p.q.event(nil, e, false) }

// job is one entry of the decoding pipeline: the skip and drop counts of
// its connection not reported yet, then one item of the queue.
type job struct {
	cq      *connQueue
	skipped *Event // reported before the item (nil: nothing to report)
	it      *item  // nil when the job only reports counts
	// data and plan are the frame as logged, SASL secrets redacted by
	// the feeder (it.data itself when there is nothing to redact).
	data []byte
	plan *redact.Plan
	ev   *Event     // the item's event, once worked on
	tree *span.Tree // the tree ev's frame was decoded into, when reused (Config.ReuseTrees)
	// rec is the job stream's record the job was read from (DecodeStream),
	// which its byte strings point into.
	rec []byte
}

// decodeLoop feeds the decoding pipeline from the queue: the connections
// in turn, each connection's items in order. It is the feeder of
// [pipeline]: it takes each frame's bytes and runs the connection's
// secrets tracker (stateful, in the connection's order, and deciding what
// is redacted before anything is decoded); Config.DecodeWorkers workers
// decode (work); the emitter (emit) names topics and delivers the events
// in the order they were taken, which keeps every connection's events in
// the order of its frames. Every goroutine of it runs at a lower priority
// (lowerPriority). It returns once the queue is closed and empty and
// every event has been delivered.
func (p *Proxy) decodeLoop() {
	defer p.decodeWG.Done()
	lowerPriority()
	next := func() (*job, error) {
		if j, ok := p.nextJob(); ok {
			return j, nil
		}
		return nil, io.EOF
	}
	_ = p.decodeJobs(pipeline.Config{Workers: p.cfg.DecodeWorkers, Start: lowerPriority}, nil, next) // io.EOF
}

// decodeJobs is the feeder's loop, in the proxy (decodeLoop) or in a
// decoding process (DecodeStream): it takes jobs from next until it
// fails, redacts each frame's secrets and feeds the pipeline of pc (cost:
// Stages.Cost), whose workers decode and whose emitter delivers. It
// returns next's error once every job before it is delivered.
func (p *Proxy) decodeJobs(pc pipeline.Config, cost func(*job) int64, next func() (*job, error)) error {
	pl := pipeline.New(context.Background(), pc, pipeline.Stages[*job]{Work: p.work, Emit: p.emit, Cost: cost})
	for {
		j, err := next()
		if err != nil {
			_ = pl.Close()
			return err
		}
		if it := j.it; it != nil && it.kind != kindEvent {
			p.redactItem(j)
		}
		// Work and Emit return no error and the context is never
		// cancelled: Submit cannot fail.
		_ = pl.Submit(j)
	}
}

// nextJob waits for the queue's next item, with the skip and drop counts
// of its connection not reported yet; false once the queue is closed and
// empty.
func (p *Proxy) nextJob() (*job, bool) {
	for {
		it, cq, skipped, dropped, ok := p.q.next()
		if !ok {
			return nil, false
		}
		j := &job{cq: cq, it: it}
		if skipped > 0 || dropped > 0 {
			j.skipped = skippedEvent(cq.c, skipped, dropped)
		}
		if it != nil || j.skipped != nil {
			return j, true
		}
	}
}

// redactItem takes the bytes of a job's frame out of the queue's copy and
// redacts them with the connection's secrets tracker, on the feeder.
func (p *Proxy) redactItem(j *job) {
	it := j.it
	if it.data == nil {
		it.data = it.body.take()
	}
	s := it.conn.secrets
	switch it.kind {
	case kindRawRequest, kindRawResponse:
		j.data, j.plan = s.Raw(it.data, it.kind == kindRawResponse) // a nil s shows secrets
	case kindRequest:
		j.data, j.plan = s.Request(p.cfg.Codec, it.data)
	default:
		api, version := p.responseAPI(it)
		j.data, j.plan = s.Response(p.cfg.Codec, it.data, api, version)
	}
}

// responseAPI is the API and version a response is decoded as: its
// request's, when it was paired with one the specs know.
func (p *Proxy) responseAPI(it *item) (*schema.API, int16) {
	if api, ok := p.reg.API(it.req.APIKey); ok && it.paired {
		return api, it.req.Version
	}
	return nil, 0
}

// work decodes a job's frame into its event, on a worker of the
// pipeline. It reads nothing that depends on other frames.
func (p *Proxy) work(j *job) error {
	if j.it == nil || j.it.kind == kindEvent {
		return nil
	}
	j.tree = p.tree(len(j.data))
	if p.cfg.testWork != nil {
		p.cfg.testWork(j.it, func() { j.ev = p.decodeItem(j.it, j.data, j.plan, j.tree) })
		return nil
	}
	j.ev = p.decodeItem(j.it, j.data, j.plan, j.tree)
	return nil
}

// maxPooledTrees is the trees kept for reuse per size class of frame
// (Config.ReuseTrees): as many as the frames in flight (the pipeline's
// window) need; package framebufs bounds their rows and bytes.
const maxPooledTrees = 64

// tree returns a span tree to decode a frame of size bytes into: a
// reused one with Config.ReuseTrees, else nil (the decoder makes one).
func (p *Proxy) tree(size int) *span.Tree {
	if p.trees == nil {
		return nil
	}
	return p.trees.Tree(size)
}

// emit delivers a job's events, in the order the feeder took them: first
// the counts, then the item's event (a frame's topics named from, and
// named for, the frames before it), and gives back the frame's queue
// space.
func (p *Proxy) emit(j *job) error {
	if j.skipped != nil {
		p.deliver(j.skipped)
	}
	it := j.it
	switch {
	case it == nil:
	case it.kind == kindEvent:
		p.deliver(it.ev)
	default:
		if it.kind == kindRequest || it.kind == kindResponse {
			p.nameTopics(j.ev.Frame, it.kind == kindResponse)
		}
		p.deliver(j.ev)
		if p.q != nil { // nil in a decoding process (DecodeStream)
			p.q.release(j.cq, it.reserved)
		}
	}
	if p.cfg.ReuseTrees {
		p.giveBack(j)
	}
	return nil
}

// giveBack hands what a delivered job's events were made from to the
// frames after it, when the Sink keeps nothing of events
// (Config.ReuseTrees): the frame's tree; a held response's buffer, which
// the frame's bytes are when decoded in this process (the sending feeder
// gives back those it writes to a decoding process); and, in a decoding
// process, the job stream's record, which the job's byte strings point
// into (nothing else holds them: strings, topic names and the secrets
// trackers' state are copied out).
func (p *Proxy) giveBack(j *job) {
	if j.tree != nil {
		p.trees.Put(len(j.data), j.tree, nil)
	}
	if j.it != nil {
		putHeld(j.it.held)
		j.it.held = nil
	}
	putHeld(j.rec)
	j.tree, j.rec = nil, nil
}

func (p *Proxy) deliver(e *Event) {
	if p.cfg.Sink != nil {
		p.cfg.Sink(e)
	}
}

// frameLimits is the budget of each proxied frame's decode and of its log
// line: package budget's defaults, proportional to the frame's size
// (inflated bytes across all its batches, tree nodes, text or JSON).
// The frame is always forwarded whole; only what is decoded and logged
// is bounded, and the log line says where a limit was reached.
var frameLimits = budget.Limits{}

// decodeItem decodes one frame into its event: data is the frame as
// logged (redacted as plan says). Topic names are not shown yet (emit
// does, in order).
func (p *Proxy) decodeItem(it *item, data []byte, plan *redact.Plan, tree *span.Tree) *Event {
	if it.kind == kindRawRequest || it.kind == kindRawResponse {
		return p.decodeRaw(it, data, plan)
	}
	c := it.conn
	e := &Event{Kind: EventFrame, Time: it.at, Data: data, Original: it.original, Rewritten: it.rewritten}
	e.Conn, e.Client, e.Listener, e.Upstream = c.base.Conn, c.base.Client, c.base.Listener, c.base.Upstream
	opts := report.Options{Roundtrip: p.cfg.Roundtrip, Limits: frameLimits, Tree: tree, Lean: true}
	at := it.at
	var f *report.Frame
	if it.kind == kindRequest {
		e.Dir = "request"
		f = p.decodeRedacted(data, opts, plan)
		f.Src, f.Dst = c.base.Client, c.base.Upstream
	} else {
		e.Dir = "response"
		opts.Kind = schema.TypeResponse
		opts.API, opts.Version = p.responseAPI(it)
		f = p.decodeRedacted(data, opts, plan)
		f.Src, f.Dst = c.base.Upstream, c.base.Client
		if it.paired {
			lat := it.req.Latency(it.at)
			f.LatencyMicros = &lat
		}
	}
	f.Time = &at
	f.Index, f.Offset = it.index, it.offset
	e.Frame = f
	return e
}

// decode reports on one frame: fully (span tree, body JSON), or with
// Config.Summary only what a summary line needs, falling back to the full
// report for a frame that does not decode. A paired response is read as
// report.Response reads it, as decode --pcap does (an ApiVersions answer
// that decodes only as v0 is the broker's UNSUPPORTED_VERSION answer).
func (p *Proxy) decode(b []byte, opts report.Options) *report.Frame {
	if !p.cfg.Summary {
		return p.full(b, opts)
	}
	c := p.cfg.Codec
	var f *codec.Frame
	var err error
	switch {
	case opts.Kind == schema.TypeResponse && opts.API != nil:
		f, err = c.DecodeResponse(b, opts.API, opts.Version, codec.Options{})
	case opts.Kind != schema.TypeResponse:
		f, err = c.DecodeRequest(b, codec.Options{})
	default:
		err = codec.ErrUnknownAPI
	}
	if err != nil || f == nil || f.API == nil {
		return p.full(b, opts)
	}
	kind := schema.TypeRequest
	if opts.Kind == schema.TypeResponse {
		kind = schema.TypeResponse
	}
	r := &report.Frame{Kind: kind.String(), APIKey: f.API.Key, API: f.API.Name, Version: f.Version,
		CorrelationID: f.CorrelationID, Size: len(b), HeaderVersion: f.HeaderVersion, Bytes: b, Decoded: f}
	if kind == schema.TypeRequest && f.HeaderVersion >= 1 && !f.ClientIDNull {
		id := string(f.ClientID)
		r.ClientID = &id
	}
	if opts.Roundtrip {
		ok, d := report.Check(c, f, b)
		r.Roundtrip, r.RoundtripDiff = &ok, d
	}
	return r
}

// full is the full report of a frame: a paired response by
// report.Response, anything else by report.Decode.
func (p *Proxy) full(b []byte, opts report.Options) *report.Frame {
	if opts.Kind == schema.TypeResponse && opts.API != nil {
		return report.Response(p.cfg.Codec, b, opts.API, opts.Version, opts)
	}
	return report.Decode(p.cfg.Codec, b, opts)
}

func joinHostPort(host, port string) string { return net.JoinHostPort(host, port) }
