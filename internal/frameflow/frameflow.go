// Package frameflow holds the flows over whole frames that the command line
// (decode, encode) and the server (POST /api/decode, /api/encode and the
// /decode/ page) share, so that the same input gives the same frames, the
// same bytes and the same errors through either:
//
//   - decode: Split cuts the input into frames, Decode places each frame's
//     report (index, offset, framing error);
//   - encode: Encode turns a body given as JSON into a frame, and Options
//     are the report options that decode it again.
package frameflow

import (
	"fmt"
	"iter"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/frames"
	"github.com/manifester/manifester/internal/jsonvalue"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
)

// Split cuts back-to-back frames given whole (hex, a file) into the
// pieces to decode (see frames.Split). One whole frame followed by bytes
// that are not one is most likely a frame whose size prefix is smaller
// than its data: it is one piece, so that its decode error says so.
func Split(data []byte) []frames.Frame {
	var out []frames.Frame
	for p := range All(data) {
		out = append(out, p)
	}
	return out
}

// All yields the pieces of Split one at a time, so that a caller that
// stops early (a limit on the frames decoded) does not frame the rest.
func All(data []byte) iter.Seq[frames.Frame] {
	return func(yield func(frames.Frame) bool) {
		var first frames.Frame
		i := 0
		for p := range frames.All(data) {
			switch i++; i {
			case 1:
				first = p // held until the second piece says how to read it
				if p.Err != nil {
					yield(p)
					return
				}
				continue
			case 2:
				if p.Err != nil { // a piece with Err is the last
					yield(frames.Frame{Offset: 0, Bytes: data})
					return
				}
				if !yield(first) {
					return
				}
			}
			if !yield(p) {
				return
			}
		}
		if i == 1 {
			yield(first)
		}
	}
}

// Decode reports piece i of Split: decode (report.Decode with the
// caller's options, or a decode that redacts secrets first) reports its
// bytes, and the report gets the piece's index and offset, and the
// split's error when the decode found none.
func Decode(i int, p frames.Frame, decode func([]byte) *report.Frame) *report.Frame {
	r := decode(p.Bytes)
	r.Index, r.Offset = i, int64(p.Offset)
	if p.Err != nil && r.Error == "" {
		r.Error = p.Err.Error()
	}
	return r
}

// Message is a frame to encode, its body given as JSON.
type Message struct {
	Kind          schema.MessageType
	API           *schema.API
	Version       int16
	CorrelationID int32
	// ClientID is a request header's client id; nil sends a null one.
	ClientID *string
	// HeaderTags are the header's tagged fields, as they are.
	HeaderTags []codec.RawTag
	// Body is the message body as JSON (see package jsonvalue).
	Body []byte
	// Input, when set, is the text Body is a part of, from BodyOff on
	// (a file of JSON lines): errors give lines and columns in it.
	Input   []byte
	BodyOff int
}

// Schema is the message schema of m: its API's request or response.
func (m *Message) Schema() *schema.Message {
	if m.Kind == schema.TypeResponse {
		return m.API.Response
	}
	return m.API.Request
}

// Encode encodes m with c: the body is read against the message schema
// of m's version, and the frame (size prefix and header included) is
// returned. An error names the message and version ("ProduceRequest v9:
// ...") and wraps jsonvalue's or the codec's.
func Encode(c *codec.Codec, m Message) ([]byte, error) {
	s := m.Schema()
	input, start := m.Body, 0
	if m.Input != nil {
		input, start = m.Input, m.BodyOff
	}
	val, err := jsonvalue.UnmarshalAt(s, m.Version, input, start, start+len(m.Body))
	if err != nil {
		return nil, fmt.Errorf("%s v%d: %w", s.Name, m.Version, err)
	}
	f := &codec.Frame{Kind: m.Kind, API: m.API, Version: m.Version, CorrelationID: m.CorrelationID, Body: val, HeaderTags: m.HeaderTags}
	if m.ClientID == nil {
		f.ClientIDNull = true
	} else {
		f.ClientID = []byte(*m.ClientID)
	}
	var out []byte
	if m.Kind == schema.TypeResponse {
		out, err = c.EncodeResponse(nil, f)
	} else {
		out, err = c.EncodeRequest(nil, f)
	}
	if err != nil {
		return nil, fmt.Errorf("%s v%d: %w", s.Name, m.Version, err)
	}
	return out, nil
}

// Options returns base with m's kind, and its API and version for a
// response (which does not name them): the options that decode m's
// encoding again.
func (m *Message) Options(base report.Options) report.Options {
	base.Kind = m.Kind
	if m.Kind == schema.TypeResponse {
		base.API, base.Version = m.API, m.Version
	}
	return base
}
