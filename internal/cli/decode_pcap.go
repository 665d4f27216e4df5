package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
)

func init() { decodePcap = runDecodePcap }

// progressMin is the smallest capture that gets a progress bar.
const progressMin = 32 << 20

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
	if st, err := f.Stat(); err == nil && st.Size() >= progressMin && isTerminal(env.Stderr) {
		bar := &progressBar{w: env.Stderr, name: path, total: st.Size(), start: time.Now()}
		opts.Progress = bar.update
		defer bar.done()
	}

	w := bufio.NewWriterSize(env.Stdout, 1<<16)
	var index, failed int
	var firstErr string
	lastConn := 0
	stats, err := capture.Read(f, opts, func(ev *capture.Event) error {
		ro := report.Options{Roundtrip: o.Roundtrip}
		if ev.Dir == capture.ServerToClient {
			ro.Kind = schema.TypeResponse
			if ev.Request != nil {
				if api, ok := reg.API(ev.Request.APIKey); ok {
					ro.API, ro.Version = api, ev.Request.Version
				}
			}
		}
		r := report.Decode(c, ev.Data, ro)
		r.Index, r.Offset = index, ev.Offset
		index++
		t := ev.Time
		r.Time = &t
		if ev.Dir == capture.ClientToServer {
			r.Src, r.Dst = ev.Conn.Client.String(), ev.Conn.Server.String()
		} else {
			r.Src, r.Dst = ev.Conn.Server.String(), ev.Conn.Client.String()
			if ev.Request != nil {
				lat := ev.Time.Sub(ev.Request.Time).Microseconds()
				r.LatencyMicros = &lat
			} else {
				corr, _ := codec.PeekCorrelationID(ev.Data)
				r.CorrelationID = corr
				r.Error = fmt.Sprintf("no request with correlation id %d was seen on this connection (the capture lost it), so the response's API and version are unknown", corr)
			}
		}
		if !r.OK() {
			failed++
			if firstErr == "" {
				firstErr = r.Summary() + ": " + r.Error
				if r.Error == "" {
					firstErr += "re-encoding does not reproduce the input"
				}
			}
		}
		if o.Format == "json" {
			return report.JSONLine(w, r)
		}
		if ev.Conn.ID > lastConn { // connections are numbered as they first show up
			lastConn = ev.Conn.ID
			how := "from its start"
			if !ev.Conn.SawSYN {
				how = "mid-connection (no SYN captured)"
			}
			fmt.Fprintf(w, "# connection %d: client %s, server %s, captured %s\n", ev.Conn.ID, ev.Conn.Client, ev.Conn.Server, how)
		}
		if ev.Skipped > 0 {
			fmt.Fprintf(w, "# %d bytes skipped before this frame (not captured, or no frame boundary)\n", ev.Skipped)
		}
		if err := report.Text(w, r, o.Verbose); err != nil {
			return err
		}
		if o.Verbose {
			_, err := io.WriteString(w, "\n")
			return err
		}
		return nil
	})
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

func (p *progressBar) done() {
	if !p.last.IsZero() {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
