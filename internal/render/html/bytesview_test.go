package html

import (
	"bytes"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/schema"
)

// hostile are strings that exercise every escaping rule: NUL, the
// characters html/template turns into entities, invalid UTF-8, the
// noncharacters it leaves alone, URL-reserved characters, valid and
// invalid percent escapes and a javascript: URL.
var hostile = []string{
	"", "plain", evilScript, evilAttr, evilQuote, badUTF8, "nul\x00byte", "a+b=c&d",
	"Topics[0].Partitions[1]:x", "caf\u00e9 \ufdd0\uffff", "%41%zz%", "javascript:alert(1)",
	"/errors/#UNKNOWN_SERVER_ERROR", "https://example.invalid/a b?c=d#e", "mailto:x@y", "a/b:c",
}

// TestBytesHTMLMatchesTemplate checks that the Go writer of an API
// section's byte grid and tree gives the bytes of the "bytes" template,
// for hostile strings in every field and for the sections of real pages.
func TestBytesHTMLMatchesTemplate(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, sv *sectionView) {
		t.Helper()
		var want bytes.Buffer
		if err := r.tmpl.ExecuteTemplate(&want, "bytes", sv); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := string(bytesHTML(sv)); got != want.String() {
			i := 0
			for i < len(got) && i < want.Len() && got[i] == want.String()[i] {
				i++
			}
			t.Errorf("%s: differs from the template at byte %d:\n got %q\nwant %q", name, i,
				got[max(0, i-40):min(len(got), i+80)], want.String()[max(0, i-40):min(want.Len(), i+80)])
		}
	}
	for i, s := range hostile {
		u := hostile[(i+1)%len(hostile)]
		sv := &sectionView{Kind: s, Size: i, Hex: s, Error: u,
			Grid: []gridRow{{Off: s, ASCII: u, Pad: make([]struct{}, i%3), Cells: []gridCell{
				{Hex: s, Class: u, R: -1, Off: i, First: true}, {Hex: u, Class: s, R: i, Off: i + 1}}}},
			Tree: []treeRow{
				{ID: s, Prefix: u, Name: s, Type: u, Value: s, Span: u, About: s, Flag: u, Error: "", Class: s,
					Off: i, Size: 2, Parent: -1, Leaf: i%2 == 0, Tags: u, Since: s, ErrHref: u},
				{ID: u, Prefix: s, Name: u, Type: s, Value: u, Span: s, About: u, Flag: "", Error: s, Class: u,
					Off: i + 1, Size: 1, Parent: 0, Leaf: true, ErrHref: s},
			}}
		check("hostile "+s, sv)
	}
	check("empty", &sectionView{})

	reg, err := schema.Load("../../../testdata/specs/everytype")
	if err != nil {
		t.Fatal(err)
	}
	c := codec.New(reg)
	n := 0
	for _, api := range reg.APIs {
		if api.Reserved() {
			continue
		}
		for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
			p, err := page.Build(c, api, v)
			if err != nil {
				t.Fatal(err)
			}
			view, err := r.apiView(&PageInput{Page: p, API: api, RequestHeader: reg.RequestHeader, ResponseHeader: reg.ResponseHeader})
			if err != nil {
				t.Fatal(err)
			}
			for _, sv := range view.Sections {
				check(strings.Join([]string{api.Name, sv.Kind}, " "), sv)
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no sections of the synthetic specs were compared")
	}
}
