// Package report is the per-frame account that every decoding front end
// prints: `manifester decode` for hex and files, `decode --pcap` for
// captures, the proxy's log and the site's /decode page.
//
// [Decode] decodes one frame into a [Frame]: what the frame is (kind, API,
// version, correlation id, sizes), its annotated tree, its body as JSON,
// the error (with byte offset and field path) when it does not decode,
// the versions of the same API that would decode it cleanly, and, on
// request, whether re-encoding reproduces the input byte for byte ([Check]).
// Package render/text renders a Frame for a terminal; package
// render/jsonr writes it as JSON. Report renders nothing.
package report

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/frames"
	"github.com/manifester/manifester/internal/jsonvalue"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

// Frame is the report of one decoded (or undecodable) frame. Its JSON form
// is one line of `decode --format json` output; the field names are a
// published format.
type Frame struct {
	// Index is the frame's position in its stream, from 0.
	Index int `json:"index"`
	// Offset is where the frame starts in its input stream.
	Offset int64 `json:"offset"`
	// Kind is "request" or "response", or KindEntry for a log segment's
	// entry (DecodeEntry).
	Kind    string `json:"kind"`
	APIKey  int16  `json:"api_key"`
	API     string `json:"api,omitempty"`
	Version int16  `json:"version"`
	// RequestVersion is, for a response read at another version than its
	// request's (an ApiVersions answer read as v0, Kafka's rule: see
	// [Response]), the request's version; nil otherwise.
	RequestVersion *int16 `json:"request_version,omitempty"`
	CorrelationID  int32  `json:"correlation_id"`
	// ClientID is the request header's client id (absent for null).
	ClientID *string `json:"client_id,omitempty"`
	// Size is the frame's size, its int32 size prefix included.
	Size          int   `json:"size"`
	HeaderVersion int16 `json:"header_version"`
	// HeaderTags are the header's tagged fields (none are defined, so all
	// are unknown), kept so that `encode` can reproduce the frame.
	HeaderTags []Tag `json:"header_tags,omitempty"`

	// Capture metadata, set by capture and proxy front ends.
	Time *time.Time `json:"time,omitempty"`
	Src  string     `json:"src,omitempty"`
	Dst  string     `json:"dst,omitempty"`
	// TLS names the TLS session a captured frame was decrypted from
	// ("TLS 1.3 TLS_AES_128_GCM_SHA256").
	TLS string `json:"tls,omitempty"`
	// LatencyMicros is, for a response, the time since its request.
	LatencyMicros *int64 `json:"latency_us,omitempty"`
	// Skipped is how many bytes of the frame's direction were skipped just
	// before it (resynchronising, or not captured); Lost is the part of
	// them that was never captured.
	Skipped int64 `json:"skipped,omitempty"`
	Lost    int64 `json:"lost,omitempty"`

	// Error says why the frame did not decode cleanly; empty when it did.
	Error string `json:"error,omitempty"`
	// ErrorOffset and ErrorPath locate the error, when known.
	ErrorOffset *int   `json:"error_offset,omitempty"`
	ErrorPath   string `json:"error_path,omitempty"`
	// AlsoDecodesAs lists the other versions of the API that decode the
	// frame cleanly, when it does not decode at its own version.
	AlsoDecodesAs []int16 `json:"also_decodes_as,omitempty"`

	// APIUnknown marks a response whose request was not captured (or a
	// frame whose header was not): its API is not known, and Unread holds
	// APIKey, Version and HeaderVersion.
	APIUnknown bool `json:"-"`
	// Unnamed: the frame is APIUnknown because it is a response given
	// without its API and version (see [Unnamed]), not one whose request
	// the capture lost.
	Unnamed bool `json:"-"`
	// Unread holds the header facts that the frame's bytes did not give:
	// those of a frame that ends before them, and the header version when
	// the spec gives none (a request whose key it does not have, or at a
	// version older than its own; a response at a version outside them).
	// Their fields are 0, not known; the summary and the JSON line leave
	// them out.
	Unread HeaderFacts `json:"-"`
	// Warning says why a frame that is not counted as a failure was not
	// (fully) decoded: a request at a version newer than the spec, a
	// response whose request was not captured, a frame cut by a gap in
	// the capture.
	Warning string `json:"warning,omitempty"`
	// Note says how the frame was read when that is not the obvious way
	// (an ApiVersions response read as v0, Kafka's rule).
	Note string `json:"note,omitempty"`
	// Gap, for a frame cut short by a gap in the capture (or by its end),
	// says where the missing bytes are.
	Gap *Gap `json:"gap,omitempty"`
	// Candidates, for a response whose request was not captured, are the
	// (API, version) pairs of the spec whose response schema decodes the
	// frame cleanly and re-encodes it byte for byte, most likely first.
	// CandidatesIncomplete says the search stopped early: at its budget, or
	// with MaxCandidates found ([Frame.CandidatesCapped] tells which).
	Candidates           []Candidate `json:"candidates,omitempty"`
	CandidatesIncomplete bool        `json:"candidates_incomplete,omitempty"`
	// AsResponse, for a request that did not decode (with
	// Options.MaybeResponse), are the APIs and versions whose response
	// schema decodes its bytes cleanly and re-encodes them: it may be a
	// response given as a request.
	AsResponse []Candidate `json:"as_response,omitempty"`

	// Roundtrip, when checked, says whether re-encoding the decoded frame
	// reproduced the input byte for byte; RoundtripDiff says where not.
	Roundtrip     *bool `json:"roundtrip,omitempty"`
	RoundtripDiff *Diff `json:"roundtrip_diff,omitempty"`

	// Budget says which limit of the decode's budget (package budget) was
	// reached and where, when one was: the inflated bytes, the span
	// nodes. What was decoded before it is all shown.
	Budget string `json:"budget,omitempty"`

	// Body is the message body as JSON (see package jsonvalue), when the
	// frame decoded cleanly.
	Body json.RawMessage `json:"body,omitempty"`
	// Hex is the frame's bytes.
	Hex string `json:"hex"`
	// Bytes is the frame as read.
	Bytes []byte `json:"-"`
	// Decoded is the codec's frame (nil when the header did not decode);
	// its Body and Header Values are empty unless Options.Values or
	// Options.Roundtrip asked for them (the tree, SpanTree, is always built).
	Decoded *codec.Frame `json:"-"`
	// Err is the decoding error, for errors.Is.
	Err error `json:"-"`
	// Spans is the annotated tree of a frame that has no codec frame
	// (Decoded nil: a raw SASL token); [Frame.SpanTree] returns it.
	Spans *span.Tree `json:"-"`

	// lean is set by Decode with Options.Lean: Hex was left empty, to be
	// written from Bytes; leanBody says the body is to be written from Decoded.Body.
	lean, leanBody bool
	// entryCut: an entry (KindEntry) the end of its file cut.
	entryCut bool
	// bud is the budget the frame was decoded under; its output limit
	// bounds its renderings (RenderBudget: render/text and render/jsonr).
	// rendered is the output budget of its latest rendering, which
	// records what that rendering left out (OutputCut).
	bud, rendered *budget.Budget
	// searched says the other versions of the frame's API were tried
	// (AlsoDecodesAs holds those that decode it).
	searched bool
	// asResponseCut says the search for AsResponse stopped at its budget.
	asResponseCut bool
}

