// Package jsonr writes JSON from the one annotated tree, [span.Tree]: the
// lines of `decode --format json` (one per frame, also the proxy's log and
// the input of `stats`), the frames of the decode and encode API's
// answers, and the page documents of `show --format json` and the site.
// Everything is appended to caller-owned buffers, straight from the tree:
// no intermediate node structs, no reflection. The output is what
// encoding/json writes for the same data (same keys, same order, same
// escaping, HTML characters and invalid UTF-8 included).
//
// Tree nodes carry name, path (the one path syntax of [span.Tree.Path]),
// type, text, value, hex, offset, size, category, about (with
// Options.About), flag, error, children and detached, each only when it
// has something to say, as encoding/json's omitempty would.
package jsonr

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/hexout"
	"github.com/manifester/manifester/internal/jsonvalue"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/span"
)

// Options control the frame writers.
type Options struct {
	// About includes each tree node's description ("about"), which is
	// schema data repeated in every frame; off by default.
	About bool
	// Continue writes the frame's fields as the continuation of an
	// object begun in dst: a comma where the frame's "{" would be.
	Continue bool
	// Spill, when set, lets a long line leave in pieces (see [Spill]).
	Spill *Spill
}

// Spill hands a frame's line to its writer in pieces as it is made,
// so that the line never has to be whole in memory: a frame of
// compressible batches makes a line 80 times its size (a 3 MB Fetch
// response, 190 MB of JSON), most of it the inflated batches' trees.
//
// Once the buffer holds At bytes or more between two tree nodes, what
// it holds goes to Write and the line goes on from the buffer's start;
// the frame's hex goes to Write as it is when it is At bytes or more.
// What precedes the tree (the frame's fields and its body, about four
// bytes a frame byte) is made whole. What the writer returns is what
// Write did not take. An error from Write ends the pieces: the rest of
// the line is made but not handed over, and the writer returns the
// error; nothing else can fail once a piece has gone.
type Spill struct {
	At    int
	Write func([]byte) error
}

// Line writes the frame as one JSON object on one line (see
// [AppendLine]), without the tree nodes' descriptions.
func Line(w io.Writer, f *report.Frame) error {
	return LineOpts(w, f, Options{})
}

