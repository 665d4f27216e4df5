package redact

import (
	"encoding/binary"
	"strings"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/page"
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
	if s.raw > 0 && !readsAsRequest(c, key, version) {
		return s.Raw(b, false)
	}
	s.raw = 0
	switch key {
	case keySaslHandshake:
		if f, err := c.DecodeRequest(b, codec.Options{Spans: true}); err == nil {
			if n := field(f.Root, "Mechanism"); n != nil {
				s.mech = string(n.Bytes)
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
		return b, nil
	}
	switch api.Key {
	case keySaslHandshake:
		if s.v0Pending {
			s.v0Pending = false
			if f, err := c.DecodeResponse(b, api, version, codec.Options{Spans: true}); err == nil {
				if n := field(f.Root, "ErrorCode"); n != nil && n.Int != 0 {
					s.raw = 0
				}
			}
		}
	case keySaslAuthenticate:
		return s.authBytes(c.DecodeResponse(b, api, version, codec.Options{Spans: true}))(b, true)
	}
	return b, nil
}

// readsAsRequest reports whether key and version name a request the
// codec knows.
func readsAsRequest(c *codec.Codec, key, version int16) bool {
	api, ok := c.Reg.API(key)
	return ok && !api.Reserved() && api.Request != nil && api.Request.Valid.Contains(version)
}

// authBytes redacts the AuthBytes field of a decoded SaslAuthenticate
// frame; when the frame did not decode far enough to find it, everything
// after the header's first 8 bytes is redacted.
func (s *Stream) authBytes(f *codec.Frame, err error) func(b []byte, fromServer bool) ([]byte, *Plan) {
	return func(b []byte, fromServer bool) ([]byte, *Plan) {
		var n *span.Node
		if f != nil {
			n = field(f.Root, "AuthBytes")
		}
		if n == nil || n.Null || (err != nil && n.Err != nil) {
			if err == nil {
				return b, nil // no auth bytes (a null or absent field)
			}
			parts := []Part{{Name: "undecoded", Off: 0, Len: len(b) - 8, Secret: true}}
			out, k := Redact(b[8:], parts)
			return append(append([]byte(nil), b[:8]...), out...), &Plan{Off: 8, Parts: parts, Redacted: k, summary: "frame did not decode: everything after its header is redacted"}
		}
		off := n.Off + n.Len - len(n.Bytes)
		mech, parts := Parse(s.mech, n.Bytes, fromServer)
		red, k := Redact(n.Bytes, parts)
		out := append([]byte(nil), b...)
		copy(out[off:], red)
		return out, &Plan{Mechanism: mech, Off: off, Prefix: off - n.Off, Parts: parts, Redacted: k, summary: Summary(mech, red, parts)}
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

// field finds the body's field node of that name.
func field(root *span.Node, name string) *span.Node {
	if root == nil {
		return nil
	}
	for _, k := range root.Kids {
		if k.Cat == span.CatRequestBody || k.Cat == span.CatResponseBody {
			for _, f := range k.Kids {
				if f.Name == name {
					return f
				}
			}
		}
	}
	return nil
}

// Apply gives the auth-bytes node of r (the report of the redacted
// frame) the parts of its mechanism as children, and a note that says what
// was redacted.
func (p *Plan) Apply(r *report.Frame) {
	if p == nil || r == nil || r.Decoded == nil || r.Decoded.Root == nil || p.Raw {
		return
	}
	var n *span.Node
	r.Decoded.Root.Walk(func(x *span.Node, _ int) {
		if n == nil && x.Off+x.Len-len(x.Bytes) == p.Off && x.Name == "AuthBytes" {
			n = x
		}
	})
	if n == nil {
		return
	}
	n.Note = p.summary
	if len(p.Parts) > 0 && p.Off-n.Off == p.Prefix {
		var kids []*span.Node
		if p.Prefix > 0 {
			kids = append(kids, &span.Node{Name: "length", Type: lenType(n.Enc), Val: span.ValInt, Int: n.Prefix,
				Off: n.Off, Len: p.Prefix, Index: -1, Cat: n.Cat, Parent: n, About: "length prefix of the auth bytes"})
		}
		kids = append(kids, partNodes(n, n.Bytes, p)...)
		n.Kids = kids
	}
	r.Decoded.RootEdited() // TRANSITIONAL: until Apply edits the span.Tree
	if r.Tree != nil {
		r.Tree = page.FromSpan(r.Decoded.Root)
	}
}

func lenType(e span.Enc) string {
	if e == span.EncCompact {
		return "uvarint"
	}
	return "int32"
}

// partNodes makes a leaf per non-empty part of the auth bytes b, which
// start at p.Off in the frame.
func partNodes(parent *span.Node, b []byte, p *Plan) []*span.Node {
	var out []*span.Node
	for _, part := range p.Parts {
		if part.Len == 0 || part.Off+part.Len > len(b) {
			continue
		}
		k := &span.Node{Name: part.Name, Off: p.Off + part.Off, Len: part.Len, Index: -1, Cat: parent.Cat, Parent: parent,
			Bytes: b[part.Off : part.Off+part.Len]}
		switch {
		case part.Secret:
			k.Type, k.Val, k.Note = "bytes", span.ValRecords, "redacted"
		case part.Name == "separator":
			k.Type, k.Val = "separator", span.ValBytes
		default:
			k.Type, k.Val = "string", span.ValString
		}
		out = append(out, k)
	}
	return out
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
	root := &span.Node{Name: "SaslToken", Type: "legacy SASL token", Len: len(b), Index: -1,
		About: "raw SASL bytes after a SaslHandshake v0: a size prefix, no Kafka header"}
	if len(b) >= 4 {
		fr := &span.Node{Name: "Frame", Len: 4, Index: -1, Cat: span.CatFrame, Parent: root, About: "length-delimited framing"}
		fr.Kids = []*span.Node{{Name: "size", Type: "int32", Val: span.ValInt, Int: int64(int32(binary.BigEndian.Uint32(b))), Len: 4, Index: -1, Cat: span.CatFrame, Parent: fr}}
		root.Kids = append(root.Kids, fr)
		tok := &span.Node{Name: "token", Type: "bytes", Val: span.ValBytes, Bytes: b[4:], Off: 4, Len: len(b) - 4, Index: -1, Cat: cat, Parent: root}
		if p != nil {
			tok.Note = p.summary
			tok.Kids = partNodes(tok, b[4:], p)
		}
		if tok.Len > 0 {
			root.Kids = append(root.Kids, tok)
		}
	}
	r.Tree = page.FromSpan(root)
	r.Spans = span.FromNode(root, b)
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