// SearchedVersions reports whether the other versions of the frame's API
// were tried when it did not decode: not when its decode budget was spent
// or its decoding cancelled (AlsoDecodesAs is then empty, but says nothing).
func (f *Frame) SearchedVersions() bool { return f.searched }

// SearchCut reports whether a search of every response schema on the
// frame (its candidates, or AsResponse) stopped at its budget before
// trying them all.
func (f *Frame) SearchCut() bool { return f.CandidatesIncomplete || f.asResponseCut }

// SpanTree returns the frame's annotated tree, the one every renderer
// reads (nil when the header did not decode).
func (f *Frame) SpanTree() *span.Tree {
	if f.Spans != nil {
		return f.Spans
	}
	if f.Decoded == nil {
		return nil
	}
	return f.Decoded.SpanTree()
}

// hasTree reports whether the frame has an annotated tree.
func (f *Frame) hasTree() bool {
	t := f.SpanTree()
	return t != nil && t.Root() != span.None
}

// Gap locates the bytes a capture lost inside a frame.
type Gap struct {
	// Offset and Size are the missing bytes' position in the direction's
	// byte stream and their number.
	Offset int64 `json:"offset"`
	Size   int64 `json:"size"`
	// FrameSize is the frame's size from its size prefix (-1 when the
	// prefix was not captured); Captured how many of its bytes were
	// captured before the gap (the frame's hex).
	FrameSize int64 `json:"frame_size"`
	Captured  int   `json:"captured"`
	// AtEnd: the frame was cut by the end of the connection or capture.
	AtEnd bool `json:"at_end,omitempty"`
}

