// Package vectors produces test vectors: the smallest request and response
// of every API at every valid version, as JSON lines that other tools check
// themselves against.
package vectors

import (
	"encoding/hex"
	"encoding/json"
	"io"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
)

// Vector is one test vector. The JSON field names are a published format:
// keep them.
type Vector struct {
	APIKey        int16  `json:"api_key"`
	Name          string `json:"name"`
	Version       int16  `json:"version"`
	Kind          string `json:"kind"` // "request" or "response"
	HeaderVersion int16  `json:"header_version"`
	Size          int    `json:"size"`
	Hex           string `json:"hex"`
}

// Generate returns every vector of the registry, sorted by api_key,
// version, then kind (request before response).
func Generate(c *codec.Codec) ([]Vector, error) {
	var out []Vector
	for _, api := range c.Reg.APIs {
		if api.Reserved() {
			continue
		}
		for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
			for _, kind := range []schema.MessageType{schema.TypeRequest, schema.TypeResponse} {
				b, err := sample.Encode(c, api, kind, v)
				if err != nil {
					return nil, err
				}
				m := api.Request
				if kind == schema.TypeResponse {
					m = api.Response
				}
				out = append(out, Vector{
					APIKey: api.Key, Name: api.Name, Version: v, Kind: kind.String(),
					HeaderVersion: m.HeaderVersion(v), Size: len(b), Hex: hex.EncodeToString(b),
				})
			}
		}
	}
	return out, nil
}

// Write writes vectors as JSON lines.
func Write(w io.Writer, vs []Vector) error {
	enc := json.NewEncoder(w)
	for i := range vs {
		if err := enc.Encode(&vs[i]); err != nil {
			return err
		}
	}
	return nil
}
