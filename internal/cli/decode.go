package cli

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/filter"
	"github.com/manifester/manifester/internal/frameflow"
	"github.com/manifester/manifester/internal/frames"
	"github.com/manifester/manifester/internal/hexin"
	"github.com/manifester/manifester/internal/logseg"
	"github.com/manifester/manifester/internal/redact"
	"github.com/manifester/manifester/internal/render/jsonr"
	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/selector"
	"github.com/manifester/manifester/internal/tlsdecrypt"
)

const decodeUsage = "[--spec P] [--records DIR [--records-topic NAME]] [--format text|json [--about]] [--kind request|response] [--api KEY --version N] [--roundtrip] [-v] [--filter EXPR] [--max-inflate SIZE] [--max-nodes N] [--max-output SIZE] (--hex HEX | FILE | - | --pcap FILE|- [--port LIST] [--tls-keylog FILE] [--max-conns N] | --segment FILE|- [--max-entry SIZE])"

func init() {
	register(&command{
		name:    "decode",
		usage:   decodeUsage,
		summary: "decode real bytes (hex, a binary file, stdin, or a capture) into the annotated view",
		run:     runDecode,
	})
}

// decodeOptions are the output settings shared by every decode input
// (the capture reader, decode_pcap.go, too).
type decodeOptions struct {
	// Format is "text" or "json" (one JSON object per frame, see
	// jsonr.Line).
	Format string
	// Verbose prints the byte grid and object tree of every frame in text
	// output (hex and file input always show them).
	Verbose bool
	// Roundtrip re-encodes every cleanly decoded frame and reports whether
	// the bytes are reproduced.
	Roundtrip bool
	// About includes each tree node's description in JSON output.
	About bool
	// ShowSecrets leaves SASL auth bytes as they are (see secrets).
	ShowSecrets bool
	// Release is the spec release to decode with; its Codec annotates
	// values (error names, API names, dates) and inflates compressed
	// batches.
	Release *Release
	// Filter selects the frames shown (--filter); nil shows all.
	Filter *filter.Filter
	// Limits are each frame's budget (--max-inflate, --max-nodes,
	// --max-output); zero fields take the defaults.
	Limits budget.Limits
	// Style is how text output looks: the terminal's width and colours,
	// or the reference format; its GridMax bounds every grid.
	Style text.Style
	// TLSKeys decrypt a capture's TLS connections (--tls-keylog); nil
	// without one.
	TLSKeys *tlsdecrypt.KeyLog
	// MaxConns bounds a capture's connections followed at once
	// (--max-conns; 0: capture.DefaultMaxConns).
	MaxConns int
}

// addMaxConnsFlag registers --max-conns, for the commands that read
// captures.
func addMaxConnsFlag(fs *flag.FlagSet) *int {
	return fs.Int("max-conns", 0, fmt.Sprintf("follow at most `N` connections of a capture at once; beyond, the quietest are finished early and counted, and read as joined midway if they go on (default %d)", capture.DefaultMaxConns))
}

// maxDecodeInput bounds what decode reads from a file or stdin.
const maxDecodeInput = 1 << 30

