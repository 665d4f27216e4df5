package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/redact"
	"github.com/manifester/manifester/internal/render/jsonr"
	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/term"
)

func init() { decodePcap = runDecodePcap }

// progressMin is the smallest capture that gets a progress bar (a
// variable so that tests can lower it).
var progressMin int64 = 32 << 20

// runDecodePcap decodes every Kafka frame of a capture, responses with the
// API and version of the request they answer, and prints one report per
// frame in capture order.
//
// path "-" reads the capture from standard input, streaming: each frame is
// written (and the output flushed) as soon as it is decoded, so that
// `tcpdump -U -w - | manifester decode --pcap -` shows frames as they
// arrive.
func runDecodePcap(env *Env, path string, ports []int, o decodeOptions) error {
	var in io.Reader
	var f *os.File
	streaming := path == "-"
	if streaming {
		in, path = env.Stdin, "stdin"
	} else {
		var err error
		if f, err = os.Open(path); err != nil {
			return failure{err}
		}
		defer f.Close()
		in = f
	}
	c := o.Release.Codec
	reg := o.Release.Reg
	opts := capture.Options{
		Ports:  ports,
		Known:  func(key, v int16) bool { api, ok := reg.API(key); return ok && api.Request.Valid.Contains(v) },
		Verify: verifier(c),
	}
	clearBar := func() {}
	if st, err := statOf(f); err == nil && st.Size() >= progressMin && isTerminal(env.Stderr) {
		bar := &progressBar{w: env.Stderr, name: path, total: st.Size(), start: time.Now()}
		opts.Progress = bar.update
		clearBar = bar.done
		defer bar.done()
	}

	defer tuneGC(env)()
	w := bufio.NewWriterSize(env.Stdout, 1<<16)
	pl := newPipeline(w, runtime.GOMAXPROCS(0))
	if streaming {
		pl.flush = w.Flush
	}
	var index int
	lastConn := 0
	hints := newHintTable()
	sel := newFrameSelector(c, o.Filter)
	sec := newSecrets(o.ShowSecrets)
	stats, err := capture.Read(in, opts, func(ev *capture.Event) error {
		j := &pcapJob{index: index, offset: ev.Offset, data: bytes.Clone(ev.Data), time: ev.Time, opts: o,
			skipped: ev.Skipped, lost: ev.Lost, sel: sel}
		j.skip = !sel.admitEvent(ev, index)
		index++
		// Lean: the JSON line is written from the span tree, and text
		// builds the tree only with -v.
		j.ro = report.Options{Roundtrip: o.Roundtrip, Lean: true, NewerAsWarning: true, Limits: o.Limits}
		if ev.Cut != nil {
			j.cut = &report.Gap{Offset: ev.Cut.GapOffset, Size: ev.Cut.GapSize, FrameSize: ev.Cut.Size, Captured: ev.Cut.Captured, AtEnd: ev.Cut.AtEnd}
		}
		if ev.Dir == capture.ClientToServer {
			j.src, j.dst = ev.Conn.Client.String(), ev.Conn.Server.String()
			if key, v, _, ok := codec.PeekRequest(ev.Data); ok {
				hints.add(ev.Conn.ID, report.Hint{APIKey: key, Version: v})
			}
		} else {
			j.src, j.dst = ev.Conn.Server.String(), ev.Conn.Client.String()
			j.ro.Kind = schema.TypeResponse
			j.response = true
			if ev.Request != nil {
				if api, ok := reg.API(ev.Request.APIKey); ok {
					j.ro.API, j.ro.Version = api, ev.Request.Version
				}
				j.reqKey, j.reqVersion = ev.Request.APIKey, ev.Request.Version
				lat := ev.Time.Sub(ev.Request.Time).Microseconds()
				j.latency = &lat
				j.paired = true
			} else {
				j.hints = hints.near(ev.Conn.ID)
			}
		}
		j.data, j.plan = sec.frame(ev.Conn.ID, c, j.data, j.ro)
		if o.Format != "json" && !j.skip {
			var pre strings.Builder
			if ev.Conn.ID > lastConn { // connections are numbered as they first show up
				lastConn = ev.Conn.ID
				how := "from its start"
				if !ev.Conn.SawSYN {
					how = "mid-connection (no SYN captured)"
				}
				fmt.Fprintf(&pre, "# connection %d: client %s, server %s, captured %s\n", ev.Conn.ID, ev.Conn.Client, ev.Conn.Server, how)
				if ev.Conn.Note != "" {
					fmt.Fprintf(&pre, "# connection %d: %s\n", ev.Conn.ID, ev.Conn.Note)
				}
			}
			if ev.Skipped > 0 {
				if ev.Lost > 0 {
					fmt.Fprintf(&pre, "# %d bytes skipped before this frame (%d not captured)\n", ev.Skipped, ev.Lost)
				} else {
					fmt.Fprintf(&pre, "# %d bytes skipped before this frame (no frame boundary)\n", ev.Skipped)
				}
			}
			j.prefix = pre.String()
		}
		return pl.submit(c, j)
	})
	clearBar() // before anything else goes to stderr
	if perr := pl.close(); perr != nil && err == nil {
		err = perr
	}
	failed, firstErr := pl.failed, pl.firstErr
	warned, firstWarn := pl.warned, pl.firstWarn
	if ferr := w.Flush(); ferr != nil && err == nil {
		err = ferr
	}
	if errors.Is(err, io.ErrUnexpectedEOF) && stats.Packets > 0 {
		// tcpdump stopped mid-write: the frames before the cut stand.
		fmt.Fprintf(env.Stderr, "manifester decode: warning: %v\n", err)
		err = nil
	}
	if err != nil {
		return failure{fmt.Errorf("%s: %w", path, err)}
	}
	fmt.Fprintf(env.Stderr, "manifester decode: %s: %s, %s, %s, %s", path, plural(stats.Packets, "packet"), plural(stats.Connections, "connection"), plural(stats.Requests, "request"), plural(stats.Responses, "response"))
	if stats.Unanswered > 0 {
		fmt.Fprintf(env.Stderr, ", %s without a response", plural(stats.Unanswered, "request"))
	}
	// Every count the reader keeps of what it could not read is said,
	// when it is not zero, in this order.
	for _, c := range []struct {
		n            int64
		text, detail string
	}{
		{stats.Unpaired, "%d responses without their request", ""},
		{stats.Gaps, "%d gaps", fmt.Sprintf(" (%d bytes not captured)", stats.GapBytes)},
		{stats.CutFrames, "%d frames cut by gaps or the end", ""},
		{stats.SkippedBytes, "%d stream bytes skipped", ""},
		{stats.RetransmittedBytes, "%d retransmitted bytes dropped as duplicates", ""},
		{stats.LateBytes, "%d bytes arrived after their gap was declared (the capture reordered them)", ""},
		{ignoredTotal(stats.Ignored), "%d connections ignored", " (" + ignoredText(stats.Ignored) + ")"},
		{stats.Suspect, "%d connections decoded although their first request failed the framing checks", ""},
		{stats.OtherPorts, "%d TCP packets on other ports", ""},
		{stats.NotTCP, "%d packets not TCP", ""},
		{stats.Fragments, "%d IP fragments skipped", ""},
		{stats.Undecodable, "%d packets whose headers did not decode", ""},
	} {
		if c.n == 0 {
			continue
		}
		fmt.Fprintf(env.Stderr, ", "+c.text, c.n)
		fmt.Fprint(env.Stderr, c.detail)
	}
	fmt.Fprintln(env.Stderr)
	sel.summary(env.Stderr)
	if warned > 0 {
		fmt.Fprintf(env.Stderr, "manifester decode: %d of %d frames with warnings (not failures); the first: %s\n", warned, index, firstWarn)
	}
	if stats.Requests+stats.Responses == 0 {
		hint := ""
		if len(ports) > 0 {
			hint = " on the given --port"
		}
		fmt.Fprintf(env.Stderr, "manifester decode: no Kafka frames found%s\n", hint)
	}
	if failed > 0 {
		fmt.Fprintf(env.Stderr, "manifester decode: %d of %d frames did not decode cleanly%s; the first: %s\n", failed, index, map[bool]string{true: " or round-trip", false: ""}[o.Roundtrip], firstErr)
		return errSilentFailure
	}
	return nil
}