// LineOpts is [Line] with options.
func LineOpts(w io.Writer, f *report.Frame, o Options) error {
	b, err := AppendLine(nil, f, o)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// AppendLine appends the frame as one line of JSON, newline included, to
// dst (see [AppendFrame]). Reuse dst across frames to avoid allocation.
func AppendLine(dst []byte, f *report.Frame, o Options) ([]byte, error) {
	b, err := AppendFrame(dst, f, o)
	if err != nil {
		return b, err
	}
	return append(b, '\n'), nil
}

// lineGuess is about how long the line of a frame of size bytes decoded
// into t is: five bytes of line per byte of the frame and of its inflated
// batches (their hex, the value hex of the fields over them, and the
// body's) and 320 per node of t and of its inflated batches' trees. Over
// the benchmark corpus no line is longer (records frames come closest:
// 5.0 bytes a byte and 400 a node), and over the proxy's frames of
// compressed batches in bench/proxybench (lines 80 times their frame)
// it overshoots by less than half.
func lineGuess(t *span.Tree, size int) int64 {
	rows := 0
	if t != nil {
		inflated, nodes := t.DetachedSize()
		size += inflated
		rows = t.Len() + nodes
	}
	return 5*int64(size) + 320*int64(rows)
}

// LineSize is about how long the line of f is: rather more than less
// (see lineGuess), for a caller deciding whether to write it in pieces
// (Options.Spill) rather than whole.
func LineSize(f *report.Frame) int64 { return lineGuess(f.SpanTree(), len(f.Bytes)) }

// AppendFrame appends the frame as one JSON object (no newline) to dst:
// the fields of [report.Frame] under their JSON names, in their order,
// then the tree of [report.Frame.SpanTree] ("tree", null when the header
// did not decode), and "output_truncated" when the frame's output budget
// cut the tree. A header fact that is not known ([report.Frame.Known]: a
// response whose request was not captured, a header cut short, a key the
// spec does not have) is left out: "api_key", "version", "correlation_id",
// "header_version". A lean frame's hex and body
// are made here from its bytes and its decoded body. On error dst is
// returned unchanged.
func AppendFrame(dst []byte, f *report.Frame, o Options) ([]byte, error) {
	start := len(dst)
	b := append(dst, `{"index":`...)
	if o.Continue {
		b[start] = ','
	}
	b = strconv.AppendInt(b, int64(f.Index), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, f.Offset, 10)
	b = append(b, `,"kind":`...)
	b = appendString(b, f.Kind)
	if f.Known(report.FactAPIKey) {
		b = append(b, `,"api_key":`...)
		b = strconv.AppendInt(b, int64(f.APIKey), 10)
	}
	if f.API != "" {
		b = appendString(append(b, `,"api":`...), f.API)
	}
	if f.Known(report.FactVersion) {
		b = strconv.AppendInt(append(b, `,"version":`...), int64(f.Version), 10)
	}
	if f.RequestVersion != nil {
		b = strconv.AppendInt(append(b, `,"request_version":`...), int64(*f.RequestVersion), 10)
	}
	if f.Known(report.FactCorrelationID) {
		b = strconv.AppendInt(append(b, `,"correlation_id":`...), int64(f.CorrelationID), 10)
	}
	if f.ClientID != nil {
		b = appendString(append(b, `,"client_id":`...), *f.ClientID)
	}
	b = strconv.AppendInt(append(b, `,"size":`...), int64(f.Size), 10)
	if f.Known(report.FactHeaderVersion) {
		b = strconv.AppendInt(append(b, `,"header_version":`...), int64(f.HeaderVersion), 10)
	}
	if len(f.HeaderTags) > 0 {
		b = append(b, `,"header_tags":[`...)
		for i, t := range f.HeaderTags {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendUint(append(b, `{"tag":`...), uint64(t.Tag), 10)
			b = append(appendString(append(b, `,"data":`...), t.Data), '}')
		}
		b = append(b, ']')
	}
	if f.Time != nil {
		if y := f.Time.Year(); y < 0 || y > 9999 {
			return dst[:start], errors.New("jsonr: Frame.Time year outside of range [0,9999]")
		}
		b = append(b, `,"time":"`...)
		b = append(f.Time.AppendFormat(b, time.RFC3339Nano), '"')
	}
	if f.Src != "" {
		b = appendString(append(b, `,"src":`...), f.Src)
	}
	if f.Dst != "" {
		b = appendString(append(b, `,"dst":`...), f.Dst)
	}
	if f.TLS != "" {
		b = appendString(append(b, `,"tls":`...), f.TLS)
	}
	if f.LatencyMicros != nil {
		b = strconv.AppendInt(append(b, `,"latency_us":`...), *f.LatencyMicros, 10)
	}
	if f.Skipped != 0 {
		b = strconv.AppendInt(append(b, `,"skipped":`...), f.Skipped, 10)
	}
	if f.Lost != 0 {
		b = strconv.AppendInt(append(b, `,"lost":`...), f.Lost, 10)
	}
	if f.Error != "" {
		b = appendString(append(b, `,"error":`...), f.Error)
	}
	if f.ErrorOffset != nil {
		b = strconv.AppendInt(append(b, `,"error_offset":`...), int64(*f.ErrorOffset), 10)
	}
	if f.ErrorPath != "" {
		b = appendString(append(b, `,"error_path":`...), f.ErrorPath)
	}
	if len(f.AlsoDecodesAs) > 0 {
		b = append(b, `,"also_decodes_as":[`...)
		for i, v := range f.AlsoDecodesAs {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(v), 10)
		}
		b = append(b, ']')
	}
	if f.Warning != "" {
		b = appendString(append(b, `,"warning":`...), f.Warning)
	}
	if f.Note != "" {
		b = appendString(append(b, `,"note":`...), f.Note)
	}
	if g := f.Gap; g != nil {
		b = strconv.AppendInt(append(b, `,"gap":{"offset":`...), g.Offset, 10)
		b = strconv.AppendInt(append(b, `,"size":`...), g.Size, 10)
		b = strconv.AppendInt(append(b, `,"frame_size":`...), g.FrameSize, 10)
		b = strconv.AppendInt(append(b, `,"captured":`...), int64(g.Captured), 10)
		if g.AtEnd {
			b = append(b, `,"at_end":true`...)
		}
		b = append(b, '}')
	}
	if len(f.Candidates) > 0 {
		b = appendCandidates(append(b, `,"candidates":`...), f.Candidates)
	}
	if f.CandidatesIncomplete {
		b = append(b, `,"candidates_incomplete":true`...)
	}
	if len(f.AsResponse) > 0 {
		b = appendCandidates(append(b, `,"as_response":`...), f.AsResponse)
	}
	if f.Roundtrip != nil {
		b = strconv.AppendBool(append(b, `,"roundtrip":`...), *f.Roundtrip)
	}
	if d := f.RoundtripDiff; d != nil {
		b = strconv.AppendInt(append(b, `,"roundtrip_diff":{"offset":`...), int64(d.Offset), 10)
		if d.Field != "" {
			b = appendString(append(b, `,"field":`...), d.Field)
		}
		b = strconv.AppendInt(append(b, `,"input":`...), int64(d.Input), 10)
		b = strconv.AppendInt(append(b, `,"encoded":`...), int64(d.Encoded), 10)
		b = strconv.AppendInt(append(b, `,"input_size":`...), int64(d.InputSize), 10)
		b = strconv.AppendInt(append(b, `,"encoded_size":`...), int64(d.EncodedSize), 10)
		if d.Reason != "" {
			b = appendString(append(b, `,"reason":`...), d.Reason)
		}
		b = append(b, '}')
	}
	if f.Budget != "" {
		b = appendString(append(b, `,"budget":`...), f.Budget)
	}
	leanHex := f.Lean() && f.Hex == ""
	t := f.SpanTree()
	// Room for the rest of the line is made once (within the output
	// budget) rather than by growing the line node by node: the body,
	// the frame's hex, the tree's values (the bytes fields and the
	// records in them) and the nodes' JSON.
	bud := f.RenderBudget()
	room := min(lineGuess(t, len(f.Bytes)), bud.OutputRoom()+int64(2*len(f.Bytes)))
	if sp := o.Spill; sp != nil {
		// The fields and the body are made whole (their bytes' hex
		// twice), then pieces of about At.
		room = min(room, int64(4*len(f.Bytes)+sp.At+64<<10))
	}
	b = hexout.Reserve(b, int(room))
	// A lean frame's hex is made first, in a buffer of its own (not in
	// the line, whose bytes may leave in pieces): the body's bytes and
	// records values, the line's "hex" and the tree's values copy theirs
	// from it.
	var fh *frameHex
	if leanHex && t != nil && sameBytes(t.Bytes, f.Bytes) {
		fh = newFrameHex(t.Bytes)
		defer fh.release()
	}
	bodyAt := len(b)
	if f.BodyPending() {
		// The body is written from the tree (which a decode without
		// Values has alone).
		var hx []byte
		if fh != nil {
			hx = *fh.hex
		}
		// jsonvalue writes compact JSON with encoding/json's escaping.
		var nb []byte
		var err error
		if body := t.Body(); body != span.None {
			nb, err = jsonvalue.AppendTree(append(b, `,"body":`...), t, body, f.Decoded.Message(), f.Decoded.Version, hx)
		} else { // a frame decoded without spans
			nb, err = jsonvalue.AppendMarshal(append(b, `,"body":`...), f.Decoded.Message(), f.Decoded.Version, &f.Decoded.Body)
		}
		if err == nil {
			b = nb
		}
	} else if len(f.Body) > 0 {
		b = append(b, `,"body":`...)
		var err error
		if b, err = appendRaw(b, f.Body); err != nil {
			return dst[:start], err
		}
	}
	// A body that would pass the output budget is left out (the hex
	// has its bytes, and "output_truncated" says so): its JSON may be six
	// times its bytes (a string of control characters).
	cutBody := 0
	if int64(len(b)-start) > bud.OutputRoom() && len(b) > bodyAt {
		cutBody = len(b) - bodyAt - len(`,"body":`)
		b = b[:bodyAt]
	}
	b = append(b, `,"hex":"`...)
	// The tree is cut where the frame's output budget runs out; the
	// answer stays valid JSON and says so in "output_truncated".
	w := treeWriter{b: b, about: o.About, spill: o.Spill}
	w.limit = start + int(min(bud.OutputRoom(), math.MaxInt32))
	switch {
	case fh != nil:
		if w.spill != nil && len(*fh.hex) >= w.spill.At {
			w.spillNow()
			w.put(*fh.hex)
		} else {
			w.b = append(w.b, *fh.hex...)
		}
	case leanHex: // bytes the tree is not over (or no tree)
		w.b = hexout.AppendEncode(w.b, f.Bytes)
	default:
		w.b = appendStringBody(w.b, f.Hex)
	}
	w.b = append(w.b, `","tree":`...)
	if t != nil && t.Root() != span.None {
		if fh != nil {
			w.hexTree, w.hex = t, *fh.hex
		}
		w.tree(t, t.Root())
	} else {
		w.b = append(w.b, "null"...)
	}
	if cutBody > 0 || w.cutNodes > 0 || w.cutTrees > 0 || w.cutValues > 0 {
		var parts []string
		if cutBody > 0 {
			parts = append(parts, "the body ("+english.Count(cutBody, "byte")+" of JSON; \"hex\" has its bytes)")
		}
		if w.cutNodes > 0 {
			parts = append(parts, english.Count(w.cutNodes, "tree node"))
		}
		if w.cutTrees > 0 {
			parts = append(parts, english.Count(w.cutTrees, "decompressed records tree"))
		}
		if w.cutValues > 0 {
			parts = append(parts, english.Count(w.cutValues, "long value")+" (their \"value\"; \"text\" shows how they start)")
		}
		w.b = appendString(append(w.b, `,"output_truncated":`...), report.OutputSpent(bud, strings.Join(parts, ", ")))
	}
	bud.AddOutput(w.at(w.b) - start)
	return append(w.b, '}'), w.err
}