func runDecode(env *Env, args []string) error {
	fs := newFlags(env, "decode", decodeUsage)
	var specs specFlags
	fs.Var(&specs, "spec", "spec location `[LABEL=]PATH` (default $MANIFESTER_SPEC)")
	format := fs.String("format", "text", "output format: text, or json (one object per frame)")
	kind := fs.String("kind", "request", "what the bytes are: request or response")
	apiArg := fs.String("api", "", "API `name or key` of a response (requests name it in their header)")
	version := fs.Int("version", -1, "API version of a response")
	roundtrip := fs.Bool("roundtrip", false, "re-encode each frame and report whether the bytes are reproduced")
	about := fs.Bool("about", false, "include each tree node's description (\"about\") in JSON output")
	verbose := fs.Bool("v", false, "print the grid and tree of every frame (captures)")
	hexArg := fs.String("hex", "", "the input as hex (plain, spaced, colon-separated, 0x, xxd, hexdump, od, tcpdump -X, tshark -x), quoted literals (Python's b'\\x00', Go's %q) or decimal lists ([0, 12])")
	pcap := fs.String("pcap", "", "decode a pcap or pcapng `FILE` (- reads standard input, streaming)")
	segment := fs.String("segment", "", "decode a partition's log segment `FILE` as a broker stores it (a .log file, or a KRaft snapshot's .checkpoint; - reads standard input); a FILE named so is read as one without the flag")
	maxEntry := int64(logseg.DefaultMaxEntry)
	fs.Var(sizeFlag{&maxEntry}, "max-entry", fmt.Sprintf("log segment entries longer than `SIZE` are skipped, and counted (default %s)", budget.Size(logseg.DefaultMaxEntry)))
	recs := addRecordsFlag(fs)
	recordsTopic := fs.String("records-topic", "", "read every records field as the records of internal topic `NAME` (__consumer_offsets, __transaction_state, __share_group_state, __cluster_metadata); needs --records")
	portArg := fs.String("port", "", "Kafka server ports of a capture, comma-separated, ranges too (9092,9093 or 9092-9094; default: every connection whose first bytes read as a Kafka request)")
	maxConns := addMaxConnsFlag(fs)
	filterArg := fs.String("filter", "", "show only the frames that match `EXPR`, e.g. 'api == Fetch and error != NONE' (see docs/capture.md)")
	showSecrets := fs.Bool("show-secrets", false, "show SASL passwords, proofs and tokens (redacted by default)")
	keylog := addKeyLogFlag(fs)
	tf := addTermFlags(fs, true, true)
	var lim budgetFlags
	lim.register(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *format != "text" && *format != "json" {
		return usagef("unknown --format %q (want text or json)", *format)
	}
	rel, all, err := specs.newest(env)
	if err != nil {
		return err
	}
	warnNewestOnly(env, "decode", all)
	prepareCodec(rel)
	if err := attachRecords(env, rel, *recs, *recordsTopic); err != nil {
		return err
	}
	st, err := tf.style(env)
	if err != nil {
		return err
	}
	o := decodeOptions{Format: *format, Verbose: *verbose, Roundtrip: *roundtrip, About: *about, ShowSecrets: *showSecrets, Release: rel, Style: st, Limits: lim.limits}
	if o.Filter, err = compileFilter(*filterArg, rel.Reg); err != nil {
		return err
	}
	if o.TLSKeys, err = loadKeyLog(*keylog); err != nil {
		return err
	}
	if *format == "json" {
		warnIgnored(env, "decode", fs, "JSON is not coloured, fitted, paged or cut", "color", "wide", "no-pager", "grid-max")
	} else if *verbose || *pcap == "" {
		// Grids and trees are paged when taller than the terminal.
		out, done := tf.output(env)
		defer done()
		paged := *env
		paged.Stdout = out
		env = &paged
	}

	if *about && *format != "json" {
		warnf(env, "decode", "--about has no effect without --format json (text output shows every description)")
	}
	if len(pos) == 0 && *hexArg == "" && *pcap == "" && *segment == "" && stdinIsInput(env) {
		pos = []string{"-"} // like cat, read a pipe or a redirected file
	}
	if len(pos) == 1 && pos[0] == "-" {
		env = withPeekableStdin(env)
	}
	for _, p := range append(pos[:len(pos):len(pos)], *segment) {
		if kind, ok := logseg.Companion(p); ok {
			return usagef("%s is %s, which holds no records: give the segment beside it (00000000000000000000.log)", text.Escape(p), kind)
		}
	}
	if *segment == "" && len(pos) == 1 && *hexArg == "" && *pcap == "" && logseg.IsSegmentName(pos[0]) {
		*segment, pos = pos[0], nil // 00000000000000000000.log
	}
	if *segment != "" {
		if *hexArg != "" || *pcap != "" || len(pos) > 0 {
			return usagef("--segment takes no other input")
		}
		if *filterArg != "" || *roundtrip || *portArg != "" || *keylog != "" || *maxConns != 0 {
			return usagef("--filter, --roundtrip, --port, --max-conns and --tls-keylog go with frames, not a log segment's entries")
		}
		warnIgnored(env, "decode", fs, "a log segment holds record batches, not requests or responses", "kind", "api", "version")
		return runDecodeSegment(env, *segment, maxEntry, o)
	}
	if len(pos) == 1 && *hexArg == "" && *pcap == "" {
		// A capture given as a FILE (or on stdin) is read as with --pcap.
		if path, cleanup, isCapture, err := captureInput(env, pos[0]); err != nil {
			return err
		} else if isCapture {
			defer cleanup()
			ports, err := parsePorts(*portArg)
			if err != nil {
				return err
			}
			warnIgnored(env, "decode", fs, "a capture names the kind, API and version of every frame", "kind", "api", "version")
			o.MaxConns = *maxConns
			return runDecodePcap(env, path, ports, o)
		}
	}
	if *pcap != "" {
		if *hexArg != "" || len(pos) > 0 {
			return usagef("--pcap takes no other input")
		}
		ports, err := parsePorts(*portArg)
		if err != nil {
			return err
		}
		warnIgnored(env, "decode", fs, "a capture names the kind, API and version of every frame", "kind", "api", "version")
		o.MaxConns = *maxConns
		return runDecodePcap(env, *pcap, ports, o)
	}
	if *portArg != "" {
		return usagef("--port goes with a capture (--pcap FILE, or a pcap or pcapng FILE)")
	}
	if *maxConns != 0 {
		return usagef("--max-conns goes with a capture (--pcap FILE, or a pcap or pcapng FILE)")
	}
	if *keylog != "" {
		return usagef("--tls-keylog goes with a capture (--pcap FILE, or a pcap or pcapng FILE)")
	}
	// A JSON-lines input (a proxy log, decode --format json output)
	// names each frame's kind, API and version itself.
	if done, err := decodeLog(env, *hexArg, pos, o); done {
		return err
	}

	ro := report.Options{Roundtrip: *roundtrip, Limits: lim.limits}
	switch *kind {
	case "request":
		ro.Kind = schema.TypeRequest
		// A response pasted without --kind response reads as a request
		// that fails: say when it reads as a response.
		ro.MaybeResponse = true
		if *apiArg != "" || *version >= 0 {
			return usagef("requests name their API and version in their header; --api and --version are for --kind response")
		}
	case "response":
		ro.Kind = schema.TypeResponse
		// Without --api, each frame is reported with the APIs and
		// versions that explain it (report.Unnamed), as a capture's
		// response whose request was lost is.
		if *apiArg != "" {
			if *version < 0 {
				return responseVersionHint(env, rel, *apiArg, *hexArg, pos)
			}
			api, v, err := lookupAPI(rel.Reg, *apiArg, *version)
			if err != nil {
				return err
			}
			ro.API, ro.Version = api, v
		} else if *version >= 0 {
			return usagef("--version goes with --api")
		}
	default:
		return usagef("unknown --kind %q (want request or response)", *kind)
	}

	data, err := decodeInput(env, *hexArg, pos)
	if err != nil {
		return err
	}
	return decodeStream(env, data, ro, o)
}

// responseVersionHint is the usage error for a response given without
// --version: it names the versions at which the first frame decodes
// cleanly, when the input can be read.
func responseVersionHint(env *Env, rel *Release, apiArg, hexArg string, pos []string) error {
	api, err := rel.Reg.Lookup(apiArg)
	if err != nil {
		return usageError{err}
	}
	const msg = "a response does not name its version: give --version N"
	data, err := decodeInput(env, hexArg, pos)
	if err != nil || len(data) == 0 || api.Reserved() {
		return usagef("%s", msg)
	}
	first := frames.Split(data)[0]
	r := report.Decode(rel.Codec, first.Bytes, report.Options{Kind: schema.TypeResponse, API: api, Version: -1})
	if len(r.AlsoDecodesAs) == 0 {
		return usagef("%s (no version of %s, %s, decodes the first frame cleanly)", msg, api.Name, api.Response.Valid)
	}
	vs := make([]string, len(r.AlsoDecodesAs))
	for i, v := range r.AlsoDecodesAs {
		vs[i] = "v" + strconv.Itoa(int(v))
	}
	return usagef("%s (the first frame decodes cleanly as %s %s)", msg, api.Name, strings.Join(vs, ", "))
}

// prepareCodec wires the decompressors into a release's codec (notes
// are the span tree's own, made when rendered).
func prepareCodec(rel *Release) {
	rel.Codec.Decompress = compress.Decompressor()
	rel.Codec.DecompressLimit = compress.LimitDecompressor()
}

// parsePorts reads --port: comma-separated ports and ranges of them
// ("9092,9093", "9092-9094", as a cluster's listeners often are).
func parsePorts(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	port := func(p string) (int, bool) {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		return n, err == nil && n > 0 && n <= 65535
	}
	var out []int
	for _, p := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(p, "-")
		a, ok := port(lo)
		b := a
		if isRange {
			var okHi bool
			b, okHi = port(hi)
			ok = ok && okHi && a <= b
		}
		if !ok {
			return nil, usagef("bad --port %q: want comma-separated port numbers or ranges (9092,9093 or 9092-9094)", strings.TrimSpace(p))
		}
		for n := a; n <= b; n++ {
			out = append(out, n)
		}
	}
	return out, nil
}

