package report

import (
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/wire"
)

// This file holds what captures need beyond one frame and its schema:
// requests newer than the spec, responses to them, responses whose request
// was not captured, and frames cut by a gap.

// newerRequest reports whether err is a request's version error for a
// version above the API's newest, the header having been read whole.
func newerRequest(f *codec.Frame, err error) bool {
	if f == nil || f.API == nil || f.Kind != schema.TypeRequest || !errors.Is(err, wire.ErrVersion) {
		return false
	}
	valid := f.API.Request.Valid
	var de *wire.DecodeError
	return !valid.Empty() && f.Version > valid.Hi && errors.As(err, &de) && de.Offset == 6
}

// unknownKeyRequest reports whether err says that a request's API key
// (a plausible one, 0 to 1023) is not in the spec.
func unknownKeyRequest(kind schema.MessageType, b []byte, err error) bool {
	if kind != schema.TypeRequest || !errors.Is(err, codec.ErrUnknownAPI) || len(b) < 12 {
		return false
	}
	key := int16(uint16(b[4])<<8 | uint16(b[5]))
	return key >= 0 && key < 1024
}

// UnknownAPIResponse reports the answer to a request whose API key the
// spec lacks: a warning with the request's key and version and the
// response's correlation id, not decoded.
func UnknownAPIResponse(b []byte, key, v int16, o Options) *Frame {
	corr, _ := codec.PeekCorrelationID(b)
	r := &Frame{Kind: "response", APIKey: key, Version: v, CorrelationID: corr, Size: len(b), Bytes: b, lean: o.Lean}
	if !o.Lean {
		r.Hex = hexOf(b)
	}
	r.Warning = fmt.Sprintf("the answer to API key %d v%d, which this spec does not define; not decoded", key, v)
	return r
}

func newerWarning(api *schema.API, v int16) string {
	if api.Key == apiVersionsKey {
		return fmt.Sprintf("%s v%d is newer than this spec (%s); the broker will answer it as v0 (a broker that does not know the version answers with a v0 response carrying UNSUPPORTED_VERSION (35) and its own version ranges); header decoded, body not", api.Name, v, api.Request.Valid)
	}
	return fmt.Sprintf("%s v%d is newer than this spec (%s); header decoded, body not", api.Name, v, api.Request.Valid)
}

// Response decodes a response to a request of api at version v, with
// Kafka's rules for versions the spec does not define: an ApiVersions
// response to a request newer than the spec is read as v0 (the broker
// answers such a request at v0), and an ApiVersions response that does not
// decode at its request's version but does at v0 is that v0 answer; a
// response of another API to a request newer than the spec is a warning
// with its correlation id, not decoded.
func Response(c *codec.Codec, b []byte, api *schema.API, v int16, o Options) *Frame {
	o.Kind, o.API, o.Version = schema.TypeResponse, api, v
	valid := api.Response.Valid
	newer := !valid.Empty() && v > valid.Hi
	if api.Key == apiVersionsKey && newer {
		o.Version = 0
		r := Decode(c, b, o)
		if r.Error == "" {
			r.Note = fmt.Sprintf("the answer to ApiVersions v%d, which is newer than this spec (%s): read as v0, as Kafka's clients read it", v, valid)
			r.RequestVersion = &v
		}
		return r
	}
	if newer {
		corr, _ := codec.PeekCorrelationID(b)
		r := &Frame{Kind: "response", APIKey: api.Key, API: api.Name, Version: v, CorrelationID: corr, Size: len(b), Bytes: b, lean: o.Lean}
		r.Unread = unread(schema.TypeResponse, b, api, v)
		if !o.Lean {
			r.Hex = hexOf(b)
		}
		r.Warning = fmt.Sprintf("the answer to %s v%d, which is newer than this spec (%s); not decoded", api.Name, v, valid)
		return r
	}
	r := Decode(c, b, o)
	if r.Error != "" && api.Key == apiVersionsKey && v != 0 {
		// A tree of its own: r keeps o.Tree when r0 does not stand.
		o.Version, o.NoAlternatives, o.Tree = 0, true, nil
		if r0 := Decode(c, b, o); r0.Error == "" {
			r0.Note = fmt.Sprintf("does not decode as ApiVersions v%d, its request's version, but does as v0: the broker's UNSUPPORTED_VERSION answer, read as v0 as Kafka's clients read it", v)
			r0.RequestVersion = &v
			return r0
		}
	}
	return r
}

// ResponseValues decodes a response to a request of api at version v for
// its values, without a span tree, with [Response]'s rule for
// ApiVersions: the answer to a request newer than the spec, or one that
// does not decode at its request's version but does at v0, is read as v0
// (the broker's UNSUPPORTED_VERSION answer; the frame's Version says so).
// Front ends that count or select responses (stats, filters) use it, so
// that they read the frames decode --pcap reads.
func ResponseValues(c *codec.Codec, b []byte, api *schema.API, v int16) (*codec.Frame, error) {
	if api.Key == apiVersionsKey && v != 0 {
		if valid := api.Response.Valid; !valid.Empty() && v > valid.Hi {
			return c.DecodeResponse(b, api, 0, codec.Options{})
		}
	}
	f, err := c.DecodeResponse(b, api, v, codec.Options{})
	if err != nil && api.Key == apiVersionsKey && v != 0 {
		if f0, err0 := c.DecodeResponse(b, api, 0, codec.Options{}); err0 == nil {
			return f0, nil
		}
	}
	return f, err
}

