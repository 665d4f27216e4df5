package redact

import (
	"encoding/binary"
	"strings"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// API keys of the SASL exchange.
const (
	keySaslHandshake    = 17
	keySaslAuthenticate = 36
)

// Plan says what was redacted in one frame, so that the decoded tree of
// the redacted copy can be given the mechanism's structure.
type Plan struct {
	// Mechanism the auth bytes follow ("" when not recognised).
	Mechanism string
	// Off is where the auth bytes start in the frame; Prefix is the size
	// of their length prefix, just before Off (0 for raw tokens).
	Off, Prefix int
	// Parts of the auth bytes, offsets within them.
	Parts []Part
	// Redacted is the number of bytes replaced.
	Redacted int
	// Raw marks a token of the legacy SaslHandshake v0 exchange (no Kafka
	// header).
	Raw bool
	// summary is the note on the auth-bytes node.
	summary string
}

// Stream follows the SASL exchange of one connection, or of the frames of
// one decode input, in order. The zero value is ready; a nil *Stream
// redacts nothing (secrets shown).
type Stream struct {
	mech string // from the last SaslHandshake request
	// raw counts legacy (SaslHandshake v0) tokens expected from the
	// client; rawReplies those expected from the server.
	raw, rawReplies int
	v0Pending       bool // a SaslHandshake v0 request awaits its response
}

// NewStream returns a Stream, or nil when secrets are to be shown.
func NewStream(show bool) *Stream {
	if show {
		return nil
	}
	return &Stream{}
}

// RawNext reports whether the next client frame is expected to be a raw
// SASL token (after a SaslHandshake v0).
func (s *Stream) RawNext() bool { return s != nil && s.raw > 0 }

// RawReplyNext reports whether the next server frame is expected to be a
// raw SASL token.
func (s *Stream) RawReplyNext() bool { return s != nil && s.rawReplies > 0 }

// Rounds is how many client tokens a legacy exchange of a mechanism has.
func Rounds(mech string) int {
	switch {
	case strings.EqualFold(mech, Plain), strings.EqualFold(mech, OAuthBearer):
		return 1
	case strings.HasPrefix(strings.ToUpper(mech), "SCRAM-"):
		return 2
	}
	return 0 // unknown: until a frame reads as a Kafka request
}

// Request redacts a request frame (size prefix included). It returns b
// itself and a nil Plan when there is nothing to redact. A request that
// follows a SaslHandshake v0 and does not read as a Kafka request is a
// raw token and is redacted as one (see [Stream.Raw]).
func (s *Stream) Request(c *codec.Codec, b []byte) ([]byte, *Plan) {
	if s == nil || len(b) < 8 {
		if s != nil && s.raw > 0 {
			return s.Raw(b, false)
		}
		return b, nil
	}
	key := int16(binary.BigEndian.Uint16(b[4:]))
	version := int16(binary.BigEndian.Uint16(b[6:]))
	if s.raw > 0 && !c.Reg.HasRequest(key, version) {
		return s.Raw(b, false)
	}
	s.raw = 0
	switch key {
	case keySaslHandshake:
		if f, err := c.DecodeRequest(b, codec.Options{Spans: true}); err == nil {
			if t, id := bodyField(f, "Mechanism"); id != span.None {
				s.mech = string(t.ValueBytes(id))
			}
			if version == 0 {
				// Raw tokens follow once the broker accepts the
				// mechanism (a refusal ends the exchange: see Response).
				s.raw = Rounds(s.mech)
				if s.raw == 0 {
					s.raw = 1 << 20 // until a frame reads as a request
				}
				s.v0Pending = true
			}
		}
		return b, nil
	case keySaslAuthenticate:
		return s.authBytes(c.DecodeRequest(b, codec.Options{Spans: true}))(b, false)
	}
	return b, nil
}

// Response redacts a response frame of the given API and version.
func (s *Stream) Response(c *codec.Codec, b []byte, api *schema.API, version int16) ([]byte, *Plan) {
	if s == nil {
		return b, nil
	}
	if s.rawReplies > 0 && (api == nil || api.Key != keySaslHandshake) {
		return s.Raw(b, true)
	}
	if api == nil {
		return s.unpaired(c, b)
	}
	switch api.Key {
	case keySaslHandshake:
		if s.v0Pending {
			s.v0Pending = false
			if f, err := c.DecodeResponse(b, api, version, codec.Options{Spans: true}); err == nil {
				if t, id := bodyField(f, "ErrorCode"); id != span.None && t.N(id).Int != 0 {
					s.raw = 0
				}
			}
		}
	case keySaslAuthenticate:
		return s.authBytes(c.DecodeResponse(b, api, version, codec.Options{Spans: true}))(b, true)
	}
	return b, nil
}

// unpaired redacts a response whose request was not seen (a capture that
// starts mid-exchange, a request lost or evicted): its API is unknown, so
// it is read as a SaslAuthenticate response of every version; each version
// it decodes as whole, with auth bytes, has them redacted as a paired
// response's would be. A response of another API rarely decodes whole as
// one; if it does, only the bytes where its auth bytes would be change.
// The plan is the first such version's.
func (s *Stream) unpaired(c *codec.Codec, b []byte) ([]byte, *Plan) {
	api, ok := c.Reg.API(keySaslAuthenticate)
	if !ok || api.Response == nil {
		return b, nil
	}
	out := b
	var plan *Plan
	for v := api.Response.Valid.Lo; v <= api.Response.Valid.Hi && v >= 0; v++ {
		f, err := c.DecodeResponse(out, api, v, codec.Options{Spans: true})
		if err != nil {
			continue
		}
		if t, id := bodyField(f, "AuthBytes"); id == span.None || t.N(id).Null || len(t.ValueBytes(id)) == 0 {
			continue
		}
		red, p := s.authBytes(f, nil)(out, true)
		if p == nil || p.Redacted == 0 {
			continue
		}
		out = red
		if plan == nil {
			plan = p
		}
	}
	return out, plan
}

// authBytes redacts the AuthBytes field of a decoded SaslAuthenticate
// frame; when the frame did not decode far enough to find it, everything
// after the header's first 8 bytes is redacted.
func (s *Stream) authBytes(f *codec.Frame, err error) func(b []byte, fromServer bool) ([]byte, *Plan) {
	return func(b []byte, fromServer bool) ([]byte, *Plan) {
		t, id := bodyField(f, "AuthBytes")
		if id == span.None || t.N(id).Null || (err != nil && t.Err(id) != nil) {
			if err == nil {
				return b, nil // no auth bytes (a null or absent field)
			}
			parts := []Part{{Name: "undecoded", Off: 0, Len: len(b) - 8, Secret: true}}
			out, k := Redact(b[8:], parts)
			return append(append([]byte(nil), b[:8]...), out...), &Plan{Off: 8, Parts: parts, Redacted: k, summary: "frame did not decode: everything after its header is redacted"}
		}
		auth := t.ValueBytes(id)
		off := t.ValueOff(id)
		mech, parts := Parse(s.mech, auth, fromServer)
		red, k := Redact(auth, parts)
		out := append([]byte(nil), b...)
		copy(out[off:], red)
		return out, &Plan{Mechanism: mech, Off: off, Prefix: off - int(t.N(id).Off), Parts: parts, Redacted: k, summary: Summary(mech, red, parts)}
	}
}

// Raw redacts a raw SASL token of the legacy exchange: a size prefix and
// the mechanism's bytes, no Kafka header.
func (s *Stream) Raw(b []byte, fromServer bool) ([]byte, *Plan) {
	if s == nil {
		return b, nil
	}
	if fromServer {
		s.rawReplies = max(s.rawReplies-1, 0)
	} else {
		s.raw = max(s.raw-1, 0)
		s.rawReplies++
	}
	if len(b) < 4 {
		out, k := Redact(b, []Part{{Len: len(b), Secret: true}})
		return out, &Plan{Raw: true, Redacted: k}
	}
	tok := b[4:]
	mech, parts := Parse(s.mech, tok, fromServer)
	red, k := Redact(tok, parts)
	out := append(append([]byte(nil), b[:4]...), red...)
	return out, &Plan{Mechanism: mech, Off: 4, Parts: parts, Redacted: k, Raw: true, summary: Summary(mech, red, parts)}
}

// bodyField returns the tree of a decoded frame and the row of its body's
// top-level field of that name: the field is found by name in the
// message's spec, and its row by the field's descriptor (span.None when
// the frame or the field is not there).
func bodyField(f *codec.Frame, name string) (*span.Tree, span.ID) {
	if f == nil || f.API == nil {
		return nil, span.None
	}
	t := f.SpanTree()
	m := f.Message()
	if t == nil || m == nil || m.Body == nil {
		return t, span.None
	}
	for _, sf := range m.Body.Fields {
		if sf.Name == name && sf.Versions.Contains(f.Version) {
			return t, t.KidOf(t.Body(), sf)
		}
	}
	return t, span.None
}

// Descriptors of the rows redaction adds.
var (
	lengthCompactDesc = span.NewDesc("length", "uvarint", "length prefix of the auth bytes")
	lengthInt32Desc   = span.NewDesc("length", "int32", "length prefix of the auth bytes")
	tokenRootDesc     = span.NewDesc("SaslToken", "legacy SASL token", "raw SASL bytes after a SaslHandshake v0: a size prefix, no Kafka header")
	tokenFrameDesc    = span.NewDesc("Frame", "", "length-delimited framing")
	tokenSizeDesc     = span.NewDesc("size", "int32", "")
	tokenDesc         = span.NewDesc("token", "bytes", "")
)

// Apply gives the auth-bytes row of r (the report of the redacted frame)
// the parts of its mechanism as children, and a note that says what was
// redacted.
func (p *Plan) Apply(r *report.Frame) {
	if p == nil || r == nil || p.Raw {
		return
	}
	t, id := bodyField(r.Decoded, "AuthBytes")
	if id == span.None || t.ValueOff(id) != p.Off {
		return
	}
	t.Extra(id, true).Note = p.summary
	if n := t.N(id); len(p.Parts) > 0 && p.Off-int(n.Off) == p.Prefix {
		t.CutKids(id)
		if p.Prefix > 0 {
			d := lengthInt32Desc
			if n.Enc == span.EncCompact {
				d = lengthCompactDesc
			}
			off, prefix, cat := int(n.Off), n.Prefix, n.Cat
			k := t.Add(id, d, off, cat)
			kn := t.N(k)
			kn.Val, kn.Int, kn.Len = span.ValInt, prefix, int32(p.Prefix)
		}
		addParts(t, id, p)
	}
}

// addParts adds a row under parent per non-empty part of the auth bytes,
// which start at p.Off in the tree's bytes. Part names come from the
// input (an OAUTHBEARER extension's key), so their descriptors are the
// tree's own.
func addParts(t *span.Tree, parent span.ID, p *Plan) {
	cat := t.N(parent).Cat
	descs := map[[2]string]*span.Desc{}
	for _, part := range p.Parts {
		if part.Len == 0 || p.Off+part.Off+part.Len > len(t.Bytes) {
			continue
		}
		typ, val := "string", span.ValString
		switch {
		case part.Secret:
			typ, val = "bytes", span.ValRecords
		case part.Name == "separator":
			typ, val = "separator", span.ValBytes
		}
		key := [2]string{part.Name, typ}
		d := descs[key]
		if d == nil {
			d = &span.Desc{Name: part.Name, Type: typ}
			descs[key] = d
		}
		off := p.Off + part.Off
		k := t.AddLocal(parent, d, off, cat)
		n := t.N(k)
		n.Val, n.Len, n.VOff, n.VLen = val, int32(part.Len), int32(off), int32(part.Len)
		if part.Secret {
			t.Extra(k, true).Note = "redacted"
		}
	}
}

// RawReport is the report of a raw token of the legacy SaslHandshake v0
// exchange (already redacted by [Stream.Raw]): a size prefix and the
// mechanism's bytes, no Kafka header.
func RawReport(b []byte, p *Plan, fromServer bool) *report.Frame {
	kind := "request"
	cat := span.CatRequestBody
	if fromServer {
		kind, cat = "response", span.CatResponseBody
	}
	r := &report.Frame{Kind: kind, APIKey: keySaslHandshake, API: "SaslHandshake-v0-token", Size: len(b), Bytes: b}
	r.Hex = hexString(b)
	t := &span.Tree{Bytes: b}
	root := t.Add(span.None, tokenRootDesc, 0, span.CatNone)
	t.N(root).Len = int32(len(b))
	if len(b) >= 4 {
		fr := t.Add(root, tokenFrameDesc, 0, span.CatFrame)
		t.N(fr).Len = 4
		size := t.Add(fr, tokenSizeDesc, 0, span.CatFrame)
		sn := t.N(size)
		sn.Val, sn.Int, sn.Len = span.ValInt, int64(int32(binary.BigEndian.Uint32(b))), 4
		if len(b) > 4 {
			tok := t.Add(root, tokenDesc, 4, cat)
			tn := t.N(tok)
			tn.Val, tn.Len, tn.VOff, tn.VLen = span.ValBytes, int32(len(b)-4), 4, int32(len(b)-4)
			if p != nil {
				t.Extra(tok, true).Note = p.summary
				tp := *p
				tp.Off = 4
				addParts(t, tok, &tp)
			}
		}
	}
	r.Spans = t
	return r
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(out)
}

// Decode redacts and decodes one frame of s's connection (frames in the
// order they were sent; a nil s shows secrets): the report of the
// redacted bytes, with the structure of what was redacted (see
// DecodeRedacted).
func (s *Stream) Decode(c *codec.Codec, b []byte, ro report.Options) *report.Frame {
	b, plan := s.Frame(c, b, ro)
	return DecodeRedacted(c, b, ro, plan)
}

// Frame redacts a request or response frame (ro.Kind; a response's API and
// version from ro) with Request or Response: it returns b itself and a
// nil plan when s is nil (secrets shown).
func (s *Stream) Frame(c *codec.Codec, b []byte, ro report.Options) ([]byte, *Plan) {
	switch {
	case s == nil:
		return b, nil
	case ro.Kind == schema.TypeResponse:
		return s.Response(c, b, ro.API, ro.Version)
	}
	return s.Request(c, b)
}

// DecodeRedacted decodes the bytes that Request, Response or Raw returned
// and gives the report the structure of what plan says was redacted (a
// raw token's report, see RawReport; nil plan: nothing was).
func DecodeRedacted(c *codec.Codec, b []byte, ro report.Options, plan *Plan) *report.Frame {
	if plan != nil && plan.Raw {
		return RawReport(b, plan, ro.Kind == schema.TypeResponse)
	}
	r := report.Decode(c, b, ro)
	plan.Apply(r)
	return r
}