// decodeInput reads the bytes to decode: --hex, a file, or stdin ("-"),
// the latter two as raw binary or as hex text (detected, see hexin.Input).
// A tcpdump -X style dump of IP packets yields their TCP payload.
func decodeInput(env *Env, hexArg string, pos []string) ([]byte, error) {
	var text string
	switch {
	case hexArg != "" && len(pos) > 0:
		return nil, usagef("give the input once: --hex, a FILE or -")
	case hexArg != "":
		text = hexArg
	case len(pos) == 1:
		var r io.Reader
		if pos[0] == "-" {
			r = env.Stdin
		} else {
			f, err := os.Open(pos[0])
			if err != nil {
				return nil, failure{err}
			}
			defer f.Close()
			r = f
		}
		raw, err := io.ReadAll(io.LimitReader(r, maxDecodeInput+1))
		if err != nil {
			return nil, failure{fmt.Errorf("reading %s: %w", pos[0], err)}
		}
		if len(raw) > maxDecodeInput {
			return nil, failure{fmt.Errorf("%s: more than %d bytes", pos[0], maxDecodeInput)}
		}
		if pos[0] == "-" && len(raw) == 0 {
			return nil, usagef("nothing to decode: standard input is empty (give --hex HEX, a FILE, or --pcap FILE)")
		}
		b, err := hexin.Input(raw)
		if err != nil {
			return nil, failure{err}
		}
		return b, nil
	case len(pos) == 0:
		return nil, usagef("nothing to decode: give --hex HEX, a FILE, - for stdin, or --pcap FILE")
	default:
		return nil, usagef("decode takes one FILE, got %d", len(pos))
	}
	b, err := hexin.TextInput(text)
	if err != nil {
		return nil, failure{err}
	}
	return b, nil
}

