package html

import (
	"bytes"
	"fmt"
	"html/template"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/schema"
)

// sameAsTemplate fails when got differs from want, showing where.
func sameAsTemplate(t *testing.T, name string, got []byte, want string) {
	t.Helper()
	if string(got) == want {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Errorf("%s: differs from the template at byte %d:\n got %q\nwant %q", name, i,
		got[max(0, i-40):min(len(got), i+80)], want[max(0, i-40):min(len(want), i+80)])
}

// templatePage renders an API page with the "api" template.
func templatePage(t *testing.T, r *Renderer, in *PageInput) string {
	t.Helper()
	_, l, err := r.apiPage(in)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := r.tmpl.ExecuteTemplate(&want, "api", l); err != nil {
		t.Fatal(err)
	}
	return want.String()
}

// TestPageHTMLMatchesTemplate checks that the Go writer of an API page
// gives the bytes of the "api" template: for every page of the synthetic
// specs, plain and with extras (badges, older versions, a note, summary
// items and sections, a switcher and a footer), and for hostile strings in
// every field the page shows, navigation and footer included.
func TestPageHTMLMatchesTemplate(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, in *PageInput) {
		t.Helper()
		want := templatePage(t, r, in)
		got, err := r.PageHTML(in)
		if err != nil {
			t.Fatal(err)
		}
		sameAsTemplate(t, name, got, want)
		var w bytes.Buffer
		if err := r.Page(&w, in); err != nil {
			t.Fatal(err)
		}
		sameAsTemplate(t, name+" (Page)", w.Bytes(), want)
	}
	n := 0
	for _, dir := range []string{"everytype", "headerv3", "escapes"} {
		reg, err := schema.Load("../../../testdata/specs/" + dir)
		if err != nil {
			t.Fatal(err)
		}
		c := codec.New(reg)
		for _, api := range reg.APIs {
			if api.Reserved() {
				continue
			}
			for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
				p, err := page.Build(c, api, v)
				if err != nil {
					t.Fatal(err)
				}
				in := &PageInput{Page: p, API: api, RequestHeader: reg.RequestHeader, ResponseHeader: reg.ResponseHeader}
				name := fmt.Sprintf("%s/%s v%d", dir, api.Name, v)
				r.Nav, r.Footer = nil, ""
				check(name, in)
				r.Nav, r.Footer = []Link{{Href: "/releases/", Text: "Releases"}, {Href: "/errors/", Text: "Errors"}}, "Kafka test specs."
				check(name+" with nav", in)
				in.Extras = Extras{
					Summary:  []page.Item{{Label: "Accepted", Value: "3.9 to 4.3"}},
					Sections: []Section{{ID: "changes", Title: "Changes", Body: "<p>changed</p>"}, {ID: "accepted", Title: "Accepted by Kafka", Body: "<table></table>"}},
					Badges:   []Badge{{Class: "removed", Text: "removed", Title: "removed in 4.0"}},
					Intro:    "removed in Kafka 4.0",
					Footer:   "Kafka 3.9 message specs.",
					Older:    []OlderVersion{{V: api.Request.Valid.Lo, Href: "/apis/X/v0/", Title: "built from 3.9"}, {V: 99, Href: "/apis/X/v99/", Title: "gone"}},
					Switcher: api.Request,
				}
				check(name+" with extras", in)
				n++
			}
		}
	}
	if n < 5 {
		t.Fatalf("compared only %d pages of the synthetic specs", n)
	}

	reg, err := schema.Load("../../../testdata/specs/everytype")
	if err != nil {
		t.Fatal(err)
	}
	var api *schema.API
	for _, a := range reg.APIs {
		if !a.Reserved() {
			api = a
			break
		}
	}
	base, err := page.Build(codec.New(reg), api, api.Request.Valid.Hi)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range hostile {
		u := hostile[(i+1)%len(hostile)]
		p := *base
		p.API, p.Intro = s, u
		p.Summary = []page.Item{{Label: s, Value: u}}
		req, resp := *base.Request, *base.Response
		req.Title, req.Error, req.Schema = s, u, s
		resp.Title = u
		p.Request, p.Response = &req, &resp
		r.Nav, r.Footer = []Link{{Href: s, Text: u}, {Href: u, Text: s}}, s
		in := &PageInput{Page: &p, API: api, RequestHeader: reg.RequestHeader, ResponseHeader: reg.ResponseHeader, Extras: Extras{
			Summary:  []page.Item{{Label: u, Value: s}},
			Sections: []Section{{ID: s, Title: u, Body: template.HTML(s)}},
			Badges:   []Badge{{Class: s, Text: u, Title: s}},
			Intro:    s,
			Footer:   u,
			Older:    []OlderVersion{{V: 1, Href: s, Title: u}, {V: api.Request.Valid.Hi, Href: u, Title: s}},
		}}
		check(fmt.Sprintf("hostile %q", s), in)
	}
}

// TestDocHTMLMatchesTemplate checks that the Go writer of a document page
// gives the bytes of the "doc" template, for hostile titles, bodies,
// navigation and footers.
func TestDocHTMLMatchesTemplate(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range hostile {
		u := hostile[(i+1)%len(hostile)]
		for _, nav := range [][]Link{nil, {{Href: s, Text: u}, {Href: "/releases/", Text: s}}} {
			r.Nav, r.Footer = nav, u
			body := template.HTML("<p>" + s + "</p>\n")
			var want bytes.Buffer
			if err := r.tmpl.ExecuteTemplate(&want, "doc", r.layout(s, "doc", r.Footer, body)); err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("doc %q nav %d", s, len(nav))
			sameAsTemplate(t, name, r.DocHTML(s, body), want.String())
			var w bytes.Buffer
			if err := r.Doc(&w, s, body); err != nil {
				t.Fatal(err)
			}
			sameAsTemplate(t, name+" (Doc)", w.Bytes(), want.String())
		}
	}
}

// TestSectionHTMLMatchesTemplate checks the Go writer of a page section
// against the "section" template for hostile strings in the tagged-field
// table, the untagged structs, the schema file name and the headings, at
// flexible and non-flexible versions.
func TestSectionHTMLMatchesTemplate(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range hostile {
		u := hostile[(i+1)%len(hostile)]
		for _, flex := range []bool{false, true} {
			sv := &sectionView{ID: s, Kind: u, Heading: s, Title: u, Hex: s, Flex: flex, Version: int16(i), File: u,
				Schema: template.HTML(s), Untaged: []string{s, u},
				Tagged: []taggedStruct{{Struct: s, Fields: []taggedField{{Tag: int32(i), Name: u, Type: s, Versions: u, About: s}, {Tag: 7, Name: s, Type: u, Versions: s, About: u}}},
					{Struct: u, Fields: []taggedField{{Name: s, About: u}}}}}
			if i%3 == 0 {
				sv.Untaged, sv.File = nil, ""
			}
			if i%4 == 1 {
				sv.Tagged = nil
			}
			var want bytes.Buffer
			if err := r.tmpl.ExecuteTemplate(&want, "section", sv); err != nil {
				t.Fatal(err)
			}
			sameAsTemplate(t, fmt.Sprintf("section %q flex %v", s, flex), appendSection(nil, sv), want.String())
		}
	}
}
