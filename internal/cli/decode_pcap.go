package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/manifester/manifester/internal/capdecode"
	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/framebufs"
	"github.com/manifester/manifester/internal/pipeline"
	"github.com/manifester/manifester/internal/redact"
	"github.com/manifester/manifester/internal/render/jsonr"
	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/selector"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/term"
)

// defaultProgressMin is the smallest capture that gets a progress bar.
const defaultProgressMin = 32 << 20

// progressMin is the smallest capture that gets a progress bar:
// $MANIFESTER_PROGRESS_MIN bytes when set (so that tests can lower it),
// else defaultProgressMin.
func progressMin(env *Env) int64 {
	if env.Getenv != nil {
		if n, err := strconv.ParseInt(env.Getenv("MANIFESTER_PROGRESS_MIN"), 10, 64); err == nil && n >= 0 {
			return n
		}
	}
	return defaultProgressMin
}

// runDecodePcap decodes every Kafka frame of a capture, responses with the
// API and version of the request they answer, and prints one report per
// frame in capture order. ports lists the Kafka server ports (empty: any
// connection that reads as Kafka). It prints through jsonr.AppendLine or
// report.TextStyle per o.Format and returns errSilentFailure when any
// frame failed to decode or round-trip.
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
	opts := capdecode.Options(c, ports)
	opts.TLSKeys, opts.MaxConns = o.TLSKeys, o.MaxConns
	clearBar := func() {}
	if st, err := statOf(f); err == nil && st.Size() >= progressMin(env) && isTerminal(env.Stderr) {
		bar := &term.Progress{W: env.Stderr, Name: path, Total: st.Size()}
		opts.Progress = bar.Update
		clearBar = bar.Done
		defer bar.Done()
	}

	defer tuneGC(env)()
	defer startProfile(env, "decode")()
	w := bufio.NewWriterSize(env.Stdout, 1<<16)
	lastConn := 0
	sel := selector.New(c, o.Filter)
	sec := redact.NewConns(o.ShowSecrets)
	// Lean: the JSON line is written from the span tree, and text builds
	// the tree only with -v.
	frames := capdecode.NewReader(o.Release.Reg, report.Options{Roundtrip: o.Roundtrip, Lean: true, Limits: o.Limits})
	workers := runtime.GOMAXPROCS(0)
	window := pcapWindowPerWorker * workers
	bufs := framebufs.New(window + workers)
	budget := int64(pcapBytesPerWorker * min(workers, pcapBudgetWorkers))
	out := pcapOutput{o: o}
	var notes []string // uuidNotes of a frame annotated again (the emitter's)
	st := pipeline.Stages[*pcapJob]{
		Cost: func(j *pcapJob) int64 { return int64(len(j.Data)) },
		Work: func(j *pcapJob) error { j.run(c, sel, o, bufs); return nil },
		Emit: func(j *pcapJob) error {
			if !sel.Filters() && !j.skip { // names are learnt here, in capture order
				if j.topicRows > 0 && sel.Learnt() != j.learntSeen && j.rep != nil {
					// Names were learnt from frames before this one after
					// it was annotated: annotate it again (its tree is
					// kept until it is written), now that every frame
					// before it has taught, and write it again if that
					// changed a note (the names learnt are often of
					// other topics).
					t := j.rep.SpanTree()
					notes = uuidNotes(notes[:0], t)
					sel.Reannotate(j.rep, j.Index)
					if !sameUUIDNotes(notes, t) {
						bufs.Put(len(j.Data), nil, j.out)
						j.out = nil
						j.render(j.rep, o, bufs)
					}
				}
				if j.teach != nil {
					sel.LearnEmitted(j.tree, j.teach, j.teachV, j.Index)
				}
			}
			return out.write(w, j, bufs)
		},
	}
	if streaming {
		st.Idle = w.Flush
	}
	pl := pipeline.New(context.Background(), pipeline.Config{Workers: workers, Window: window, Budget: budget, Yield: true}, st)
	// What is kept per connection goes when it ends (the capture reader
	// calls this in capture order, after the connection's last frame).
	opts.Closed = func(conn *capture.Conn) {
		sec.Forget(conn.ID)
		frames.Forget(conn.ID)
		sel.Forget(conn.ID)
	}
	stats, err := capture.Read(in, opts, func(ev *capture.Event) error {
		j := &pcapJob{Frame: frames.Frame(ev)}
		j.Data, j.plan = sec.Frame(ev.Conn.ID, c, j.Data, j.Options)
		if sel.Filters() {
			// The filter reads the frame's facts in capture order, from
			// its Values: the frame is decoded here, once, with them
			// and its tree, and its worker renders it.
			j.tree = bufs.Tree(len(j.Data))
			j.Options.Tree, j.Options.Values = j.tree, true
			j.rep = j.Decode(c, j.plan)
		}
		j.skip = !sel.AdmitEvent(ev, j.Index, j.rep)
		if j.skip && j.rep != nil {
			bufs.Put(len(j.Data), j.tree, nil)
			j.rep, j.tree = nil, nil
		}
		if o.Format != "json" && !j.skip {
			var pre strings.Builder
			if ev.Conn.ID > lastConn { // connections are numbered as they first show up
				lastConn = ev.Conn.ID
				how := "from its start"
				if !ev.Conn.SawSYN {
					how = "mid-connection (no SYN captured)"
				}
				fmt.Fprintf(&pre, "# connection %d: client %s, server %s, captured %s\n", ev.Conn.ID, ev.Conn.Client, ev.Conn.Server, how)
				if ev.Conn.TLS != "" {
					fmt.Fprintf(&pre, "# connection %d: decrypted: %s (offsets are in the decrypted stream)\n", ev.Conn.ID, ev.Conn.TLS)
				}
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
		if err := pl.Submit(j); err != nil {
			return errWriting
		}
		return nil
	})
	clearBar() // before anything else goes to stderr
	if perr := pl.Close(); perr != nil && (err == nil || errors.Is(err, errWriting)) {
		err = perr
	}
	index := frames.Frames()
	failed, firstErr := out.failed, out.firstErr
	warned, firstWarn := out.warned, out.firstWarn
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
	var unanswered []string
	if stats.Unanswered > 0 {
		unanswered = append(unanswered, english.Count(stats.Unanswered, "request")+" without a response")
	}
	// Every count the reader keeps of what it could not read is said.
	fmt.Fprintf(env.Stderr, "manifester decode: %s: %s\n", path, capdecode.Summary(stats, unanswered...))
	tlsHint(env.Stderr, "decode", stats, o.TLSKeys)
	sel.Summary(env.Stderr)
	if warned > 0 {
		fmt.Fprintf(env.Stderr, "manifester decode: %d of %d frames with warnings (not failures); the first: %s\n", warned, index, firstWarn)
	}
	budgetLine(env.Stderr, out.cut, index, out.firstCut)
	if stats.Requests+stats.Responses+stats.CutFrames == 0 { // cut frames are shown too
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
// is decoded: the live heap is small (the frames in flight, see
// pcapWindowPerWorker) but every frame allocates its copy of the data
// afresh, so collecting less often saves about a tenth of the CPU time
// and the limit keeps the peak RSS lower than the default settings do. GOGC or GOMEMLIMIT in the environment win. The
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

// pcapWindowPerWorker is the most frames in flight (decoded or being
// decoded, not yet written) per worker, and pcapBytesPerWorker the most
// frame bytes in flight per worker (for at most pcapBudgetWorkers): what
// bounds the memory a capture's decode holds. A window of many frames but
// few bytes keeps every worker busy behind a large frame (a Fetch
// response of a few hundred kilobytes takes as long as hundreds of small
// frames), which must be written before the frames after it.
const (
	pcapWindowPerWorker = 32
	pcapBytesPerWorker  = 1 << 20
	pcapBudgetWorkers   = 4
)

// errWriting stops the capture reader when the pipeline has stopped (on
// an output error, which pipeline.Close returns).
var errWriting = errors.New("writing the output failed")

// pcapJob is one frame to decode and render.
type pcapJob struct {
	*capdecode.Frame
	prefix string        // text lines printed before the frame
	plan   *redact.Plan  // what secrets.frame redacted
	skip   bool          // not shown (--filter)
	out    []byte        // the rendered frame
	tree   *span.Tree    // the tree the frame was decoded into
	rep    *report.Frame // the frame's report (decoded before run for --filter)
	// learntSeen and topicRows are what the annotation saw (see
	// selector.Selector.annotateEarly); teach and teachV the response
	// message and version whose names the frame teaches (nil: none).
	learntSeen int64
	topicRows  int
	teach      *schema.Message
	teachV     int16
	ok         bool
	// spill: the line is long, and is written in pieces by the emit
	// stage (pcapSpillLine), not made whole into out.
	spill    bool
	errText  string
	warnText string
	err      error
}

// run decodes and renders the frame (on any goroutine).
func (j *pcapJob) run(c *codec.Codec, sel *selector.Selector, o decodeOptions, bufs *framebufs.Pool) {
	if j.skip {
		j.ok = true
		return
	}
	r := j.rep // decoded already (for --filter)
	if r == nil {
		j.tree = bufs.Tree(len(j.Data))
		j.Options.Tree = j.tree
		r = j.Decode(c, j.plan)
		j.rep = r // kept until written: the emit stage may write it again
	}
	if !sel.Filters() { // names are learnt in the emit stage
		j.learntSeen, j.topicRows = sel.AnnotateEarly(r, j.Index)
		j.teach, j.teachV = sel.Teaching(r)
	} else {
		sel.Annotate(r, j.Index)
	}
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
	j.render(r, o, bufs)
}

// pcapSpillLine is the length past which a frame's JSON line (or its
// text with -v) is not made by its worker but written in pieces by the
// emit stage as it is made (jsonr.Spill; text a section at a time): a
// frame of compressible batches makes a line 80 times its size (a 3 MB
// Fetch response, 190 MB), which whole in a worker's buffer, times the
// frames in flight, would pass any memory bound. The JSON line's guessed
// length stands for the text's too (the text is about half as long).
var pcapSpillLine int64 = 16 << 20

// pcapSpillAt is the size of the pieces of such a line.
const pcapSpillAt = 1 << 20

// render writes the frame's report r into the job's output buffer, or
// marks a long JSON line to be written in pieces (j.spill).
func (j *pcapJob) render(r *report.Frame, o decodeOptions, bufs *framebufs.Pool) {
	if (o.Format == "json" || o.Verbose) && jsonr.LineSize(r) > pcapSpillLine {
		j.spill, j.out = true, nil
		return
	}
	out := bufs.Out(len(j.Data))
	if o.Format == "json" {
		j.out, j.err = jsonr.AppendLine(out, r, jsonr.Options{About: o.About})
		return
	}
	buf := bytes.NewBuffer(out)
	j.err = writeFrameText(buf, j.prefix, r, o)
	j.out = buf.Bytes()
}

// writeFrameText writes a frame as text: the lines that go before it
// (prefix), the frame, and a blank line after a verbose one.
func writeFrameText(w io.Writer, prefix string, r *report.Frame, o decodeOptions) error {
	if _, err := io.WriteString(w, prefix); err != nil {
		return err
	}
	if err := text.Frame(w, r, o.Verbose, o.Style); err != nil || !o.Verbose {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// release hands the job's tree and output buffer back for reuse, once
// its line is written.
func (j *pcapJob) release(bufs *framebufs.Pool) {
	bufs.Put(len(j.Data), j.tree, j.out)
	j.out, j.tree, j.rep = nil, nil, nil
}

// pcapOutput writes the rendered frames in capture order and counts the
// failed and warned ones.
type pcapOutput struct {
	// o is decode's options, for the frames written in pieces here;
	// piece is their buffer.
	o        decodeOptions
	piece    []byte
	failed   int
	firstErr string
	// warned counts frames with a warning (not failures); cut those
	// that reached their decode budget.
	warned    int
	firstWarn string
	cut       int
	firstCut  string
}

func (p *pcapOutput) write(w io.Writer, h *pcapJob, bufs *framebufs.Pool) error {
	defer h.release(bufs)
	if !h.ok {
		p.failed++
		if p.firstErr == "" {
			p.firstErr = h.errText
		}
	}
	if h.err != nil {
		return h.err
	}
	if h.warnText != "" {
		p.warned++
		if p.firstWarn == "" {
			p.firstWarn = h.warnText
		}
	}
	var err error
	if h.spill {
		err = p.writePieces(w, h)
	} else {
		_, err = w.Write(h.out)
	}
	// What its decode budget held back, and its rendering's output
	// budget (rendered by now).
	if r := h.rep; r != nil && !h.skip {
		if note := r.BudgetNotes(); note != "" {
			if p.cut++; p.firstCut == "" {
				p.firstCut = r.Summary() + ": " + note
			}
		}
	}
	return err
}

// writePieces writes the frame of h in pieces as they are made: its text
// a section at a time, or its JSON line in pieces of pcapSpillAt (the
// buffer kept for the next such line holds the frame's fields and body
// and a piece, not the line).
func (p *pcapOutput) writePieces(w io.Writer, h *pcapJob) error {
	r := h.rep
	if p.o.Format != "json" {
		return writeFrameText(w, h.prefix, r, p.o)
	}
	sp := &jsonr.Spill{At: pcapSpillAt, Write: func(b []byte) error {
		_, err := w.Write(b)
		return err
	}}
	rest, err := jsonr.AppendLine(p.piece[:0], r, jsonr.Options{About: p.o.About, Spill: sp})
	if cap(rest) <= framebufs.MaxOut {
		p.piece = rest
	}
	if err != nil {
		return err
	}
	_, err = w.Write(rest)
	return err
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool { return term.IsTerminal(w) }