// Candidate is an (API, version) whose response schema explains a frame.
type Candidate struct {
	APIKey  int16  `json:"api_key"`
	Name    string `json:"name"`
	Version int16  `json:"version"`
}

// Tag is a raw tagged field: its number and its bytes as hex.
type Tag struct {
	Tag  uint32 `json:"tag"`
	Data string `json:"data"`
}

// Diff is where a re-encoded frame first differs from the input.
type Diff struct {
	// Offset is the first differing byte, from the start of the frame.
	Offset int `json:"offset"`
	// Field is the path of the leaf that covers Offset in the input's tree.
	Field string `json:"field,omitempty"`
	// Input and Encoded are the byte at Offset in each (-1 past the end).
	Input   int `json:"input"`
	Encoded int `json:"encoded"`
	// InputSize and EncodedSize are the two lengths.
	InputSize   int `json:"input_size"`
	EncodedSize int `json:"encoded_size"`
	// Reason explains the difference when it is a known non-canonical
	// encoding ("redundant varint bytes", ...).
	Reason string `json:"reason,omitempty"`
}

// OK reports whether the frame decoded cleanly and, when the round trip
// was checked, reproduced its bytes.
func (f *Frame) OK() bool {
	return f.Error == "" && (f.Roundtrip == nil || *f.Roundtrip)
}

// Options control [Decode].
type Options struct {
	// Kind is schema.TypeRequest (the default when zero) or
	// schema.TypeResponse.
	Kind schema.MessageType
	// API and Version are needed for responses, which do not name them.
	API     *schema.API
	Version int16
	// Roundtrip re-encodes a cleanly decoded frame and compares.
	Roundtrip bool
	// NoAlternatives skips the search for other versions that decode a
	// frame that failed.
	NoAlternatives bool
	// NewerAsWarning makes a request at a version newer than the spec a
	// warning (Frame.Warning, header decoded, body not) rather than an
	// error: clients probe with the newest ApiVersions they know. So is
	// a request whose API key the spec lacks (a newer API). For captures
	// and proxies, where the traffic is what it is.
	NewerAsWarning bool
	// MaybeResponse: that the bytes are a request is the user's word, not
	// the traffic's (hex pasted, where the kind defaults to request). A
	// request that fails to decode, at its version and at every other, is
	// tried as a response of every API, as [Unnamed] does, and
	// Frame.AsResponse names the APIs and versions that explain it.
	MaybeResponse bool
	// LeanSearch gives a search of every response schema (an orphaned
	// response's candidates, a request's [Options.MaybeResponse]) work in
	// proportion to the frame alone, without the allowance every search
	// otherwise starts with: for the frames of one input after its first
	// few searches, so that a flood of small frames that fail costs time
	// in proportion to its bytes (see [Candidates]).
	LeanSearch bool
	// Lean leaves Frame.Hex and Frame.Body empty: the JSON writer (package
	// jsonr) writes them straight from the bytes and the decoded body. For
	// front ends that print each frame once or twice (decode --pcap, the
	// proxy's log and output); it saves a hex copy and a JSON body of every
	// frame, which for a batch of compressed records is a buffer of many
	// times the frame.
	Lean bool
	// Limits set the frame's budget (zero fields: the defaults, which
	// are proportional to the frame's size); Ctx, when set, cancels the
	// decode. Budget, when set, is used instead: a budget shared by
	// several frames (one server request).
	Limits budget.Limits
	Ctx    context.Context
	Budget *budget.Budget
	// Tree, when set, is the span tree to decode into
	// (codec.Options.Tree): a caller decoding many frames reuses its
	// buffers. The frame's SpanTree is then Tree, good until Tree is used
	// for another frame.
	Tree *span.Tree
	// Values keeps the decoded body and header as codec Values
	// (Frame.Decoded.Body and Header), for a caller that reads or
	// re-encodes them. Without it (and without Roundtrip, which
	// re-encodes) the decoder builds the span tree alone, which is faster,
	// and they are empty: the body's JSON and every rendering come from
	// the tree.
	Values bool
}