// Hint is a request seen near a response whose own request was not
// captured; candidates of its API (and version) rank first.
type Hint struct {
	APIKey  int16
	Version int16
}

// Candidate search bounds: at most MaxCandidates are listed, and the
// decoding work (bytes read over all the schemas tried, each try counted
// as at least candidateTryCost) stops at 32 times the frame plus 1 MiB
// (plus nothing for a lean search, [Options.LeanSearch]), and at most 64
// MiB (plus one frame), so that it stays proportional to the input.
// Schemas whose smallest frame is longer than the bytes are ruled out
// without a try.
const MaxCandidates = 50

// FullSearches is how many searches of every response schema an input
// (a file of frames, a capture) makes with the full allowance; callers
// set [Options.LeanSearch] on the frames after them.
const FullSearches = 16

// Searches follows the searches of every response schema over one
// input's frames, decoded in its order: the first FullSearches get the
// full allowance, later ones are lean ([Options.LeanSearch]). The zero
// value is ready.
type Searches struct {
	n, cut int
}

// Lean reports whether the next frame's search is to be lean.
func (s *Searches) Lean() bool { return s.n >= FullSearches }

// Count notes frame f, decoded with Options.LeanSearch set to Lean(): a
// frame that failed, or a response without its API, may have searched.
func (s *Searches) Count(f *Frame) {
	if !f.OK() || f.Unnamed || f.APIUnknown {
		s.n++
	}
	if f.SearchCut() {
		s.cut++
	}
}

// Cut is how many of the frames counted had their search stop at its
// budget.
func (s *Searches) Cut() int { return s.cut }

// candidateBudgetMax is a variable so that a test can lower it.
var candidateBudgetMax = 64 << 20

// candidateTryCost is the least work a try counts, in bytes read: a try
// that fails at once still costs what decoding about as many bytes does
// (the decoder set up, the error made).
const candidateTryCost = 64

func candidateBudget(n int, lean bool) int {
	if lean {
		return min(32*n, candidateBudgetMax)
	}
	return min(32*n+1<<20, candidateBudgetMax)
}

// Orphan reports a response whose request was not captured: its API and
// version are unknown (Frame.APIUnknown), and every response schema of the
// spec is tried on it (see [Candidates]). With at least one candidate the
// frame is a warning; with none, an error (no schema explains its bytes).
func Orphan(c *codec.Codec, b []byte, hints []Hint, o Options) *Frame {
	corr, _ := codec.PeekCorrelationID(b)
	why := fmt.Sprintf("no request with correlation id %d was seen on this connection (the capture lost it), so the response's API and version are unknown", corr)
	return apiUnknown(c, b, hints, o, why)
}

// Unnamed reports a response given without its API and version (bytes
// pasted with neither: a response does not name them) as [Orphan] reports
// one whose request was lost: every response schema of the spec is tried
// on it, and the frame names those that explain it (a warning), or says
// that none does (an error). It chooses none: small responses often read
// cleanly as several APIs.
func Unnamed(c *codec.Codec, b []byte, o Options) *Frame {
	r := apiUnknown(c, b, nil, o, "a response does not name its API or version, and they were not given")
	r.Unnamed = true
	return r
}

// apiUnknown is Orphan and Unnamed, which differ in why the API is not
// known.
func apiUnknown(c *codec.Codec, b []byte, hints []Hint, o Options, why string) *Frame {
	corr, _ := codec.PeekCorrelationID(b)
	r := &Frame{Kind: "response", APIUnknown: true, CorrelationID: corr, Size: len(b), Bytes: b, lean: o.Lean}
	r.Unread = unread(schema.TypeResponse, b, nil, 0)
	if !o.Lean {
		r.Hex = hexOf(b)
	}
	r.Candidates, r.CandidatesIncomplete, _ = candidates(c, b, hints, o.LeanSearch)
	if len(r.Candidates) > 0 {
		r.Warning = why
	} else {
		r.Error = why + "; no response schema of this spec decodes it cleanly and re-encodes it"
		if r.CandidatesIncomplete {
			r.Error = why + "; no response schema tried within the search budget decodes it cleanly and re-encodes it"
		}
	}
	return r
}

// Candidates returns the (API, version) pairs whose response schema
// decodes b cleanly and re-encodes it byte for byte, ranked: the versions
// of hinted requests first (in hint order), then other versions of hinted
// APIs, then the rest by API key and newest version first. The search is
// bounded (at most [MaxCandidates] listed; the decoding work is capped);
// incomplete says it stopped early.
func Candidates(c *codec.Codec, b []byte, hints []Hint) (out []Candidate, incomplete bool) {
	out, incomplete, _ = candidates(c, b, hints, false)
	return out, incomplete
}

