package report

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/manifester/manifester/internal/jsonvalue"
	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/span"
)

// JSONOptions control [AppendJSON].
type JSONOptions struct {
	// About includes each tree node's description ("about"), which is
	// schema data repeated in every frame; off by default.
	About bool
}

// JSONLine writes the frame as one JSON object on one line (see
// [AppendJSON]), without the tree nodes' descriptions.
func JSONLine(w io.Writer, f *Frame) error {
	return JSONLineOpts(w, f, JSONOptions{})
}

// JSONLineOpts is [JSONLine] with options.
func JSONLineOpts(w io.Writer, f *Frame, o JSONOptions) error {
	b, err := AppendJSON(nil, f, o)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// AppendJSON appends the frame as one line of JSON, newline included, to
// dst. The line is what encoding/json makes of the [Frame] (same keys, same
// order, same escaping, HTML characters and invalid UTF-8 included), except
// that tree nodes carry "about" only with o.About, and that a frame whose
// API is unknown (Frame.APIUnknown) has no "api_key", "version" and
// "header_version". It is written straight
// from the span tree (Frame.Decoded.Root): no [page.Node]s, no reflection,
// and each node's path is built incrementally in one buffer. Reuse dst
// across frames to avoid allocation.
func AppendJSON(dst []byte, f *Frame, o JSONOptions) ([]byte, error) {
	start := len(dst)
	w := jsonWriter{b: dst, about: o.About}
	b := append(w.b, `{"index":`...)
	b = strconv.AppendInt(b, int64(f.Index), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, f.Offset, 10)
	b = append(b, `,"kind":`...)
	b = appendString(b, f.Kind)
	if !f.APIUnknown {
		b = append(b, `,"api_key":`...)
		b = strconv.AppendInt(b, int64(f.APIKey), 10)
	}
	if f.API != "" {
		b = appendString(append(b, `,"api":`...), f.API)
	}
	if !f.APIUnknown {
		b = strconv.AppendInt(append(b, `,"version":`...), int64(f.Version), 10)
	}
	b = strconv.AppendInt(append(b, `,"correlation_id":`...), int64(f.CorrelationID), 10)
	if f.ClientID != nil {
		b = appendString(append(b, `,"client_id":`...), *f.ClientID)
	}
	b = strconv.AppendInt(append(b, `,"size":`...), int64(f.Size), 10)
	if !f.APIUnknown {
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
			return dst[:start], errors.New("report: Frame.Time year outside of range [0,9999]")
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
		b = append(b, `,"candidates":[`...)
		for i, c := range f.Candidates {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(append(b, `{"api_key":`...), int64(c.APIKey), 10)
			b = appendString(append(b, `,"name":`...), c.Name)
			b = append(strconv.AppendInt(append(b, `,"version":`...), int64(c.Version), 10), '}')
		}
		b = append(b, ']')
	}
	if f.CandidatesIncomplete {
		b = append(b, `,"candidates_incomplete":true`...)
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
	if f.leanBody && len(f.Body) == 0 && f.Decoded != nil {
		// jsonvalue writes compact JSON with encoding/json's escaping.
		if nb, err := jsonvalue.AppendMarshal(append(b, `,"body":`...), f.Decoded.Message(), f.Decoded.Version, &f.Decoded.Body); err == nil {
			b = nb
		}
	} else if len(f.Body) > 0 {
		b = append(b, `,"body":`...)
		var err error
		if b, err = appendRaw(b, f.Body); err != nil {
			return dst[:start], err
		}
	}
	b = append(b, `,"hex":"`...)
	if f.lean && f.Hex == "" {
		b = hex.AppendEncode(b, f.Bytes)
	} else {
		b = appendStringBody(b, f.Hex)
	}
	b = append(b, `","tree":`...)
	// The tree is cut where the frame's output budget runs out; the
	// answer stays valid JSON and says so in "output_truncated".
	bud := f.renderBudget()
	w.limit = start + int(min(bud.OutputRoom(), math.MaxInt32))
	w.b = b
	switch {
	case f.Decoded != nil && f.Decoded.Root != nil && (f.Tree != nil || f.lean):
		w.spanTree(f.Decoded.Root)
	case f.Tree != nil:
		w.pageNode(f.Tree)
	default:
		w.b = append(w.b, "null"...)
	}
	if w.cutNodes > 0 || w.cutTrees > 0 || w.cutValues > 0 {
		var parts []string
		if w.cutNodes > 0 {
			parts = append(parts, plural(w.cutNodes, "tree node"))
		}
		if w.cutTrees > 0 {
			parts = append(parts, plural(w.cutTrees, "decompressed records tree"))
		}
		if w.cutValues > 0 {
			parts = append(parts, plural(w.cutValues, "long value")+" (their \"value\"; \"text\" shows how they start)")
		}
		what := strings.Join(parts, ", ")
		w.b = appendString(append(w.b, `,"output_truncated":`...), outputSpent(bud, what))
	}
	bud.AddOutput(len(w.b) - start)
	return append(w.b, '}', '\n'), nil
}

// jsonWriter writes tree nodes. path holds the escaped path of the node
// being written; it grows and shrinks as the walk goes down and up.
type jsonWriter struct {
	b       []byte
	path    []byte
	scratch []byte
	about   bool
	// limit is the length of b past which no more nodes are written;
	// cutNodes and cutTrees count what was left out.
	limit                         int
	cutNodes, cutTrees, cutValues int
}

// full reports whether the output budget is spent.
func (w *jsonWriter) full() bool { return w.limit > 0 && len(w.b) >= w.limit }

// spanTree writes the tree under n, as page.FromSpan and encoding/json
// would.
func (w *jsonWriter) spanTree(n *span.Node) {
	w.path = appendStringBody(w.path[:0], n.Path())
	w.spanNode(n, -1)
}

// spanNode writes n, whose escaped path is in w.path. When nameAt >= 0,
// w.path[nameAt:] is n's escaped display name (its last path segment).
func (w *jsonWriter) spanNode(n *span.Node, nameAt int) {
	b := append(w.b, `{"name":"`...)
	if nameAt >= 0 {
		b = append(b, w.path[nameAt:]...)
	} else {
		b = appendStringBody(b, n.Name)
		if n.Index >= 0 {
			b = append(strconv.AppendInt(append(b, '['), int64(n.Index), 10), ']')
		}
	}
	b = append(b, `","path":"`...)
	b = append(b, w.path...)
	b = append(b, '"')
	if n.Type != "" {
		b = appendString(append(b, `,"type":`...), n.Type)
	}
	if n.Val != span.ValNone {
		// Format in place; escape (through scratch) only when needed.
		at := len(b)
		b = n.AppendValueText(append(b, `,"text":"`...))
		v := b[at+len(`,"text":"`):]
		switch {
		case len(v) == 0:
			b = b[:at]
		case needsEscape(v):
			w.scratch = append(w.scratch[:0], v...)
			b = append(appendStringBody(b[:len(b)-len(v)], w.scratch), '"')
		default:
			b = append(b, '"')
		}
		at = len(b)
		if w.limit > 0 && (n.Val == span.ValBytes || n.Val == span.ValString) && len(b)+2*len(n.Bytes)+32 > w.limit {
			// A value that would pass the output budget (the hex of
			// inflated megabytes) is left out; "text" shows its start.
			w.cutValues++
		} else if nb, ok := n.AppendValueJSON(append(b, `,"value":`...)); ok {
			b = nb
		} else {
			b = b[:at]
		}
	}
	if n.Val == span.ValText && len(n.Bytes) > 0 {
		// the text is the value; its bytes are kept as hex
		b = append(hex.AppendEncode(append(b, `,"hex":"`...), n.Bytes), '"')
	}
	b = strconv.AppendInt(append(b, `,"offset":`...), int64(n.Off), 10)
	b = strconv.AppendInt(append(b, `,"size":`...), int64(n.Len), 10)
	if n.Cat != span.CatNone {
		b = append(append(append(b, `,"category":"`...), n.Cat.String()...), '"')
	}
	if w.about && n.About != "" {
		b = appendString(append(b, `,"about":`...), n.About)
	}
	if n.Flag != "" {
		b = appendString(append(b, `,"flag":`...), n.Flag)
	}
	if n.Err != nil {
		if msg := n.Err.Error(); msg != "" {
			b = appendString(append(b, `,"error":`...), msg)
		}
	}
	if len(n.Kids) > 0 {
		b = append(b, `,"children":[`...)
		w.b = b
		// Children's paths: this node's path, a dot, their own name; the
		// root's children start afresh (the root is not in paths).
		base := len(w.path)
		for i, k := range n.Kids {
			if w.full() {
				for _, r := range n.Kids[i:] {
					w.cutNodes += int(spanCount(r, math.MaxInt64))
				}
				break
			}
			if i > 0 {
				w.b = append(w.b, ',')
			}
			if k.Parent != n {
				// Not linked as the walk found it: ask the node itself.
				saved := append([]byte(nil), w.path[:base]...)
				w.path = appendStringBody(w.path[:0], k.Path())
				w.spanNode(k, -1)
				w.path = append(w.path[:0], saved...)
				continue
			}
			w.path = w.path[:base]
			if n.Parent != nil {
				w.path = append(w.path, '.')
			}
			nameAt := len(w.path)
			w.path = appendStringBody(w.path, k.Name)
			if k.Index >= 0 {
				w.path = append(strconv.AppendInt(append(w.path, '['), int64(k.Index), 10), ']')
			}
			w.spanNode(k, nameAt)
		}
		w.path = w.path[:base]
		b = append(w.b, ']')
	}
	if n.Detached != nil && w.full() {
		w.cutTrees++
	} else if n.Detached != nil {
		w.b = append(b, `,"detached":`...)
		saved := append([]byte(nil), w.path...)
		w.spanTree(n.Detached)
		w.path = append(w.path[:0], saved...)
		b = w.b
	}
	w.b = append(b, '}')
}

// pageNode writes a page node tree (for frames whose Tree was set by
// hand, without a span tree behind it).
func (w *jsonWriter) pageNode(n *page.Node) {
	b := appendString(append(w.b, `{"name":`...), n.Name)
	b = appendString(append(b, `,"path":`...), n.Path)
	if n.Type != "" {
		b = appendString(append(b, `,"type":`...), n.Type)
	}
	if n.Value != "" {
		b = appendString(append(b, `,"text":`...), n.Value)
	}
	if len(n.Typed) > 0 && w.limit > 0 && len(b)+len(n.Typed) > w.limit {
		w.cutValues++
	} else if len(n.Typed) > 0 {
		b = append(append(b, `,"value":`...), n.Typed...)
	}
	if n.Hex != "" {
		b = appendString(append(b, `,"hex":`...), n.Hex)
	}
	b = strconv.AppendInt(append(b, `,"offset":`...), int64(n.Offset), 10)
	b = strconv.AppendInt(append(b, `,"size":`...), int64(n.Size), 10)
	if n.Category != "" {
		b = appendString(append(b, `,"category":`...), n.Category)
	}
	if w.about && n.About != "" {
		b = appendString(append(b, `,"about":`...), n.About)
	}
	if n.Flag != "" {
		b = appendString(append(b, `,"flag":`...), n.Flag)
	}
	if n.Error != "" {
		b = appendString(append(b, `,"error":`...), n.Error)
	}
	if len(n.Children) > 0 {
		w.b = append(b, `,"children":[`...)
		for i, k := range n.Children {
			if w.full() {
				for _, r := range n.Children[i:] {
					w.cutNodes += countPage(r)
				}
				break
			}
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.pageNode(k)
		}
		b = append(w.b, ']')
	}
	if n.Detached != nil && w.full() {
		w.cutTrees++
	} else if n.Detached != nil {
		w.b = append(b, `,"detached":`...)
		w.pageNode(n.Detached)
		b = w.b
	}
	w.b = append(b, '}')
}

// appendRaw appends a JSON value as encoding/json appends a
// json.RawMessage: compacted, with <, >, &, U+2028 and U+2029 escaped.
// Bodies from package jsonvalue already are (it writes no spaces and
// escapes strings with encoding/json), which one scan confirms; anything
// else goes through encoding/json's own compaction and escaping. raw must
// be valid JSON, as [Decode] writes it (encoding/json would refuse an
// invalid one; the fast path does not check).
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

// needsEscape reports whether appendStringBody would change b.
func needsEscape(b []byte) bool { return span.NeedsJSONEscape(b) }

// appendString appends s as a JSON string, quotes included.
func appendString[T []byte | string](dst []byte, s T) []byte {
	return append(appendStringBody(append(dst, '"'), s), '"')
}

// appendStringBody appends s escaped as encoding/json escapes strings,
// without the quotes (span.AppendJSONStringBody).
func appendStringBody[T []byte | string](dst []byte, s T) []byte {
	return span.AppendJSONStringBody(dst, s)
}
