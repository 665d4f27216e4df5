package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
)

func init() { decodePcap = runDecodePcap }

// progressMin is the smallest capture that gets a progress bar (a
// variable so that tests can lower it).
var progressMin int64 = 32 << 20

// runDecodePcap decodes every Kafka frame of a capture, responses with the
// API and version of the request they answer, and prints one report per
// frame in capture order.
func runDecodePcap(env *Env, path string, ports []int, o decodeOptions) error {
	f, err := os.Open(path)
	if err != nil {
		return failure{err}
	}
	defer f.Close()
	c := o.Release.Codec
	reg := o.Release.Reg
	opts := capture.Options{
		Ports:  ports,
		Known:  func(key, v int16) bool { api, ok := reg.API(key); return ok && api.Request.Valid.Contains(v) },
		Verify: verifier(c),
	}
	clearBar := func() {}
	if st, err := f.Stat(); err == nil && st.Size() >= progressMin && isTerminal(env.Stderr) {
		bar := &progressBar{w: env.Stderr, name: path, total: st.Size(), start: time.Now()}
		opts.Progress = bar.update
		clearBar = bar.done
		defer bar.done()
	}

	defer tuneGC(env)()
	w := bufio.NewWriterSize(env.Stdout, 1<<16)
	pl := newPipeline(w, runtime.GOMAXPROCS(0))
	var index int
	lastConn := 0
	stats, err := capture.Read(f, opts, func(ev *capture.Event) error {
		j := &pcapJob{index: index, offset: ev.Offset, data: bytes.Clone(ev.Data), time: ev.Time, opts: o}
		index++
		// Lean: the JSON line is written from the span tree, and text
		// builds the tree only with -v.
		j.ro = report.Options{Roundtrip: o.Roundtrip, Lean: true, Limits: o.Limits}
		if ev.Dir == capture.ClientToServer {
			j.src, j.dst = ev.Conn.Client.String(), ev.Conn.Server.String()
		} else {
			j.src, j.dst = ev.Conn.Server.String(), ev.Conn.Client.String()
			j.ro.Kind = schema.TypeResponse
			j.response = true
			if ev.Request != nil {
				if api, ok := reg.API(ev.Request.APIKey); ok {
					j.ro.API, j.ro.Version = api, ev.Request.Version
				}
				lat := ev.Time.Sub(ev.Request.Time).Microseconds()
				j.latency = &lat
				j.paired = true
			}
		}
		if o.Format != "json" {
			var pre strings.Builder
			if ev.Conn.ID > lastConn { // connections are numbered as they first show up
				lastConn = ev.Conn.ID
				how := "from its start"
				if !ev.Conn.SawSYN {
					how = "mid-connection (no SYN captured)"
				}
				fmt.Fprintf(&pre, "# connection %d: client %s, server %s, captured %s\n", ev.Conn.ID, ev.Conn.Client, ev.Conn.Server, how)
			}
			if ev.Skipped > 0 {
				fmt.Fprintf(&pre, "# %d bytes skipped before this frame (not captured, or no frame boundary)\n", ev.Skipped)
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
	fmt.Fprintf(env.Stderr, "manifester decode: %s: %d packets, %d connections, %d requests, %d responses", path, stats.Packets, stats.Connections, stats.Requests, stats.Responses)
	if stats.Unanswered > 0 {
		fmt.Fprintf(env.Stderr, ", %d requests without a response", stats.Unanswered)
	}
	if stats.SkippedBytes > 0 {
		fmt.Fprintf(env.Stderr, ", %d stream bytes skipped", stats.SkippedBytes)
	}
	fmt.Fprintln(env.Stderr)
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
	prefix   string  // text lines printed before the frame
	out      []byte  // the rendered frame
	outp     *[]byte // the pooled buffer out was written into
	ok       bool
	errText  string
	err      error
}

// run decodes and renders the frame.
func (j *pcapJob) run(c *codec.Codec) {
	r := report.Decode(c, j.data, j.ro)
	r.Index, r.Offset = j.index, j.offset
	t := j.time
	r.Time, r.Src, r.Dst, r.LatencyMicros = &t, j.src, j.dst, j.latency
	if j.response && !j.paired {
		corr, _ := codec.PeekCorrelationID(j.data)
		r.CorrelationID = corr
		r.Error = fmt.Sprintf("no request with correlation id %d was seen on this connection (the capture lost it), so the response's API and version are unknown", corr)
	}
	j.ok = r.OK()
	if !j.ok {
		j.errText = r.Summary() + ": " + r.Error
		if r.Error == "" {
			j.errText += "re-encoding does not reproduce the input"
		}
	}
	j.outp = outPool.Get().(*[]byte)
	if j.opts.Format == "json" {
		j.out, j.err = report.AppendJSON((*j.outp)[:0], r, report.JSONOptions{About: j.opts.About})
		return
	}
	buf := bytes.NewBuffer((*j.outp)[:0])
	buf.WriteString(j.prefix)
	if j.err = report.Text(buf, r, j.opts.Verbose); j.err == nil && j.opts.Verbose {
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
			if werr == nil {
				_, werr = p.w.Write(h.out)
			}
			h.release()
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
// frame must decode cleanly.
func verifier(c *codec.Codec) func([]byte, capture.Dir, *capture.Request) bool {
	return func(b []byte, d capture.Dir, req *capture.Request) bool {
		if d == capture.ClientToServer {
			_, err := c.DecodeRequest(b, codec.Options{})
			return err == nil
		}
		if req == nil {
			return false
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
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

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