// HeaderFacts is a set of the facts a frame's header gives.
type HeaderFacts uint8

// The facts of a frame's header, as HeaderFacts.
const (
	FactAPIKey HeaderFacts = 1 << iota
	FactVersion
	FactCorrelationID
	FactHeaderVersion
)

// Known reports whether the frame's bytes gave every fact of h (a
// response's API and version are known when its request, or the caller,
// named them).
func (f *Frame) Known(h HeaderFacts) bool { return f.Unread&h == 0 }

// headerCut reports whether the frame's bytes end before a fact its
// header holds at a fixed offset (a request's key, version or correlation
// id, a response's correlation id).
func (f *Frame) headerCut() bool {
	at := FactCorrelationID
	if f.Kind == "request" {
		at |= FactAPIKey | FactVersion
	}
	return f.Unread&at != 0
}

// unread returns the header facts that b, the first bytes of a frame of
// kind, does not give. A request's key, version and correlation id sit at
// offsets 4, 6 and 8 in every header version, a response's correlation id
// at 4. api is the frame's API when known: a request's, read from its key
// in the spec; a response's, named by its request or the caller, which
// names its version v too. The header version follows from the API and
// the version, for a version the spec has; for a request also for one
// newer than it (the flexible versions are open-ended, and the decoder
// reads the header), not for an older one, which has none.
func unread(kind schema.MessageType, b []byte, api *schema.API, v int16) HeaderFacts {
	var u HeaderFacts
	if kind == schema.TypeResponse {
		if api == nil {
			u |= FactAPIKey | FactVersion
		}
		if len(b) < frames.ResponseHeaderLen {
			u |= FactCorrelationID
		}
	} else {
		if len(b) < 6 {
			u |= FactAPIKey
		}
		if len(b) < 8 {
			u |= FactVersion
		}
		if len(b) < frames.RequestHeaderLen {
			u |= FactCorrelationID
		}
	}
	if api == nil || u&FactVersion != 0 {
		return u | FactHeaderVersion
	}
	m := api.Request
	if kind == schema.TypeResponse {
		m = api.Response
	}
	if !m.Valid.Contains(v) && (kind == schema.TypeResponse || m.Valid.Empty() || v < m.Valid.Hi) {
		u |= FactHeaderVersion
	}
	return u
}

