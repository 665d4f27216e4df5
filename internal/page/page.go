// Package page builds the reference page of one API at one version: the
// summary, the smallest request and response with their bytes and
// annotated trees, and the message schemas. The page is plain data (it is
// also the JSON document that `manifester show --format json` prints and the
// site serves); renderers in package render turn it into text or HTML.
package page

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// Page is the reference page of one API at one version.
type Page struct {
	Release               string `json:"release"`
	API                   string `json:"api"`
	APIKey                int16  `json:"api_key"`
	Version               int16  `json:"version"`
	Flexible              bool   `json:"flexible"`
	FlexibleVersions      string `json:"flexible_versions"`
	RequestVersions       string `json:"request_versions"`
	ResponseVersions      string `json:"response_versions"`
	RequestHeaderVersion  int16  `json:"request_header_version"`
	ResponseHeaderVersion int16  `json:"response_header_version"`
	// RequestHeaderFromSpec and ResponseHeaderFromSpec say the header
	// version comes from the spec's "headerVersions" map (KIP-1313); when
	// false (and absent from the JSON) it is derived from flexibleVersions.
	RequestHeaderFromSpec  bool     `json:"request_header_from_spec,omitempty"`
	ResponseHeaderFromSpec bool     `json:"response_header_from_spec,omitempty"`
	Listeners              []string `json:"listeners"`
	LatestVersionUnstable  bool     `json:"latest_version_unstable"`
	Intro                  string   `json:"intro"`
	Summary                []Item   `json:"summary"`
	Request                *Section `json:"request"`
	Response               *Section `json:"response"`
}

// Item is one summary entry ("API key" = "33").
type Item struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// Section is the request or the response of a page.
type Section struct {
	Kind          string `json:"kind"` // "request" or "response"
	Message       string `json:"message"`
	Title         string `json:"title"`
	HeaderVersion int16  `json:"header_version"`
	// HeaderFromSpec says HeaderVersion comes from the spec's
	// "headerVersions" map rather than being derived.
	HeaderFromSpec bool   `json:"header_from_spec,omitempty"`
	Size           int    `json:"size"`
	Hex            string `json:"hex"`
	Schema         string `json:"schema"`
	Error          string `json:"error,omitempty"`
	// Bytes is the encoded frame (not serialized; Hex carries it).
	Bytes []byte `json:"-"`
	// Spans is the frame's annotated tree, the one renderers read.
	Spans *span.Tree `json:"-"`
}

// Build builds the page of api at version v (the highest valid version when
// v < 0).
func Build(c *codec.Codec, api *schema.API, v int16) (*Page, error) {
	req, resp := api.Request, api.Response
	if req.Reserved() {
		return nil, fmt.Errorf("%s (key %d) is reserved: it has no valid versions", api.Name, api.Key)
	}
	if v < 0 {
		v = req.Valid.Hi
	}
	if !req.Valid.Contains(v) {
		return nil, fmt.Errorf("%w: %s v%d; valid versions are %s", codec.ErrVersion, api.Name, v, req.Valid)
	}
	p := &Page{
		Release: c.Reg.Label, API: api.Name, APIKey: api.Key, Version: v,
		Flexible: req.IsFlexible(v), FlexibleVersions: req.Flexible.String(),
		RequestVersions: req.Valid.String(), ResponseVersions: resp.Valid.String(),
		RequestHeaderVersion: req.HeaderVersion(v), ResponseHeaderVersion: resp.HeaderVersion(v),
		RequestHeaderFromSpec: req.HeaderFromSpec(v), ResponseHeaderFromSpec: resp.HeaderFromSpec(v),
		Listeners: req.Listeners, LatestVersionUnstable: req.LatestVersionUnstable,
	}
	if p.Listeners == nil {
		p.Listeners = []string{} // JSON [] rather than null
	}
	p.Intro = Intro(v, p.Flexible)
	var err error
	if p.Request, err = section(c, api, schema.TypeRequest, v); err != nil {
		return nil, err
	}
	if p.Response, err = section(c, api, schema.TypeResponse, v); err != nil {
		return nil, err
	}
	p.Summary = []Item{
		{"API key", strconv.Itoa(int(api.Key))},
		{"Encoded at", "v" + strconv.Itoa(int(v))},
		{"Flexible versions", p.FlexibleVersions},
		{"Headers", fmt.Sprintf("req v%d%s, resp v%d%s", p.RequestHeaderVersion, fromSpec(p.RequestHeaderFromSpec), p.ResponseHeaderVersion, fromSpec(p.ResponseHeaderFromSpec))},
		{"Request versions", p.RequestVersions},
		{"Response versions", p.ResponseVersions},
		{"Request size", fmt.Sprintf("%d bytes", p.Request.Size)},
		{"Response size", fmt.Sprintf("%d bytes", p.Response.Size)},
	}
	return p, nil
}