// candidates is Candidates, with a lean search's budget when lean; tried
// counts the schemas decoded.
func candidates(c *codec.Codec, b []byte, hints []Hint, lean bool) (out []Candidate, incomplete bool, tried int) {
	if len(b) < 8 {
		return nil, false, 0
	}
	type try struct {
		api  *schema.API
		v    int16
		rank int
	}
	hinted := map[int16]int{}
	exact := map[Hint]int{}
	for i, h := range hints {
		if _, ok := hinted[h.APIKey]; !ok {
			hinted[h.APIKey] = i
		}
		if _, ok := exact[h]; !ok {
			exact[h] = i
		}
	}
	var tries []try
	for _, api := range c.Reg.APIs {
		valid := api.Response.Valid
		if api.Reserved() || valid.Empty() {
			continue
		}
		for v := valid.Hi; v >= valid.Lo && v >= 0; v-- {
			rank := 1 << 20
			if i, ok := exact[Hint{api.Key, v}]; ok {
				rank = i
			} else if i, ok := hinted[api.Key]; ok {
				rank = 1<<10 + i
			}
			tries = append(tries, try{api, v, rank})
			if v == 0 {
				break
			}
		}
	}
	slices.SortStableFunc(tries, func(a, b try) int { return a.rank - b.rank })
	work, budget := 0, candidateBudget(len(b), lean)
	for _, t := range tries {
		if work > budget {
			return out, true, tried
		}
		if n, ok := c.MinFrameSize(t.api.Response, t.v); ok && len(b) < n {
			// Shorter than any of its frames: no decode needed to rule it
			// out (a flood of tiny frames costs a comparison each, not a
			// decode of every response schema).
			continue
		}
		tried++
		f, err := c.DecodeResponse(b, t.api, t.v, codec.Options{})
		if err != nil {
			var de *wire.DecodeError
			if errors.As(err, &de) {
				work += max(de.Offset, candidateTryCost)
			} else {
				work += candidateTryCost
			}
			continue
		}
		work += max(len(b), candidateTryCost)
		enc, err := c.EncodeResponse(nil, f)
		work += len(b)
		if err != nil || string(enc) != string(b) {
			continue
		}
		if len(out) == MaxCandidates {
			return out, true, tried
		}
		out = append(out, Candidate{APIKey: t.api.Key, Name: t.api.Name, Version: t.v})
	}
	return out, false, tried
}

// Cut reports the captured start of a frame that a gap in the capture (or
// its end) cut short: b holds the bytes before the gap. It is decoded as
// far as it goes (header and the body up to the cut); the frame is a
// warning, not an error. For a response, api and v are those of its
// request (api nil when the request is unknown).
func Cut(c *codec.Codec, b []byte, kind schema.MessageType, api *schema.API, v int16, gap Gap, o Options) *Frame {
	if kind == 0 {
		kind = schema.TypeRequest
	}
	o.Kind, o.API, o.Version, o.NoAlternatives, o.Roundtrip = kind, api, v, true, false
	var r *Frame
	switch {
	case kind == schema.TypeResponse && api == nil:
		corr, _ := codec.PeekCorrelationID(b)
		r = &Frame{Kind: "response", APIUnknown: true, CorrelationID: corr, Bytes: b, lean: o.Lean}
		r.Unread = unread(schema.TypeResponse, b, nil, 0)
		if !o.Lean {
			r.Hex = hexOf(b)
		}
	case kind == schema.TypeResponse && (api.Response.Valid.Empty() || v > api.Response.Valid.Hi):
		r = Response(c, b, api, v, o)
	default:
		r = Decode(c, b, o)
	}
	r.Error, r.ErrorOffset, r.ErrorPath, r.AlsoDecodesAs = "", nil, "", nil
	r.Body, r.leanBody = nil, false
	if kind == schema.TypeRequest && len(b) < 12 || kind == schema.TypeResponse && len(b) < 8 {
		// Not even the header's key, version and correlation id: none
		// of them is known.
		r.APIUnknown, r.API, r.APIKey, r.Version, r.CorrelationID = true, "", 0, 0, 0
		r.Unread = FactAPIKey | FactVersion | FactCorrelationID | FactHeaderVersion
	}
	r.Size = len(b)
	if gap.FrameSize >= 0 {
		r.Size = int(gap.FrameSize)
	}
	g := gap
	r.Gap = &g
	if r.APIUnknown {
		// Only the paired request, if any, could say more.
		r.Candidates = nil
	}
	if gap.AtEnd {
		r.Warning = fmt.Sprintf("cut short by the end of the capture: %d of %s bytes captured", gap.Captured, sizeText(gap.FrameSize))
	} else {
		r.Warning = fmt.Sprintf("cut by a gap in the capture: %d bytes not captured at stream offset %d; %d of %s bytes captured before it", gap.Size, gap.Offset, gap.Captured, sizeText(gap.FrameSize))
	}
	return r
}

func sizeText(n int64) string {
	if n < 0 {
		return "an unknown number of"
	}
	return fmt.Sprint(n)
}

func hexOf(b []byte) string { return hex.EncodeToString(b) }
