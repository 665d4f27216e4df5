package cli

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/proxy"
	"github.com/manifester/manifester/internal/redact"
	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
)

// logLine is what decode reads of a line of a proxy log (proxy --log,
// proxy --format json) or of decode --format json output.
type logLine struct {
	Conn        int        `json:"conn"`
	Event       string     `json:"event"`
	Direction   string     `json:"direction"`
	Client      string     `json:"client"`
	Listener    string     `json:"listener"`
	Upstream    string     `json:"upstream"`
	Rewritten   bool       `json:"rewritten"`
	OriginalHex string     `json:"original_hex"`
	Detail      string     `json:"detail"`
	Index       int        `json:"index"`
	Offset      int64      `json:"offset"`
	Kind        string     `json:"kind"`
	APIKey      *int16     `json:"api_key"`
	API         string     `json:"api"`
	Version     *int16     `json:"version"`
	Hex         *string    `json:"hex"`
	Time        *time.Time `json:"time"`
	Src         string     `json:"src"`
	Dst         string     `json:"dst"`
	Latency     *int64     `json:"latency_us"`
}

// rawTokenAPI is the api of a frame line for a raw SASL token (see
// redact.RawReport).
const rawTokenAPI = "SaslHandshake-v0-token"

// decodeLog decodes a JSON-lines input (FILE or -) when it is one: it
// reports whether it was, and the command's result.
func decodeLog(env *Env, hexArg string, pos []string, o decodeOptions) (bool, error) {
	if hexArg != "" || len(pos) != 1 {
		return false, nil
	}
	var r *bufio.Reader
	name := pos[0]
	if name == "-" {
		br, ok := env.Stdin.(*bufio.Reader)
		if !ok {
			br = bufio.NewReaderSize(env.Stdin, 1<<16)
			env.Stdin = br
		}
		r = br
	} else {
		f, err := os.Open(name)
		if err != nil {
			return false, nil // decodeInput says so
		}
		defer f.Close()
		r = bufio.NewReaderSize(f, 1<<16)
	}
	if !startsWithBrace(r) {
		return false, nil
	}
	return true, decodeLogLines(env, name, r, o)
}

// startsWithBrace peeks past leading white space for a '{'.
func startsWithBrace(r *bufio.Reader) bool {
	for n := 1; n <= 4096; n++ {
		b, _ := r.Peek(n)
		if len(b) < n {
			return false
		}
		switch b[n-1] {
		case ' ', '\t', '\r', '\n':
		case '{':
			return true
		default:
			return false
		}
	}
	return false
}

func decodeLogLines(env *Env, name string, r *bufio.Reader, o decodeOptions) error {
	c := o.Release.Codec
	w := bufio.NewWriter(env.Stdout)
	sec := newSecrets(o.ShowSecrets)
	sel := newFrameSelector(c, o.Filter) // --filter and topic-id names (decode_select.go)
	var frames, failed, others, lineNo int
	var firstErr string
	var total int64
	for {
		line, err := r.ReadBytes('\n')
		total += int64(len(line))
		if total > maxDecodeInput {
			return failure{fmt.Errorf("%s: more than %d bytes", name, maxDecodeInput)}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return failure{fmt.Errorf("reading %s: %w", name, err)}
		}
		if len(bytes.TrimSpace(line)) > 0 {
			lineNo++
			var l logLine
			if jerr := json.Unmarshal(line, &l); jerr != nil {
				return failure{fmt.Errorf("%s: line %d is not JSON: %v", name, lineNo, jerr)}
			}
			if l.Hex == nil || (l.Event != "" && l.Event != "frame") {
				others++
				if o.Filter == nil { // --filter shows frames only
					if werr := writeLogNotice(w, line, &l, o); werr != nil {
						return failure{fmt.Errorf("writing: %w", werr)}
					}
				}
			} else {
				frames++
				fr, e, derr := decodeLogFrame(c, sec, &l, o.Limits)
				if derr != nil {
					return failure{fmt.Errorf("%s: line %d: %v", name, lineNo, derr)}
				}
				shown := sel.admitReportOn(fr, frames-1, l.Conn) // else counted in sel's summary
				if shown && !fr.OK() {
					failed++
					if firstErr == "" {
						firstErr = fmt.Sprintf("line %d: %s", lineNo, fr.Error)
					}
				}
				var werr error
				switch {
				case !shown:
				case o.Format == "json":
					var b []byte
					if b, werr = proxy.AppendJSON(nil, e); werr == nil {
						_, werr = w.Write(b)
					}
				default:
					if l.Rewritten {
						fmt.Fprintf(w, "# conn %d: the proxy rewrote this response's broker addresses; the broker sent %d bytes (original_hex)\n", l.Conn, len(e.Original))
					}
					werr = text.Frame(w, fr, o.Verbose, text.Style{})
				}
				if werr != nil {
					return failure{fmt.Errorf("writing: %w", werr)}
				}
			}
		}
		if err != nil {
			break
		}
	}
	if err := w.Flush(); err != nil {
		return failure{fmt.Errorf("writing: %w", err)}
	}
	fmt.Fprintf(env.Stderr, "manifester decode: %s: %d frames, %d other events\n", name, frames, others)
	sel.summary(env.Stderr)
	if failed > 0 {
		fmt.Fprintf(env.Stderr, "manifester decode: %d of %d frames did not decode cleanly; the first: %s\n", failed, frames, firstErr)
		return errSilentFailure
	}
	return nil
}

