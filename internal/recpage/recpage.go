// Package recpage builds the reference page of one record type of Kafka's
// internal topics (package recschema) at one version: a summary, the
// smallest instance as it sits in a record's key or value (with the
// framing Kafka's serdes write: record type or version, or the metadata
// frame), its annotated tree, and the schema text. Like package page, it is
// plain data, rendered by `manifester show` and the site.
package recpage

import (
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/recschema"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/wire"
)

// Page is the page of one record type at one version.
type Page struct {
	Release  string      `json:"release"`
	Module   string      `json:"module"`
	Topic    string      `json:"topic,omitempty"`
	Name     string      `json:"name"`
	Type     string      `json:"type"` // coordinator-key, coordinator-value, metadata, data
	APIKey   int16       `json:"api_key"`
	Version  int16       `json:"version"`
	Versions string      `json:"versions"`
	Flexible string      `json:"flexible_versions"`
	Summary  []page.Item `json:"summary"`
	// Part says where the bytes go: "record key", "record value" or
	// "message" (a data type, which no record frames).
	Part   string `json:"part"`
	Title  string `json:"title"`
	Size   int    `json:"size"`
	Hex    string `json:"hex"`
	Schema string `json:"schema"`
	Bytes  []byte `json:"-"`
	// Spans is the annotated tree of Bytes, the one renderers read.
	Spans *span.Tree `json:"-"`
}

// Build builds the page of r at version v (the highest when v < 0).
func Build(c *codec.Codec, r *recschema.Record, v int16) (*Page, error) {
	m := r.Msg
	if m.Reserved() {
		return nil, fmt.Errorf("%s has no valid versions", m.Name)
	}
	if v < 0 {
		v = m.Valid.Hi
	}
	if !m.Valid.Contains(v) {
		return nil, fmt.Errorf("%w: %s v%d; valid versions are %s", codec.ErrVersion, m.Name, v, m.Valid)
	}
	val := sample.Body(m, v)
	body, err := c.EncodeBody(nil, m, v, &val)
	if err != nil {
		return nil, fmt.Errorf("%s v%d: %w", m.Name, v, err)
	}
	p := &Page{Release: r.Module.Reg.Label, Module: r.Module.Name, Topic: r.Module.Topic, Name: m.Name, Type: m.Type.String(),
		APIKey: m.APIKey, Version: v, Versions: m.Valid.String(), Flexible: m.Flexible.String(), Schema: page.SchemaText(m.Source)}
	var data []byte
	var tree *span.Tree
	switch m.Type {
	case schema.TypeCoordinatorKey:
		p.Part = "record key"
		data = append(wire.AppendInt16(nil, m.APIKey), body...)
		tree = c.RecordPart(r.Module, true, m.APIKey, data, span.CatRecord, codec.Options{Sample: true})
	case schema.TypeCoordinatorValue:
		p.Part = "record value"
		data = append(wire.AppendInt16(nil, v), body...)
		tree = c.RecordPart(r.Module, false, m.APIKey, data, span.CatRecord, codec.Options{Sample: true})
	case schema.TypeMetadata:
		p.Part = "record value"
		data = wire.AppendUvarint(nil, 1)
		data = wire.AppendUvarint(data, uint32(m.APIKey))
		data = wire.AppendUvarint(data, uint32(v))
		data = append(data, body...)
		tree = c.RecordPart(r.Module, false, m.APIKey, data, span.CatRecord, codec.Options{Sample: true})
	default:
		p.Part = "message"
		data = body
		if _, tree, err = c.DecodeBody(m, v, data, codec.Options{Spans: true, Sample: true}); err != nil {
			return nil, fmt.Errorf("%s v%d: decoding our own encoding: %w", m.Name, v, err)
		}
	}
	if fl := tree.Flag(tree.Root()); fl != "" {
		return nil, fmt.Errorf("%s v%d: decoding our own encoding: %s", m.Name, v, fl)
	}
	p.Bytes, p.Size, p.Hex = data, len(data), hex.EncodeToString(data)
	p.Spans = tree
	p.Spans.Reg = c.Reg
	p.Spans.Sample = true // a smallest instance: its zeros read bare
	p.Title = fmt.Sprintf("%s v%d as a %s, %d bytes", m.Name, v, p.Part, len(data))
	topic := p.Topic
	if topic == "" {
		topic = "none (not an internal topic's record)"
	}
	p.Summary = []page.Item{
		{Label: "Module", Value: p.Module},
		{Label: "Topic", Value: topic},
		{Label: "Type", Value: p.Type},
		{Label: "API key", Value: apiKeyText(m)},
		{Label: "Encoded at", Value: "v" + strconv.Itoa(int(v))},
		{Label: "Valid versions", Value: p.Versions},
		{Label: "Flexible versions", Value: p.Flexible},
		{Label: "Size", Value: fmt.Sprintf("%d bytes", len(data))},
	}
	return p, nil
}

func apiKeyText(m *schema.Message) string {
	if m.APIKey < 0 {
		return "none"
	}
	return strconv.Itoa(int(m.APIKey))
}

// Versions lists the valid versions of a record type, lowest first.
func Versions(m *schema.Message) []int16 {
	var out []int16
	for v := m.Valid.Lo; !m.Valid.Empty() && v <= m.Valid.Hi; v++ {
		out = append(out, v)
		if v == schema.MaxVersion {
			break
		}
	}
	return out
}