// fromSpec is the note after a header version taken from the spec's
// "headerVersions" map; a derived version has none.
func fromSpec(b bool) string {
	if b {
		return " (from headerVersions)"
	}
	return ""
}

// Intro is the page's opening paragraph.
func Intro(v int16, flexible bool) string {
	const rule = "This page encodes the smallest legal instance of the request and the response: numeric fields are zero, strings and byte arrays are empty, every array carries exactly one sample element, and any records field holds one empty 61-byte RecordBatch v2. "
	const tail = " Sizes below include the leading int32 size prefix."
	if flexible {
		return rule + fmt.Sprintf("Version %d is a flexible version, so every struct is terminated by a uvarint tagged-field count and strings and arrays carry compact length-plus-one prefixes.", v) + tail
	}
	return rule + fmt.Sprintf("Version %d is not a flexible version, so strings carry int16 length prefixes, bytes and arrays int32 ones, and structs have no tagged-field section.", v) + tail
}

func section(c *codec.Codec, api *schema.API, kind schema.MessageType, v int16) (*Section, error) {
	m := api.Request
	s := &Section{Kind: "request"}
	if kind == schema.TypeResponse {
		m, s.Kind = api.Response, "response"
	}
	b, err := sample.Encode(c, api, kind, v)
	if err != nil {
		return nil, fmt.Errorf("%s v%d %s: %w", api.Name, v, s.Kind, err)
	}
	opts := codec.Options{Spans: true, Sample: true}
	var f *codec.Frame
	if kind == schema.TypeResponse {
		f, err = c.DecodeResponse(b, api, v, opts)
	} else {
		f, err = c.DecodeRequest(b, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("%s v%d %s: decoding our own encoding: %w", api.Name, v, s.Kind, err)
	}
	s.Message = m.Name
	s.HeaderVersion = f.HeaderVersion
	s.Size = len(b)
	s.Bytes = b
	s.Hex = hex.EncodeToString(b)
	s.HeaderFromSpec = m.HeaderFromSpec(v)
	s.Title = fmt.Sprintf("%s v%d, %s header v%d%s, %d bytes on the wire", m.Name, v, s.Kind, f.HeaderVersion, fromSpec(s.HeaderFromSpec), len(b))
	s.Spans = f.SpanTree()
	s.Schema = SchemaText(m.Source)
	return s, nil
}

// SchemaText is the spec file as shown on a page: from the opening brace
// of the message (the licence header is dropped), comments kept.
func SchemaText(src []byte) string {
	if i := openingBrace(src); i >= 0 {
		src = src[i:]
	}
	return strings.TrimRight(string(src), "\n") + "\n"
}

// openingBrace finds the first '{' outside // and /* */ comments, so a
// brace inside the header comment does not cut the text short.
func openingBrace(src []byte) int {
	for i := 0; i < len(src); i++ {
		switch {
		case src[i] == '{':
			return i
		case bytes.HasPrefix(src[i:], []byte("//")):
			j := bytes.IndexByte(src[i:], '\n')
			if j < 0 {
				return -1
			}
			i += j
		case bytes.HasPrefix(src[i:], []byte("/*")):
			j := bytes.Index(src[i+2:], []byte("*/"))
			if j < 0 {
				return -1
			}
			i += j + 3
		}
	}
	return -1
}