// statOf stats a capture file (an error for standard input).
func statOf(f *os.File) (os.FileInfo, error) {
	if f == nil {
		return nil, errors.New("standard input")
	}
	return f.Stat()
}

// pcapMemoryLimit is the soft heap limit of decode --pcap (see tuneGC).
const pcapMemoryLimit = 128 << 20

// tuneGC trades a larger GC target for a soft memory limit while a capture
// is decoded: the live heap is small (at most 4 frames per core in flight)
// but every frame allocates its tree afresh, so collecting less often saves
// about a tenth of the CPU time and the limit keeps the peak RSS lower than
// the default settings do. GOGC or GOMEMLIMIT in the environment win. The
// returned function restores the previous settings.
func tuneGC(env *Env) func() {
	if env.Getenv != nil && (env.Getenv("GOGC") != "" || env.Getenv("GOMEMLIMIT") != "") {
		return func() {}
	}
	limit := debug.SetMemoryLimit(pcapMemoryLimit)
	pct := debug.SetGCPercent(300)
	return func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	}
}

// pcapJob is one frame to decode and render.
type pcapJob struct {
	index    int
	offset   int64
	data     []byte
	time     time.Time
	src, dst string
	response bool
	paired   bool
	latency  *int64
	ro       report.Options
	opts     decodeOptions
	cut      *report.Gap   // the frame was cut short (data is its captured start)
	hints    []report.Hint // requests near an unpaired response
	// reqKey and reqVersion are the paired request's, for a response.
	reqKey, reqVersion int16
	skipped            int64
	lost               int64
	warnText           string
	prefix             string       // text lines printed before the frame
	plan               *redact.Plan // what secrets.frame redacted
	out                []byte       // the rendered frame
	outp               *[]byte      // the pooled buffer out was written into
	ok                 bool
	errText            string
	err                error
	sel                *frameSelector // names topic ids (see decode_select.go)
	skip               bool           // not shown (--filter)
}

