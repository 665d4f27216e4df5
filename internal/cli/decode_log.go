package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/lineread"
	"github.com/manifester/manifester/internal/proxy"
	"github.com/manifester/manifester/internal/proxylog"
	"github.com/manifester/manifester/internal/redact"
	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/selector"
	"github.com/manifester/manifester/internal/textenc"
)

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
	if !proxylog.StartsWithBrace(r) {
		return false, nil
	}
	// After a byte order mark: UTF-8, or UTF-16 transcoded as it is read.
	return true, decodeLogLines(env, name, textenc.NewBufReader(r, 1<<16), o)
}

func decodeLogLines(env *Env, name string, r *bufio.Reader, o decodeOptions) error {
	c := o.Release.Codec
	w := bufio.NewWriter(env.Stdout)
	sec := redact.NewConns(o.ShowSecrets)
	sel := selector.New(c, o.Filter) // --filter and topic-id names
	var frames, failed, cut, others, lineNo int
	var searches report.Searches
	var firstErr, firstCut string
	var total int64
	// A line that stops the reading stops it after the frames before it,
	// which are printed.
	stop := func(err error) error {
		w.Flush()
		return failure{err}
	}
	for {
		// A line is read no further than the input's limit allows, nor
		// past a first byte that cannot start a JSON object.
		line, err := lineread.ObjectLine(r, int(maxDecodeInput-total))
		total += int64(len(line))
		if errors.Is(err, lineread.ErrTooLong) {
			return stop(fmt.Errorf("%s: more than %d bytes", name, maxDecodeInput))
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return stop(fmt.Errorf("reading %s: %w", name, err))
		}
		if len(bytes.TrimSpace(line)) > 0 {
			lineNo++
			l, jerr := proxylog.Parse(line)
			if jerr != nil {
				return stop(fmt.Errorf("%s: line %d is not JSON: %v", name, lineNo, jerr))
			}
			if !l.IsFrame() {
				others++
				if o.Filter == nil { // --filter shows frames only
					if werr := writeLogNotice(w, line, l, o); werr != nil {
						return failure{fmt.Errorf("writing: %w", werr)}
					}
				}
			} else {
				frames++
				// The first frames that fail search every response schema
				// with the full allowance, later ones in proportion to
				// their size (as decode FILE does).
				fr, e, derr := l.Decode(c, sec, o.Limits, searches.Lean())
				if derr != nil {
					return stop(fmt.Errorf("%s: line %d: %v", name, lineNo, derr))
				}
				searches.Count(fr)
				shown := sel.AdmitReportOn(fr, frames-1, l.Conn) // else counted in sel's summary
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
				if note := fr.BudgetNotes(); shown && note != "" { // the output budget's once rendered
					if cut++; firstCut == "" {
						firstCut = fmt.Sprintf("line %d: %s", lineNo, note)
					}
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
	fmt.Fprintf(env.Stderr, "manifester decode: %s: %s, %s\n", name, english.Count(frames, "frame"), english.Count(others, "other event"))
	sel.Summary(env.Stderr)
	budgetLine(env.Stderr, cut, frames, firstCut)
	searchLine(env.Stderr, searches.Cut())
	if failed > 0 {
		fmt.Fprintf(env.Stderr, "manifester decode: %d of %d frames did not decode cleanly; the first: %s\n", failed, frames, firstErr)
		return errSilentFailure
	}
	return nil
}

// writeLogNotice prints a line that is not a frame: as it is in JSON
// output, as a "#" line in text.
func writeLogNotice(w io.Writer, line []byte, l *proxylog.Line, o decodeOptions) error {
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
	_, err := fmt.Fprintf(w, "# %s%s: %s\n", at, text.Escape(l.Event+conn), text.Escape(l.Detail))
	return err
}