// appendRaw appends a JSON value as encoding/json appends a
// json.RawMessage: compacted, with <, >, &, U+2028 and U+2029 escaped.
// Bodies from package jsonvalue already are (it writes no spaces and
// escapes strings with encoding/json), which one scan confirms; anything
// else goes through encoding/json's own compaction and escaping. raw must
// be valid JSON, as report.Decode writes it (encoding/json would refuse
// an invalid one; the fast path does not check).
func appendRaw(dst, raw []byte) ([]byte, error) {
	if rawIsClean(raw) {
		return append(dst, raw...), nil
	}
	var c bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		return dst, err
	}
	var e bytes.Buffer
	json.HTMLEscape(&e, c.Bytes())
	return append(dst, e.Bytes()...), nil
}

// rawIsClean reports whether raw has no whitespace outside strings and no
// character that encoding/json escapes in a raw message. Strings (long hex
// in bodies) are skipped with IndexByte.
func rawIsClean(raw []byte) bool {
	if bytes.IndexByte(raw, '<') >= 0 || bytes.IndexByte(raw, '>') >= 0 || bytes.IndexByte(raw, '&') >= 0 {
		return false
	}
	for i := 0; ; {
		j := bytes.IndexByte(raw[i:], 0xE2)
		if j < 0 {
			break
		}
		i += j
		if i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8 {
			return false
		}
		i++
	}
	for i := 0; i < len(raw); {
		q := bytes.IndexByte(raw[i:], '"')
		end := len(raw)
		if q >= 0 {
			end = i + q
		}
		for _, c := range raw[i:end] {
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				return false
			}
		}
		if q < 0 {
			return true
		}
		// Inside a string: find the quote that closes it (one preceded by
		// an even number of backslashes).
		j := end + 1
		for {
			k := bytes.IndexByte(raw[j:], '"')
			if k < 0 {
				return false
			}
			j += k
			n := 0
			for n < j && raw[j-1-n] == '\\' {
				n++
			}
			j++
			if n%2 == 0 {
				break
			}
		}
		i = j
	}
	return true
}

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// appendCandidates writes a list of report.Candidate as encoding/json does.
func appendCandidates(b []byte, cands []report.Candidate) []byte {
	b = append(b, '[')
	for i, c := range cands {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(b, `{"api_key":`...), int64(c.APIKey), 10)
		b = appendString(append(b, `,"name":`...), c.Name)
		b = append(strconv.AppendInt(append(b, `,"version":`...), int64(c.Version), 10), '}')
	}
	return append(b, ']')
}