// decodeLogFrame decodes the hex of a frame line again, with the line's
// API and version for a response, SASL secrets redacted, within the
// budget lim (decode's --max-* flags; zero fields take the defaults).
func decodeLogFrame(c *codec.Codec, sec *secrets, l *logLine, lim budget.Limits) (*report.Frame, *proxy.Event, error) {
	b, err := hex.DecodeString(*l.Hex)
	if err != nil {
		return nil, nil, fmt.Errorf("hex: %w", err)
	}
	var orig []byte
	if l.Rewritten {
		if orig, err = hex.DecodeString(l.OriginalHex); err != nil {
			return nil, nil, fmt.Errorf("original_hex: %w", err)
		}
	}
	ro := report.Options{Roundtrip: false, Limits: lim}
	fromServer := l.Kind == "response"
	if fromServer {
		ro.Kind = schema.TypeResponse
		if l.APIKey != nil && l.Version != nil {
			if api, ok := c.Reg.API(*l.APIKey); ok {
				ro.API, ro.Version = api, *l.Version
			}
		}
	}
	var fr *report.Frame
	if l.API == rawTokenAPI {
		data, plan := b, (*redact.Plan)(nil)
		if st := sec.stream(l.Conn); st != nil {
			data, plan = st.Raw(b, fromServer)
		}
		fr = redact.RawReport(data, plan, fromServer)
	} else {
		data, plan := sec.frame(l.Conn, c, b, ro)
		fr = redact.DecodeRedacted(c, data, ro, plan)
	}
	fr.Index, fr.Offset, fr.Time, fr.Src, fr.Dst, fr.LatencyMicros = l.Index, l.Offset, l.Time, l.Src, l.Dst, l.Latency
	e := &proxy.Event{Kind: proxy.EventFrame, Conn: l.Conn, Client: l.Client, Listener: l.Listener, Upstream: l.Upstream,
		Dir: l.Kind, Rewritten: l.Rewritten, Original: orig, Frame: fr, Data: fr.Bytes}
	return fr, e, nil
}

// writeLogNotice prints a line that is not a frame: as it is in JSON
// output, as a "#" line in text.
func writeLogNotice(w io.Writer, line []byte, l *logLine, o decodeOptions) error {
	if o.Format == "json" {
		line = bytes.TrimRight(line, "\r\n")
		_, err := w.Write(append(line, '\n'))
		return err
	}
	at := ""
	if l.Time != nil {
		at = l.Time.UTC().Format("15:04:05.000000") + " "
	}
	conn := ""
	if l.Conn > 0 {
		conn = fmt.Sprintf(" conn %d (%s via %s to %s)", l.Conn, l.Client, l.Listener, l.Upstream)
	}
	// The log is input like any other: nothing of it reaches the terminal raw.
	_, err := fmt.Fprintf(w, "# %s%s: %s\n", at, terminalSafe(l.Event+conn), terminalSafe(l.Detail))
	return err
}