// run decodes and renders the frame.
func (j *pcapJob) run(c *codec.Codec) {
	if j.skip {
		j.ok = true
		return
	}
	var r *report.Frame
	switch {
	case j.plan != nil && j.plan.Raw:
		r = redact.RawReport(j.data, j.plan, j.response)
	case j.cut != nil:
		r = report.Cut(c, j.data, j.ro.Kind, j.ro.API, j.ro.Version, *j.cut, j.ro)
	case j.response && !j.paired:
		r = report.Orphan(c, j.data, j.hints, j.ro)
	case j.response && j.ro.API != nil:
		r = report.Response(c, j.data, j.ro.API, j.ro.Version, j.ro)
	case j.response:
		r = report.UnknownAPIResponse(j.data, j.reqKey, j.reqVersion, j.ro)
	default:
		r = report.Decode(c, j.data, j.ro)
	}
	j.plan.Apply(r) // the structure of redacted SASL auth bytes
	j.sel.annotate(r, j.index)
	r.Index, r.Offset = j.index, j.offset
	t := j.time
	r.Time, r.Src, r.Dst, r.LatencyMicros = &t, j.src, j.dst, j.latency
	r.Skipped, r.Lost = j.skipped, j.lost
	j.ok = r.OK()
	if !j.ok {
		j.errText = r.Summary() + ": " + r.Error
		if r.Error == "" {
			j.errText += "re-encoding does not reproduce the input"
		}
	}
	if r.Warning != "" {
		j.warnText = r.Summary() + ": " + r.Warning
	}
	j.outp = outPool.Get().(*[]byte)
	if j.opts.Format == "json" {
		j.out, j.err = jsonr.AppendLine((*j.outp)[:0], r, jsonr.Options{About: j.opts.About})
		return
	}
	buf := bytes.NewBuffer((*j.outp)[:0])
	buf.WriteString(j.prefix)
	if j.err = text.Frame(buf, r, j.opts.Verbose, j.opts.Style); j.err == nil && j.opts.Verbose {
		buf.WriteString("\n")
	}
	j.out = buf.Bytes()
}

// outPool holds output buffers for reuse: the writer returns a job's
// buffer once it has written it (see release).
var outPool = sync.Pool{New: func() any { return new([]byte) }}

// maxPooled bounds the buffers kept for reuse, so that one huge frame
// does not pin its buffer.
const maxPooled = 8 << 20

// release hands the job's output buffer back for reuse.
func (j *pcapJob) release() {
	if j.outp != nil && cap(j.out) <= maxPooled {
		*j.outp = j.out[:0]
		outPool.Put(j.outp)
	}
	j.out, j.outp = nil, nil
}

// pipeline decodes frames on several goroutines and writes the results in
// capture order. At most 4 frames per worker are in flight, so memory
// stays bounded.
type pipeline struct {
	w        io.Writer
	done     chan *pcapJob
	slots    chan struct{}
	wg       sync.WaitGroup
	writer   chan error
	broken   atomic.Bool
	failed   int
	firstErr string
	// warned counts frames with a warning (not failures).
	warned    int
	firstWarn string
	// flush, when set, is called whenever the written frames catch up
	// with the decoded ones (streaming from a pipe).
	flush func() error
}