// decodeStream decodes back-to-back frames and prints a report for each.
func decodeStream(env *Env, data []byte, ro report.Options, o decodeOptions) error {
	if len(data) == 0 {
		return failure{errors.New("no bytes to decode")}
	}
	pieces := frameflow.Split(data)
	w := bufio.NewWriter(env.Stdout)
	failed, cut, unnamed := 0, 0, 0
	var firstErr, firstCut string
	// JSON lines are written straight from the span tree.
	ro.Lean = o.Format == "json"
	sel := selector.New(o.Release.Codec, o.Filter)
	sec := redact.NewConns(o.ShowSecrets)
	var searches report.Searches
	for i, p := range pieces {
		// The first frames that fail search every response schema with
		// the full allowance; later ones in proportion to their size.
		ro.LeanSearch = searches.Lean()
		r := frameflow.Decode(i, p, func(b []byte) *report.Frame {
			b, plan := sec.Frame(0, o.Release.Codec, b, ro)
			return redact.DecodeRedacted(o.Release.Codec, b, ro, plan)
		})
		searches.Count(r)
		if !sel.AdmitReport(r, i) {
			continue
		}
		if r.Unnamed && len(r.Candidates) > 0 {
			unnamed++
		}
		if !r.OK() {
			failed++
			if firstErr == "" {
				firstErr = r.Error
				if firstErr == "" {
					firstErr = "re-encoding does not reproduce the input"
					if d := r.RoundtripDiff; d != nil {
						firstErr += fmt.Sprintf(" (first difference at offset %d, %s)", d.Offset, d.Field)
					}
				}
			}
		}
		var err error
		if o.Format == "json" {
			err = jsonr.LineOpts(w, r, jsonr.Options{About: o.About})
		} else {
			if len(pieces) > 1 {
				fmt.Fprintf(w, "frame %d at offset %d: ", i, p.Offset)
			}
			err = text.Frame(w, r, true, o.Style)
		}
		if err != nil {
			return failure{fmt.Errorf("writing: %w", err)}
		}
		if note := r.BudgetNotes(); note != "" { // the output budget's once rendered
			if cut++; firstCut == "" {
				firstCut = note
			}
		}
	}
	if err := w.Flush(); err != nil {
		return failure{fmt.Errorf("writing: %w", err)}
	}
	sel.Summary(env.Stderr)
	if unnamed > 0 {
		fmt.Fprintf(env.Stderr, "manifester decode: %s not decoded: give --kind response --api KEY --version N to decode one as a candidate\n", english.Count(unnamed, "response"))
	}
	budgetLine(env.Stderr, cut, len(pieces), firstCut)
	searchLine(env.Stderr, searches.Cut())
	if failed > 0 {
		if len(pieces) > 1 {
			fmt.Fprintf(env.Stderr, "manifester decode: %d of %d frames did not decode cleanly%s; the first: %s\n", failed, len(pieces), map[bool]string{true: " or round-trip", false: ""}[o.Roundtrip], firstErr)
		} else {
			fmt.Fprintf(env.Stderr, "manifester decode: %s\n", firstErr)
		}
		return errSilentFailure
	}
	return nil
}

// searchLine says on w on how many frames (n) the search of every
// response schema stopped at its budget, when any did.
func searchLine(w io.Writer, n int) {
	if n > 0 {
		fmt.Fprintf(w, "manifester decode: the search of every response schema stopped at its budget on %s (the first %d searches of an input have 1 MiB of bytes read each, later ones 32 times their frame's size)\n", english.Count(n, "frame"), report.FullSearches)
	}
}

// budgetLine says on w how many of the total frames reached their decode
// budget, and the first's budget note: not a failure (the frames are
// well formed), but what was not shown is said.
func budgetLine(w io.Writer, cut, total int, first string) {
	if cut > 0 {
		fmt.Fprintf(w, "manifester decode: %s of %d reached its decode budget (raise it with --max-inflate, --max-nodes, --max-output); the first: %s\n", english.Count(cut, "frame"), total, first)
	}
}