// Decode decodes one frame (size prefix included) and reports on it. It
// never fails: problems are in the report. A response without its API
// (o.API nil) is reported by [Unnamed].
func Decode(c *codec.Codec, b []byte, o Options) *Frame {
	kind := o.Kind
	if kind == 0 {
		kind = schema.TypeRequest
	}
	if kind == schema.TypeResponse && o.API == nil {
		return Unnamed(c, b, o)
	}
	bud := o.Budget
	if bud == nil {
		bud = o.Limits.For(o.Ctx, len(b))
	}
	spentBefore, notInflatedBefore, corruptBefore := len(bud.Spent()), bud.NotInflated, bud.Corrupt
	// The body's JSON is written from the tree: the Values are built only
	// for a caller that re-encodes (the round trip) or asks for them.
	opts := codec.Options{Spans: true, NoValues: !o.Roundtrip && !o.Values, Budget: bud, Tree: o.Tree}
	var (
		f   *codec.Frame
		err error
	)
	if kind == schema.TypeResponse {
		f, err = c.DecodeResponse(b, o.API, o.Version, opts)
	} else {
		f, err = c.DecodeRequest(b, opts)
	}
	r := &Frame{Kind: kind.String(), Size: len(b), Bytes: b, Decoded: f, Err: err, lean: o.Lean, bud: bud}
	r.Budget = budgetNote(bud, spentBefore, notInflatedBefore)
	if !o.Lean {
		r.Hex = hex.EncodeToString(b)
	}
	if f != nil {
		if f.API != nil {
			r.API, r.APIKey = f.API.Name, f.API.Key
		}
		r.Version, r.CorrelationID, r.HeaderVersion = f.Version, f.CorrelationID, f.HeaderVersion
		for _, t := range f.HeaderTags {
			r.HeaderTags = append(r.HeaderTags, Tag{Tag: t.Tag, Data: hex.EncodeToString(t.Data)})
		}
		if kind == schema.TypeRequest && f.HeaderVersion >= 1 && !f.ClientIDNull && (err == nil || f.ClientID != nil) {
			s := string(f.ClientID)
			r.ClientID = &s
		}
	}
	// The facts at fixed offsets, as the bytes give them: the decoder
	// stops before some (a request's correlation id after a version older
	// than the spec's, a response's after a version outside it).
	api := o.API
	if kind == schema.TypeRequest {
		api = nil
		if f != nil {
			api = f.API
		}
		if key, v, corr, ok := codec.PeekRequest(b); ok {
			r.APIKey, r.Version, r.CorrelationID = key, v, corr
		} else {
			if len(b) >= 6 {
				r.APIKey = int16(uint16(b[4])<<8 | uint16(b[5]))
			}
			if len(b) >= 8 {
				r.Version = int16(uint16(b[6])<<8 | uint16(b[7]))
			}
		}
		// A decoder stopped before the header (a negative size prefix)
		// read no key: the bytes' key still names its API.
		if r.API == "" && len(b) >= 6 {
			if a, ok := c.Reg.API(r.APIKey); ok {
				r.API = a.Name
			}
		}
	} else {
		if api != nil {
			// The header version follows from the API and version given
			// (the decoder stops before the header at a negative size).
			r.APIKey, r.Version, r.HeaderVersion = api.Key, o.Version, api.Response.HeaderVersion(o.Version)
		}
		if corr, ok := codec.PeekCorrelationID(b); ok {
			r.CorrelationID = corr
		}
	}
	r.Unread = unread(kind, b, api, r.Version)
	if err != nil {
		r.setError(err)
		if !o.NoAlternatives && !errors.Is(err, budget.ErrSpent) && (o.Ctx == nil || o.Ctx.Err() == nil) {
			r.AlsoDecodesAs, r.searched = alternatives(c, b, kind, f, o, bud)
			if o.MaybeResponse && kind == schema.TypeRequest && len(r.AlsoDecodesAs) == 0 {
				r.AsResponse, r.asResponseCut, _ = candidates(c, b, nil, o.LeanSearch)
			}
		}
		if o.NewerAsWarning && unknownKeyRequest(kind, b, err) {
			r.APIKey, r.Version, r.CorrelationID, _ = codec.PeekRequest(b)
			r.ClientID = frames.PeekClientID(b)
			r.Warning = fmt.Sprintf("API key %d is not in this spec (a client newer than the spec?); not decoded", r.APIKey)
			r.Error, r.ErrorOffset, r.ErrorPath, r.AlsoDecodesAs = "", nil, "", nil
			return r
		}
		if o.NewerAsWarning && newerRequest(f, err) {
			r.Warning = newerWarning(f.API, f.Version)
			r.Error, r.ErrorOffset, r.ErrorPath, r.AlsoDecodesAs = "", nil, "", nil
			return r
		}
		if f != nil && f.API != nil && f.API.Key == apiVersionsKey && f.Version > f.API.Request.Valid.Hi && errors.Is(err, wire.ErrVersion) {
			r.Error += "; clients send the newest ApiVersions version they know, and a broker that does not know it answers with a v0 response carrying UNSUPPORTED_VERSION (35) and its own version ranges"
		}
		return r
	}
	if n := bud.Corrupt - corruptBefore; n > 0 {
		// Flagged on their nodes only, which a summary does not show.
		r.Warning = corruptWarning(n, bud.CorruptNote(corruptBefore))
	}
	if o.Lean {
		r.leanBody = true
	} else if t := f.SpanTree(); t != nil {
		if js, jerr := jsonvalue.AppendTree(nil, t, t.Body(), f.Message(), f.Version, nil); jerr == nil {
			r.Body = js
		}
	}
	if o.Roundtrip {
		ok, d := Check(c, f, b)
		r.Roundtrip, r.RoundtripDiff = &ok, d
	}
	return r
}