func newPipeline(w io.Writer, workers int) *pipeline {
	workers = max(workers, 1)
	p := &pipeline{w: w, done: make(chan *pcapJob, 4*workers),
		slots: make(chan struct{}, 4*workers), writer: make(chan error, 1)}
	go p.write()
	return p
}

// submit hands a job over, waiting while the pipeline is full.
func (p *pipeline) submit(c *codec.Codec, j *pcapJob) error {
	if p.broken.Load() {
		return errors.New("writing the output failed")
	}
	p.slots <- struct{}{}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		j.run(c)
		p.done <- j
	}()
	return nil
}

// write puts results in order.
func (p *pipeline) write() {
	next := 0
	held := map[int]*pcapJob{}
	var werr error
	for j := range p.done {
		held[j.index] = j
		for {
			h, ok := held[next]
			if !ok {
				break
			}
			delete(held, next)
			next++
			<-p.slots
			if !h.ok {
				p.failed++
				if p.firstErr == "" {
					p.firstErr = h.errText
				}
			}
			if werr == nil {
				werr = h.err
			}
			if h.warnText != "" {
				p.warned++
				if p.firstWarn == "" {
					p.firstWarn = h.warnText
				}
			}
			if werr == nil {
				_, werr = p.w.Write(h.out)
			}
			h.release()
			if werr != nil {
				p.broken.Store(true)
			}
		}
		if p.flush != nil && werr == nil && len(held) == 0 && len(p.done) == 0 {
			werr = p.flush()
			if werr != nil {
				p.broken.Store(true)
			}
		}
	}
	p.writer <- werr
}

// close waits for every job and returns the first write error.
func (p *pipeline) close() error {
	p.wg.Wait()
	close(p.done)
	return <-p.writer
}

// verifier confirms frame boundaries found by resynchronisation: the
// frame must decode cleanly. A response whose request was not captured
// (the first bytes of a capture that starts mid-connection) must decode
// and re-encode as some response of the spec.
func verifier(c *codec.Codec) func([]byte, capture.Dir, *capture.Request) bool {
	return func(b []byte, d capture.Dir, req *capture.Request) bool {
		if d == capture.ClientToServer {
			_, err := c.DecodeRequest(b, codec.Options{})
			return err == nil
		}
		if req == nil {
			cs, _ := report.Candidates(c, b, nil)
			return len(cs) > 0
		}
		api, ok := c.Reg.API(req.APIKey)
		if !ok {
			return false
		}
		_, err := c.DecodeResponse(b, api, req.Version, codec.Options{})
		return err == nil
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool { return term.IsTerminal(w) }

// progressBar draws "name [#####     ]  45%  90/200 MB" on one line.
type progressBar struct {
	w     io.Writer
	name  string
	total int64
	start time.Time
	last  time.Time
}

func (p *progressBar) update(read int64) {
	now := time.Now()
	if now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	frac := float64(read) / float64(p.total)
	frac = min(max(frac, 0), 1)
	const width = 30
	n := int(frac * width)
	fmt.Fprintf(p.w, "\r%s [%s%s] %3.0f%%  %d/%d MB", p.name, strings.Repeat("#", n), strings.Repeat(" ", width-n), frac*100, read>>20, p.total>>20)
}

// done clears the bar's line, once, if the bar was drawn.
func (p *progressBar) done() {
	if !p.last.IsZero() {
		fmt.Fprint(p.w, "\r\033[K")
		p.last = time.Time{}
	}
}

// hintTable remembers the latest requests per connection and over the
// whole capture: the neighbours that rank the candidates of a response
// whose request was not captured.
type hintTable struct {
	conn map[int][]report.Hint
	all  []report.Hint
}

const hintsKept = 8

func newHintTable() *hintTable { return &hintTable{conn: map[int][]report.Hint{}} }

func (t *hintTable) add(conn int, h report.Hint) {
	push := func(l []report.Hint) []report.Hint {
		if len(l) > 0 && l[0] == h {
			return l
		}
		l = append([]report.Hint{h}, l...)
		return l[:min(len(l), hintsKept)]
	}
	t.conn[conn] = push(t.conn[conn])
	t.all = push(t.all)
}

// near returns the connection's latest requests, then the capture's.
func (t *hintTable) near(conn int) []report.Hint {
	return append(slices.Clone(t.conn[conn]), t.all...)
}

func ignoredTotal(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// ignoredText lists the reasons connections were ignored, most common
// first: "2 TLS, 1 no payload".
func ignoredText(m map[string]int64) string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return int(m[b] - m[a])
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", m[k], k)
	}
	return strings.Join(parts, ", ")
}
