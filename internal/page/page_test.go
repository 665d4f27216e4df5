package page_test

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/render/jsonr"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testshared"
)

const (
	everyType = "../../testdata/specs/everytype"
)

func load(t *testing.T, dir string) *codec.Codec {
	t.Helper()
	reg, err := schema.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return codec.New(reg)
}

// TestEveryVersion builds the page of every 4.3 API at every valid version
// and checks what holds for all of them.
func TestEveryVersion(t *testing.T) {
	c := load(t, testshared.Spec(t, "4.3"))
	pages := 0
	for _, api := range c.Reg.APIs {
		if api.Reserved() {
			if _, err := page.Build(c, api, -1); err == nil || !strings.Contains(err.Error(), "reserved") {
				t.Errorf("%s: err = %v, want a reserved-key error", api.Name, err)
			}
			continue
		}
		for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
			p, err := page.Build(c, api, v)
			if err != nil {
				t.Errorf("%s v%d: %v", api.Name, v, err)
				continue
			}
			pages++
			if p.Version != v || p.APIKey != api.Key || p.API != api.Name || p.Release != "4.3" {
				t.Errorf("%s v%d: page header %+v", api.Name, v, p)
			}
			if p.Flexible != api.Request.IsFlexible(v) {
				t.Errorf("%s v%d: flexible %v", api.Name, v, p.Flexible)
			}
			labels := []string{"API key", "Encoded at", "Flexible versions", "Headers", "Request versions", "Response versions", "Request size", "Response size"}
			for i, it := range p.Summary {
				if i >= len(labels) || it.Label != labels[i] {
					t.Errorf("%s v%d: summary item %d %q", api.Name, v, i, it.Label)
				}
			}
			for _, s := range []*page.Section{p.Request, p.Response} {
				if s.Size != len(s.Bytes) || s.Hex != hex.EncodeToString(s.Bytes) || s.Spans == nil || s.Spans.Root() == span.None ||
					s.Spans.N(s.Spans.Root()).Off != 0 || int(s.Spans.N(s.Spans.Root()).Len) != s.Size {
					t.Errorf("%s v%d %s: size %d, %d bytes, tree %v", api.Name, v, s.Kind, s.Size, len(s.Bytes), s.Spans != nil)
				}
				if !strings.HasPrefix(s.Schema, "{") || strings.Contains(s.Schema, "Licensed to the Apache") {
					t.Errorf("%s v%d %s: schema text keeps the licence header", api.Name, v, s.Kind)
				}
			}
			if p.Request.HeaderVersion != api.Request.HeaderVersion(v) || p.Response.HeaderVersion != api.Response.HeaderVersion(v) {
				t.Errorf("%s v%d: header versions %d/%d", api.Name, v, p.Request.HeaderVersion, p.Response.HeaderVersion)
			}
		}
	}
	if pages != 302 {
		t.Errorf("%d pages, want 302", pages)
	}
}

func TestBuildErrors(t *testing.T) {
	c := load(t, testshared.Spec(t, "4.3"))
	api, _ := c.Reg.API(33)
	if _, err := page.Build(c, api, 3); !errors.Is(err, codec.ErrVersion) || !strings.Contains(err.Error(), "0-2") {
		t.Errorf("v3: err = %v, want ErrVersion naming 0-2", err)
	}
	p, err := page.Build(c, api, -1)
	if err != nil || p.Version != 2 {
		t.Errorf("default version = %v, %v; want 2", p.Version, err)
	}
}

func TestIntro(t *testing.T) {
	const rule = "This page encodes the smallest legal instance of the request and the response: numeric fields are zero, strings and byte arrays are empty, every array carries exactly one sample element, and any records field holds one empty 61-byte RecordBatch v2. "
	const tail = " Sizes below include the leading int32 size prefix."
	flex := page.Intro(2, true)
	if flex != rule+"Version 2 is a flexible version, so every struct is terminated by a uvarint tagged-field count and strings and arrays carry compact length-plus-one prefixes."+tail {
		t.Errorf("flexible intro = %q", flex)
	}
	classic := page.Intro(0, false)
	if classic != rule+"Version 0 is not a flexible version, so strings carry int16 length prefixes, bytes and arrays int32 ones, and structs have no tagged-field section."+tail {
		t.Errorf("classic intro = %q", classic)
	}
}

func TestSchemaText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"// Licence {not the start}\n/* more { */\n{\n  \"a\": 1 // x\n}\n\n\n", "{\n  \"a\": 1 // x\n}\n"},
		{"{\"a\": 1}", "{\"a\": 1}\n"},
		{"no object here", "no object here\n"},
	}
	for _, c := range cases {
		if got := page.SchemaText([]byte(c.in)); got != c.want {
			t.Errorf("SchemaText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSyntheticPage: a page of the synthetic spec set, whose request header
// version is explicit, shows it in the summary.
func TestSyntheticPage(t *testing.T) {
	c := load(t, everyType)
	api, _ := c.Reg.API(1000)
	p, err := page.Build(c, api, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Summary[3].Value != "req v2 (from headerVersions), resp v1 (from headerVersions)" || p.Request.HeaderVersion != 2 || p.Response.HeaderVersion != 1 {
		t.Errorf("headers = %q, %d/%d", p.Summary[3].Value, p.Request.HeaderVersion, p.Response.HeaderVersion)
	}
	if !p.Request.HeaderFromSpec || !p.RequestHeaderFromSpec || !strings.Contains(p.Request.Title, "request header v2 (from headerVersions),") {
		t.Errorf("request header from the spec: %v %v %q", p.Request.HeaderFromSpec, p.RequestHeaderFromSpec, p.Request.Title)
	}
	// PlainRequest has no listeners: the JSON says [], not null. Its header
	// versions are derived: the summary and titles say nothing more, and
	// the JSON has no header_from_spec keys.
	plain, _ := c.Reg.API(1001)
	pp, err := page.Build(c, plain, 0)
	if err != nil {
		t.Fatal(err)
	}
	js := jsonr.AppendPage(nil, pp)
	if !strings.Contains(string(js), `"listeners":[]`) {
		t.Errorf("listeners in %s", js)
	}
	if strings.Contains(string(js), "from_spec") || pp.Summary[3].Value != "req v1, resp v0" || pp.Request.Title != "PlainRequest v0, request header v1, 15 bytes on the wire" {
		t.Errorf("derived headers: %q %q in %s", pp.Summary[3].Value, pp.Request.Title, js)
	}
	if js := jsonr.AppendPage(nil, p); !strings.Contains(string(js), `"request_header_from_spec":true,"response_header_from_spec":true`) || !strings.Contains(string(js), `"header_from_spec":true`) {
		t.Errorf("explicit headers in the JSON: %s", js)
	}
	if !strings.HasPrefix(p.Request.Schema, "{\n  \"apiKey\": 1000,") {
		t.Errorf("schema text starts %q", p.Request.Schema[:min(40, len(p.Request.Schema))])
	}
}
