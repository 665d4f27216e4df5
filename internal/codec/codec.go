// Package codec encodes and decodes Kafka messages from schema descriptors
// alone, with no generated code: request and response frames (size prefix,
// header, body), every field type in classic and flexible ("compact")
// encodings, tagged fields, and records payloads.
//
// # Values and spans
//
// Decoding produces a [Value] tree and, when [Options.Spans] is set, in
// the same pass, a [span.Tree] (Frame.SpanTree) in which every byte of the
// frame belongs to exactly one leaf; [Options.NoValues] builds the tree
// only. Errors are [*wire.DecodeError] values naming the byte offset and
// the field path, which is the [span.Tree.Path] of the row the error is
// set on; the partial span tree up to the error is always returned.
//
// # Plans
//
// [New] resolves every (message, version) into a plan once; encoding and
// decoding walk plans, never version ranges or maps.
package codec

import (
	"fmt"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/recschema"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

// Codec encodes and decodes the messages of one registry. It is safe for
// concurrent use once built.
type Codec struct {
	Reg   *schema.Registry
	plans map[*schema.Message]msgPlans
	// Decompress, when set, inflates compressed record batches for display.
	Decompress records.Decompressor
	// DecompressLimit, when set, is used instead of Decompress: it is
	// given the room left in the decode's budget (Options.Budget).
	DecompressLimit records.LimitDecompressor
	// RecordsTopic, when set, reads every records field as the records of
	// this internal topic (see [Codec.SetRecordSchemas]), whatever topic
	// the frame names.
	RecordsTopic string
	// recs are the record schemas of the internal topics, when loaded.
	recs *recschema.Set
	// descs are the node descriptors of every field planned.
	descs map[*schema.Field]*fieldDescs
	// frames are the encoder's frame plans of requests [0] and responses
	// [1], by API key (encode_frame.go).
	frames [2][]msgFramePlans
	// apis are the registry's APIs by key (encode_frame.go).
	apis []*schema.API
}

// New resolves the plans of every message of reg.
func New(reg *schema.Registry) *Codec {
	c := &Codec{Reg: reg, plans: make(map[*schema.Message]msgPlans, len(reg.Messages))}
	for _, m := range reg.Messages {
		c.plans[m] = c.buildPlans(m)
	}
	c.buildFramePlans()
	return c
}

// descs returns the root and body descriptors of m at version v (nil
// outside its valid versions).
func (c *Codec) msgDescs(m *schema.Message, v int16) (root, body *span.Desc) {
	mp := c.plans[m]
	i := int(v) - int(mp.lo)
	if i < 0 || i >= len(mp.root) {
		return nil, nil
	}
	return mp.root[i], mp.body[i]
}

// recordDesc returns the descriptor of internal record message m's body
// at version v.
func (c *Codec) recordDesc(m *schema.Message, v int16) *span.Desc {
	mp := c.plans[m]
	i := int(v) - int(mp.lo)
	if i < 0 || i >= len(mp.record) {
		return nil
	}
	return mp.record[i]
}

func (c *Codec) plan(m *schema.Message, v int16) (*plan, error) {
	mp, ok := c.plans[m]
	if !ok {
		return nil, fmt.Errorf("message %s is not in this codec's registry", m.Name)
	}
	i := int(v) - int(mp.lo)
	if i < 0 || i >= len(mp.plans) {
		return nil, versionError(m, v)
	}
	return mp.plans[i], nil
}

// Options control decoding.
type Options struct {
	// Spans builds the annotated span tree ([Frame.SpanTree]).
	Spans bool
	// Tree, when set with Spans, is the tree to build into: it is reset
	// and refilled, so that a loop over many frames reuses its buffers
	// (the previous frame's tree is then gone).
	Tree *span.Tree
	// NoValues skips building the [Value] tree (Frame.Body, Frame.Header
	// and DecodeBody's Value stay empty), for callers that read only the
	// span tree. It has effect only with Spans.
	NoValues bool
	// OpaqueRecords keeps records fields as bytes: their batches are
	// neither decoded nor checked (no CRC, no inflating, no record
	// walked), and with Spans the records node has no children. For a
	// caller that reads the fields around the records only, such as the
	// proxy finding the broker addresses of a Fetch response.
	OpaqueRecords bool
	// Sample describes array counts of 1 as "one sample element follows",
	// as the reference pages of smallest instances do.
	Sample bool
	// Budget bounds the decode: bytes inflated and nodes built for
	// inflated records, nodes of the frame's own tree, nesting depth,
	// and its context. Nil imposes the default depth limit only.
	Budget *budget.Budget
}

// Frame is a decoded (or to-be-encoded) request or response.
type Frame struct {
	Kind          schema.MessageType // TypeRequest or TypeResponse
	API           *schema.API
	Version       int16
	HeaderVersion int16
	CorrelationID int32
	ClientID      []byte // request header v1+; nil with ClientIDNull for null
	ClientIDNull  bool
	HeaderTags    []RawTag // unknown tagged fields of the header
	// Header holds the header as a struct value of RequestHeader.json or
	// ResponseHeader.json at HeaderVersion, when the registry has that
	// header spec: decoding fills it; encoding writes the fields that have
	// no field of their own above (a field a new header version adds) from
	// it, or their defaults when it is empty.
	Header Value
	Body   Value
	// Size is the number of bytes of the frame, size prefix included.
	Size int
	// tree is the annotated tree, built when decoding with Options.Spans.
	tree *span.Tree
}

// SpanTree returns the frame's annotated tree as a [span.Tree] (nil when
// decoded without Options.Spans).
func (f *Frame) SpanTree() *span.Tree { return f.tree }

// Message returns the request or response message of the frame.
func (f *Frame) Message() *schema.Message {
	if f.Kind == schema.TypeResponse {
		return f.API.Response
	}
	return f.API.Request
}

// EncodeError names the field path that could not be encoded.
type EncodeError struct {
	Path string
	Err  error
}

func (e *EncodeError) Error() string {
	if e.Path == "" {
		return "encode: " + e.Err.Error()
	}
	return "encode " + e.Path + ": " + e.Err.Error()
}

func (e *EncodeError) Unwrap() error { return e.Err }

// Sentinels for unknown API keys (the registry's, shared with
// [schema.Registry.Lookup]) and bad versions (shared with wire).
var (
	ErrUnknownAPI = schema.ErrUnknownAPI
	ErrVersion    = wire.ErrVersion
)