// corruptWarning is the warning of a frame that decoded but holds n
// compressed batches whose data does not inflate, or whose inflated
// records do not decode; first says which and why of the first.
func corruptWarning(n int, first string) string {
	return english.Count(n, "compressed batch") + " did not inflate or decode (the frame is well-formed; a broker refuses such a batch with CORRUPT_MESSAGE); the first: " + first
}

// setError sets the report's Error to err's text and, when err is a
// *wire.DecodeError, its ErrorOffset and ErrorPath.
func (f *Frame) setError(err error) {
	f.Error = err.Error()
	var de *wire.DecodeError
	if errors.As(err, &de) {
		off := de.Offset
		f.ErrorOffset, f.ErrorPath = &off, de.Path
	}
}

// apiVersionsKey is the key of ApiVersions, whose requests clients send at
// versions newer than the broker (or spec) may know.
const apiVersionsKey = 18

// alternatives returns the versions of the frame's API, other than the one
// tried, at which the frame decodes cleanly, and whether they were tried
// (not without an API, or for a frame shorter than a header).
func alternatives(c *codec.Codec, b []byte, kind schema.MessageType, f *codec.Frame, o Options, bud *budget.Budget) ([]int16, bool) {
	var api *schema.API
	var tried int16
	if kind == schema.TypeResponse {
		api, tried = o.API, o.Version
	} else if f != nil && f.API != nil {
		api, tried = f.API, f.Version
	}
	if api == nil || api.Reserved() || len(b) < 8 {
		return nil, false
	}
	var out []int16
	var patched []byte
	if kind == schema.TypeRequest {
		patched = append([]byte(nil), b...)
	}
	m := api.Request
	if kind == schema.TypeResponse {
		m = api.Response
	}
	for v := m.Valid.Lo; v <= m.Valid.Hi && v >= m.Valid.Lo; v++ {
		if v == tried {
			continue
		}
		var err error
		if kind == schema.TypeRequest {
			patched[6], patched[7] = byte(uint16(v)>>8), byte(v)
			_, err = c.DecodeRequest(patched, codec.Options{Budget: bud})
		} else {
			_, err = c.DecodeResponse(b, api, v, codec.Options{Budget: bud})
		}
		if err == nil {
			out = append(out, v)
		}
		if v == schema.MaxVersion {
			break
		}
	}
	return out, true
}

