// Package sample builds the smallest legal instance of any message at any
// version, by the rule of manifester's reference pages:
//
//   - numeric fields are zero and bools false, even where the spec's default
//     differs;
//   - strings are empty (also where nullable: empty, not null), bytes are
//     empty and uuids all-zero;
//   - every array carries exactly one sample element;
//   - struct fields are present (nullable structs too, so their presence
//     marker is 1);
//   - a records field holds one empty 61-byte RecordBatch v2;
//   - tagged fields stay at their defaults, so they are not written and
//     every flexible struct ends with a tagged-field count of 0;
//   - fields absent at the version hold their defaults.
package sample

import (
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/schema"
)

// Body returns the smallest instance of m's body at version v.
func Body(m *schema.Message, v int16) codec.Value {
	return structValue(m.Body, v, 0)
}

// maxDepth guards against self-referencing structs in malformed specs.
const maxDepth = 64

func structValue(s *schema.Struct, v int16, depth int) codec.Value {
	out := codec.KidsValue(make([]codec.Value, len(s.Fields)))
	for i, f := range s.Fields {
		if !f.Versions.Contains(v) || f.IsTagged(v) || depth > maxDepth {
			out.Kids()[i] = codec.DefaultValue(f)
			continue
		}
		out.Kids()[i] = fieldValue(f.Type, v, depth)
	}
	return out
}

func fieldValue(t *schema.Type, v int16, depth int) codec.Value {
	switch t.Kind {
	case schema.KindUUID:
		return codec.BytesValue(make([]byte, 16))
	case schema.KindString, schema.KindBytes:
		return codec.BytesValue([]byte{})
	case schema.KindRecords:
		return codec.BytesValue(records.EmptyBatch())
	case schema.KindArray:
		return codec.KidsValue([]codec.Value{fieldValue(t.Elem, v, depth)})
	case schema.KindStruct:
		return structValue(t.Struct, v, depth+1)
	}
	return codec.Value{} // numbers zero, bool false
}

// Frame returns the smallest request or response frame of api at version
// v: correlation_id 0 and, for requests, client_id "" (not null).
func Frame(api *schema.API, kind schema.MessageType, v int16) *codec.Frame {
	m := api.Request
	if kind == schema.TypeResponse {
		m = api.Response
	}
	return &codec.Frame{Kind: kind, API: api, Version: v, ClientID: []byte{}, Body: Body(m, v)}
}

// Encode encodes the smallest frame of api at v.
func Encode(c *codec.Codec, api *schema.API, kind schema.MessageType, v int16) ([]byte, error) {
	f := Frame(api, kind, v)
	if kind == schema.TypeResponse {
		return c.EncodeResponse(nil, f)
	}
	return c.EncodeRequest(nil, f)
}
