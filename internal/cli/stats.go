package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/capdecode"
	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/pipeline"
	"github.com/manifester/manifester/internal/proxylog"
	"github.com/manifester/manifester/internal/redact"
	"github.com/manifester/manifester/internal/release"
	"github.com/manifester/manifester/internal/selector"
	"github.com/manifester/manifester/internal/stats"
)

const statsUsage = "[--spec P] [--format text|json|html] [--filter EXPR] [--top-conns N] [--port LIST] [--tls-keylog FILE] [--max-conns N] (--pcap FILE|- | FILE.jsonl|-)"

func init() {
	register(&command{
		name:    "stats",
		usage:   statsUsage,
		summary: "summarise traffic (a capture or JSON lines): per API version counts, bytes, latency, errors; per connection",
		run:     runStats,
	})
}

// runStats wires the inputs to package stats: a capture through the
// capture reader, or the JSON lines of decode --pcap --format json and of
// the proxy's --log.
func runStats(env *Env, args []string) error {
	fs := newFlags(env, "stats", statsUsage)
	var specs specFlags
	fs.Var(&specs, "spec", "spec location `[LABEL=]PATH` (default $MANIFESTER_SPEC)")
	format := fs.String("format", "text", "output format: text (aligned tables), json, or html (one self-contained page with latency histograms)")
	pcap := fs.String("pcap", "", "read a pcap or pcapng `FILE` (- for standard input)")
	portArg := fs.String("port", "", "Kafka server ports of a capture, comma-separated, ranges too (9092,9093 or 9092-9094; default: every connection that reads as Kafka)")
	keylog := addKeyLogFlag(fs)
	maxConns := addMaxConnsFlag(fs)
	topConns := fs.Int("top-conns", stats.DefaultMaxConns, "list at most `N` connections, those with the most frames (0: all); the others are summed in one line")
	filterArg := fs.String("filter", "", "count only the frames that match `EXPR`, e.g. 'topic == orders' or 'client_id == \"billing\"' (see docs/capture.md); a response matches with its request's client id and topics")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *format != "text" && *format != "json" && *format != "html" {
		return usagef("unknown --format %q (want text, json or html)", *format)
	}
	if (*pcap == "") == (len(pos) == 0) || len(pos) > 1 {
		return usagef("give one input: --pcap FILE (or -), or one FILE.jsonl (or -)")
	}
	open := func(name string) (io.Reader, func(), error) {
		if name == "-" {
			return env.Stdin, func() {}, nil
		}
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, failure{err}
		}
		return f, func() { f.Close() }, nil
	}
	if *topConns < 0 {
		return usagef("--top-conns wants 0 (all) or more, not %d", *topConns)
	}
	agg := stats.NewListing(*topConns)
	// The filter needs the spec (API names, and the frames decoded for
	// their topics and errors), as a capture does; JSON lines alone do not.
	var sel *selector.Selector
	var rel *release.Release
	if *pcap != "" || *filterArg != "" {
		if rel, _, err = specs.newest(env); err != nil {
			return err
		}
		flt, err := compileFilter(*filterArg, rel.Reg)
		if err != nil {
			return err
		}
		sel = selector.New(rel.Codec, flt)
	}
	if *pcap != "" {
		ports, err := parsePorts(*portArg)
		if err != nil {
			return err
		}
		r, done, err := open(*pcap)
		if err != nil {
			return err
		}
		defer done()
		keys, err := loadKeyLog(*keylog)
		if err != nil {
			return err
		}
		opts := capdecode.Options(rel.Codec, ports)
		opts.TLSKeys, opts.MaxConns = keys, *maxConns
		st, err := readCaptureStats(r, opts, rel.Codec, sel, agg.Add, func(conn int) { agg.Close(strconv.Itoa(conn)) })
		if errors.Is(err, io.ErrUnexpectedEOF) && st.Packets > 0 {
			fmt.Fprintf(env.Stderr, "manifester stats: warning: %v\n", err)
			err = nil
		}
		if err != nil {
			return failure{fmt.Errorf("%s: %w", *pcap, err)}
		}
		// What the reader skipped, as decode --pcap says it.
		fmt.Fprintf(env.Stderr, "manifester stats: %s: %s\n", *pcap, capdecode.Summary(st))
		tlsHint(env.Stderr, "stats", st, keys)
	} else {
		if *portArg != "" {
			return usagef("--port goes with --pcap")
		}
		if *maxConns != 0 {
			return usagef("--max-conns goes with --pcap")
		}
		if *keylog != "" {
			return usagef("--tls-keylog goes with --pcap")
		}
		r, done, err := open(pos[0])
		if err != nil {
			return err
		}
		defer done()
		var admit stats.Admit
		sec := redact.NewConns(false)
		if sel.Filters() {
			admit = logLineAdmit(rel.Codec, sel, sec)
		}
		// A proxy log's close events release what is kept of their
		// connection, as a capture's connection ends do.
		st, err := stats.ReadJSONLinesWith(r, admit, agg.Add, func(conn string, n int) {
			agg.Close(conn)
			sel.Forget(n)
			sec.Forget(n)
		})
		if err != nil {
			return failure{fmt.Errorf("%s: %w", pos[0], err)}
		}
		fmt.Fprintf(env.Stderr, "manifester stats: %s: %s, %s\n", pos[0], english.Count(st.Frames, "frame line"), english.Count(st.Events, "event line"))
	}
	sel.SummaryAs(env.Stderr, "stats", "counted")
	s := agg.Summary()
	w := bufio.NewWriter(env.Stdout)
	switch *format {
	case "json":
		err = s.WriteJSON(w)
	case "html":
		err = s.WriteHTML(w)
	default:
		err = s.WriteText(w)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return failure{fmt.Errorf("writing: %w", err)}
	}
	return nil
}