// Check re-encodes a cleanly decoded frame and compares the bytes with in.
// When they differ it returns where, flags the input's leaf that covers the
// first difference ("non-canonical") and explains the difference when it
// can.
func Check(c *codec.Codec, f *codec.Frame, in []byte) (bool, *Diff) {
	var out []byte
	var err error
	if f.Kind == schema.TypeResponse {
		out, err = c.EncodeResponse(nil, f)
	} else {
		out, err = c.EncodeRequest(nil, f)
	}
	if err != nil {
		return false, &Diff{Offset: 0, Input: byteAt(in, 0), Encoded: -1, InputSize: len(in), Reason: "re-encoding failed: " + err.Error()}
	}
	i := 0
	for i < len(in) && i < len(out) && in[i] == out[i] {
		i++
	}
	if i == len(in) && i == len(out) {
		return true, nil
	}
	d := &Diff{Offset: i, Input: byteAt(in, i), Encoded: byteAt(out, i), InputSize: len(in), EncodedSize: len(out)}
	// The size prefix differs whenever the body's length does; look at the
	// first difference after it, which is the cause.
	if i < 4 && len(in) >= 4 && len(out) >= 4 {
		j := 4
		for j < len(in) && j < len(out) && in[j] == out[j] {
			j++
		}
		if j < len(in) || j < len(out) {
			d.Offset, d.Input, d.Encoded = j, byteAt(in, j), byteAt(out, j)
		}
	}
	if t := f.SpanTree(); t != nil {
		if leaf := LeafAt(t, d.Offset); leaf != span.None {
			d.Field = t.Path(leaf)
			d.Reason = explain(t, leaf, in, out, d.Offset)
			if a := t.Extra(leaf, true); a.Flag == "" {
				a.Flag = "non-canonical"
			}
		}
	}
	return false, d
}

func byteAt(b []byte, i int) int {
	if i < len(b) {
		return int(b[i])
	}
	return -1
}

// LeafAt returns the leaf of the tree whose bytes cover offset off
// (span.None when none does).
func LeafAt(t *span.Tree, off int) span.ID {
	if t.Root() == span.None {
		return span.None
	}
	return t.LeafAt(t.Root(), off)
}

// explain names a known non-canonical encoding at the leaf. What the
// leaf is comes from its row and descriptor, never from its type text.
func explain(t *span.Tree, leaf span.ID, in, out []byte, off int) string {
	n := t.N(leaf)
	raw := in[min(int(n.Off), len(in)):min(int(n.Off+n.Len), len(in))]
	isVarint := t.Varint(leaf)
	name := t.Name(leaf)
	parent := n.Parent
	switch {
	case isVarint && varintWide(raw):
		return fmt.Sprintf("varint %s carries bits beyond 32, which Kafka's reader drops", name)
	case isVarint && redundantVarint(raw):
		return fmt.Sprintf("redundant varint bytes: %s is %d bytes where %d suffice", name, varintLen(raw), minimalLen(raw))
	case n.Val == span.ValBool && len(raw) == 1 && raw[0] > 1:
		return fmt.Sprintf("bool written as 0x%02x; it reads as true and re-encodes as 0x01", raw[0])
	case n.Val == span.ValPresence && len(raw) == 1 && raw[0] != 0xff && raw[0] != 1:
		return fmt.Sprintf("nullable-struct marker 0x%02x; it reads as %s and re-encodes as 0x%02x", raw[0], map[bool]string{true: "null", false: "present"}[int8(raw[0]) < 0], byteAt(out, off))
	case n.Cat == span.CatTagged || (parent != span.None && t.N(parent).Cat == span.CatTagged):
		if n.Cat == span.CatTagged && t.Desc(leaf).Field == nil && (n.Val == span.ValInt || n.Val == span.ValCount) {
			// The section's count, or a field's tag or size.
			return "tagged field that holds its default value (writers omit it), or tagged fields in a different order"
		}
		return "tagged section differs"
	case n.Cat == span.CatFrame && n.Off == 0 && n.Val == span.ValInt:
		return "the size prefix disagrees with the re-encoded frame"
	}
	for p := parent; p != span.None; p = t.N(p).Parent {
		// A tagged field's entry (a group under the section, which holds
		// the count as its value).
		if pn := t.N(p); pn.Cat == span.CatTagged && pn.Val != span.ValInt {
			return "tagged field " + t.Name(p) + " holds its default value (writers omit it)"
		}
	}
	return ""
}

// varintWide reports whether a 5-byte unsigned varint sets bits above
// bit 31.
func varintWide(b []byte) bool {
	n := varintLen(b)
	return n == 5 && b[4]&0x70 != 0
}

// redundantVarint reports whether a varint ends in a zero group after a
// continuation byte (0x80 0x00 for 0).
func redundantVarint(b []byte) bool {
	n := varintLen(b)
	return n >= 2 && b[n-1] == 0
}

func varintLen(b []byte) int {
	for i, c := range b {
		if c < 0x80 {
			return i + 1
		}
	}
	return len(b)
}