// readCaptureStats is stats.ReadCapture on every core: the frames'
// records (a paired response is decoded for its error codes) are made by
// a pipeline's workers and added in capture order. With a filter (sel
// filters) the workers decode requests too, and the ordered stage adds
// only the frames sel admits. closed, when set, is told each connection's
// end, after its records.
func readCaptureStats(r io.Reader, opts capture.Options, c *codec.Codec, sel *selector.Selector, add func(*stats.Record), closed func(conn int)) (capture.Stats, error) {
	type job struct {
		ev  capture.Event
		rec *stats.Record
		fr  *codec.Frame // the frame decoded, with a filter
		err error
		// closed, when not 0, makes the job the end of that connection,
		// after its frames in capture order.
		closed int
	}
	filters := sel.Filters()
	index := 0 // frames looked at, for the selector
	// Yield: the emitter is not left waiting behind a worker (as in
	// decode --pcap).
	pl := pipeline.New(context.Background(), pipeline.Config{Yield: true}, pipeline.Stages[*job]{
		Work: func(j *job) error {
			if j.closed != 0 {
				return nil
			}
			if !filters {
				j.rec = stats.RecordOf(&j.ev, c)
				return nil
			}
			j.fr, j.err = selector.DecodeEvent(c, &j.ev)
			j.rec = stats.RecordWith(&j.ev, c, j.fr, j.err)
			return nil
		},
		Emit: func(j *job) error {
			if j.closed != 0 {
				// What is kept of the connection goes: its row (unless
				// it is among those listed) and its filter state.
				if closed != nil {
					closed(j.closed)
				}
				sel.Forget(j.closed)
				return nil
			}
			if j.rec == nil {
				return nil
			}
			if filters {
				admit := sel.AdmitDecoded(&j.ev, index, j.fr, j.err)
				index++
				if !admit {
					return nil
				}
			}
			add(j.rec)
			return nil
		},
	})
	opts.Closed = func(conn *capture.Conn) {
		// Submitted as a job, so that it comes after the connection's
		// frames; a failed Submit fails the next event's too.
		pl.Submit(&job{closed: conn.ID})
	}
	st, err := capture.Read(r, opts, func(ev *capture.Event) error {
		data := ev.Keep()
		j := &job{ev: *ev}
		j.ev.Data = data
		return pl.Submit(j)
	})
	if cerr := pl.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return st, err
}

// logLineAdmit is stats --filter on JSON lines: each frame line's hex is
// decoded (as decode FILE.jsonl does, its SASL secrets redacted by the
// connection's stream in sec) and put to sel, a response paired with its
// request on the line's connection.
func logLineAdmit(c *codec.Codec, sel *selector.Selector, sec *redact.Conns) stats.Admit {
	index := 0
	return func(line []byte) (bool, error) {
		l, err := proxylog.Parse(line)
		if err != nil {
			return false, err
		}
		if !l.IsFrame() {
			return false, errors.New("--filter needs the frame's hex, and this frame line has none")
		}
		// The filter reads no candidates: a response without its API
		// is searched in proportion to its size.
		fr, _, err := l.Decode(c, sec, budget.Limits{}, true)
		if err != nil {
			return false, err
		}
		admit := sel.AdmitReportOn(fr, index, l.Conn)
		index++
		return admit, nil
	}
}