func minimalLen(b []byte) int {
	n := varintLen(b)
	for n > 1 && b[n-1] == 0 {
		n--
	}
	return n
}

// CandidateNames names the first five of cands ("OffsetCommit(8) v10,
// CreateTopics(19) v6") and counts the rest, for the renderers' lines;
// names are as the spec gives them, for each renderer to make safe.
func CandidateNames(cands []Candidate) string {
	const show = 5
	var s strings.Builder
	for i, c := range cands[:min(show, len(cands))] {
		if i > 0 {
			s.WriteString(", ")
		}
		fmt.Fprintf(&s, "%s(%d) v%d", c.Name, c.APIKey, c.Version)
	}
	if n := len(cands) - show; n > 0 {
		fmt.Fprintf(&s, " and %d more", n)
	}
	return s.String()
}

// CandidatesCapped reports whether the candidate search stopped because
// it had found MaxCandidates (not at its work budget).
func (f *Frame) CandidatesCapped() bool { return len(f.Candidates) >= MaxCandidates }

// Summary is the one-line description of a frame:
// "request Produce(0) v9 correlation_id 7, 120 bytes, header v2"; a log
// segment's entry's: "entry batch offsets 100-102, 3 records, zstd, 250
// bytes at position 4096".
func (f *Frame) Summary() string {
	if f.Kind == KindEntry {
		return f.entrySummary()
	}
	var b strings.Builder
	if f.Time != nil {
		b.WriteString(f.Time.UTC().Format("15:04:05.000000") + " ")
	}
	if f.Src != "" || f.Dst != "" {
		b.WriteString(f.Src + " -> " + f.Dst + " ")
	}
	b.WriteString(f.Kind + " ")
	if f.APIUnknown {
		switch {
		case f.Unnamed && len(f.Bytes) >= 8:
			fmt.Fprintf(&b, "(API unknown: not given) correlation_id %d, %d bytes", f.CorrelationID, f.Size)
		case f.Unnamed:
			fmt.Fprintf(&b, "(API unknown: not given), %d bytes", f.Size)
		case f.Kind == "response" && len(f.Bytes) >= 8:
			fmt.Fprintf(&b, "(API unknown: request not captured) correlation_id %d, %d bytes", f.CorrelationID, f.Size)
		default:
			fmt.Fprintf(&b, "(header not captured), %d bytes", f.Size)
		}
		if g := f.Gap; g != nil {
			fmt.Fprintf(&b, " (cut: %d captured)", g.Captured)
		}
		if f.LatencyMicros != nil {
			fmt.Fprintf(&b, ", latency %s", time.Duration(*f.LatencyMicros)*time.Microsecond)
		}
		return b.String()
	}
	// Only the facts the bytes gave: a header cut short gives fewer.
	var facts []string
	switch {
	case !f.Known(FactAPIKey):
	case f.API != "":
		facts = append(facts, fmt.Sprintf("%s(%d)", f.API, f.APIKey))
	default:
		facts = append(facts, fmt.Sprintf("api_key %d", f.APIKey))
	}
	if f.Known(FactVersion) {
		facts = append(facts, fmt.Sprintf("v%d", f.Version))
	}
	if f.Known(FactCorrelationID) {
		facts = append(facts, fmt.Sprintf("correlation_id %d", f.CorrelationID))
	}
	if f.headerCut() {
		facts = append(facts, "(header cut short)")
	}
	b.WriteString(strings.Join(facts, " "))
	fmt.Fprintf(&b, ", %d bytes", f.Size)
	if g := f.Gap; g != nil {
		fmt.Fprintf(&b, " (cut: %d captured)", g.Captured)
	}
	if f.hasTree() && f.API != "" && f.Known(FactHeaderVersion) {
		fmt.Fprintf(&b, ", header v%d", f.HeaderVersion)
	}
	if f.LatencyMicros != nil {
		fmt.Fprintf(&b, ", latency %s", time.Duration(*f.LatencyMicros)*time.Microsecond)
	}
	return b.String()
}
