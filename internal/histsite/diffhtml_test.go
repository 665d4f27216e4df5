package histsite

import (
	"fmt"
	"html/template"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/diff"
	"github.com/manifester/manifester/internal/release"
	"github.com/manifester/manifester/internal/schema"
)

// TestDiffPageHTMLMatchesTemplate checks that the Go writer of a diff page
// gives the bytes of the "diffpage" template: for every pair of versions
// of the synthetic specs and of 4.3, and for hostile strings in every
// field of the view.
func TestDiffPageHTMLMatchesTemplate(t *testing.T) {
	check := func(name string, v *diffPageView) {
		t.Helper()
		want, err := execHTML("diffpage", v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := diffPageHTML(v); got != want {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Errorf("%s: differs from the template at byte %d:\n got %q\nwant %q", name, i,
				got[max(0, i-40):min(len(got), i+80)], want[max(0, i-40):min(len(want), i+80)])
		}
	}
	hostile := []string{"", "<script>alert(1)</script>", `a"b'c&d<e>f+g`, "nul\x00", "bad \xff utf8", "javascript:alert(1)", "x/y:z [0]"}
	for i, s := range hostile {
		u := hostile[(i+1)%len(hostile)]
		sub := []fieldView{{Class: s, Mark: u, Text: s}, {Text: u, Fields: []fieldView{{Class: u, Text: s}}}}
		dv := &diffView{API: s, From: 1, To: 3, Messages: []msgView{
			{Kind: s, Message: u, File: s, Flexible: u, FlexChanged: i%2 == 0, Header: s, HeaderChanged: i%3 == 0,
				Size: u, SizeChanged: i%2 == 1, Structs: []structView{{Name: s, Fields: sub, Changed: []string{u, s}}},
				Comments: []diff.Comment{{Text: s, Line: i}, {Text: u, Line: 1000 + i}}},
			{Kind: u, Message: s},
		}}
		check("hostile "+s, &diffPageView{API: s, Release: u, From: int16(i), To: int16(i + 2), Diff: dv,
			Picker: "<form>picker</form>\n", Removed: u})
	}

	pairs := func(t *testing.T, reg *schema.Registry) int {
		c := codec.New(reg)
		n := 0
		for _, api := range reg.APIs {
			if api.Reserved() {
				continue
			}
			for a := api.Request.Valid.Lo; a < api.Request.Valid.Hi; a++ {
				for b := a + 1; b <= api.Request.Valid.Hi; b++ {
					vd, err := diff.Versions(c, api, a, b)
					if err != nil {
						t.Fatal(err)
					}
					check(api.Name, &diffPageView{API: api.Name, Release: reg.Label, From: a, To: b, Diff: diffOf(vd),
						Picker: "<form></form>\n"})
					n++
				}
			}
		}
		return n
	}
	reg, err := schema.Load("../../testdata/specs/everytype")
	if err != nil {
		t.Fatal(err)
	}
	if n := pairs(t, reg); n == 0 {
		t.Error("no pair of the synthetic specs compared")
	}
	t.Run("4.3", func(t *testing.T) {
		if n := pairs(t, loadRelease(t, "4.3").Codec.Reg); n < 700 {
			t.Errorf("only %d pairs of 4.3 compared", n)
		}
	})
}

// TestSectionsHTMLMatchTemplates checks that the Go writers of an API
// page's "changes" and "accepted" sections give the bytes of their
// templates: for hostile strings in every field of the views, and for
// every page of 4.3 with 3.9 and 4.3 loaded and with 4.3 alone (the
// versions only 3.9 defines included).
func TestSectionsHTMLMatchTemplates(t *testing.T) {
	same := func(name string, got template.HTML, want template.HTML) {
		t.Helper()
		if got != want {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Errorf("%s: differs from the template at byte %d:\n got %q\nwant %q", name, i,
				got[max(0, i-40):min(len(got), i+80)], want[max(0, i-40):min(len(want), i+80)])
		}
	}
	hostile := []string{"", "<script>alert(1)</script>", `a"b'c&d<e>f+g`, "nul\x00", "bad \xff utf8", "javascript:alert(1)", "x/y:z [0]"}
	for i, s := range hostile {
		u := hostile[(i+1)%len(hostile)]
		dv := &diffView{API: s, From: 1, To: 3, Messages: []msgView{{Kind: s, Message: u, File: s, Flexible: u,
			Structs:  []structView{{Name: s, Fields: []fieldView{{Class: u, Mark: s, Text: u}}, Changed: []string{s}}},
			Comments: []diff.Comment{{Text: u, Line: i}}}}}
		for _, cv := range []*changesView{
			{API: s, Version: int16(i), Release: u, Diff: dv, Picker: "<form>p</form>\n"},
			{API: s, Version: int16(i), Release: u, Diff: dv, NoLink: true},
			{API: u, Version: 0, Release: s, Older: u, Picker: template.HTML(s)},
			{API: u, Version: 2, Release: s},
		} {
			want, err := execHTML("changes", cv)
			if err != nil {
				t.Fatal(err)
			}
			same("changes "+s, changesHTML(cv), want)
		}
		for _, pv := range []*pickerView{{API: s, Versions: []int16{0, 1, 2}, From: 1, To: 2}, {API: u, Versions: []int16{3}, From: 3, To: 3},
			{API: s}, {API: u, Versions: []int16{4, 5}, From: 9, To: 4}, {API: s, Inputs: true, Lo: 2, Hi: 40, From: 3, To: 4}} {
			want, err := execHTML("picker", pv)
			if err != nil {
				t.Fatal(err)
			}
			same("picker "+s, pickerGo(pv), want)
		}
		for _, av := range []*acceptedView{
			{API: s, Version: 1, Single: true, Newest: u},
			{API: s, Version: 1, Labels: []string{s, u}, Newest: u, Release: s, Rows: []acceptedRow{
				{Version: 0, Link: true, ReqFirst: s, ReqLast: u, RespFirst: s, RespLast: u, Unstable: s, Gone: true},
				{Version: 1, Current: true, Link: true, ReqFirst: u},
				{Version: 2, Current: true},
				{Version: 3, Link: false, Unstable: u}}},
			{API: s, Version: 40, Labels: []string{u}, Newest: s, Release: u, Total: 64, Rows: []acceptedRow{
				{Version: 0, Link: true, ReqFirst: s}, {Version: 40, Current: true, Link: true, GapBefore: true}, {Version: 63, GapBefore: true}}},
			{API: u, Labels: nil},
		} {
			want, err := execHTML("accepted", av)
			if err != nil {
				t.Fatal(err)
			}
			same("accepted "+s, acceptedHTML(av), want)
		}
	}

	// Real releases, and three releases of an API of 64 versions each (the
	// compare form of many versions, windows of the accepted table).
	for _, labels := range [][]string{{"3.9", "4.3"}, {"4.3"}, {"crafted"}} {
		var rels []*release.Release
		if labels[0] == "crafted" {
			rels = disjointReleases(t, 3, 10)
		} else {
			for _, l := range labels {
				rels = append(rels, loadRelease(t, l))
			}
		}
		d, err := compute(rels)
		if err != nil {
			t.Fatal(err)
		}
		tm, err := compute(rels)
		if err != nil {
			t.Fatal(err)
		}
		tm.templates = true
		newest := rels[len(rels)-1]
		n := 0
		for _, api := range newest.Codec.Reg.APIs {
			if api.Reserved() {
				continue
			}
			check := func(api *schema.API, v int16, rel *release.Release) {
				got, err := d.extras(api, v, rel)
				if err != nil {
					t.Fatal(err)
				}
				want, err := tm.extras(api, v, rel)
				if err != nil {
					t.Fatal(err)
				}
				if len(got.Sections) != len(want.Sections) {
					t.Fatalf("%s v%d: %d sections, want %d", api.Name, v, len(got.Sections), len(want.Sections))
				}
				for i := range got.Sections {
					same(fmt.Sprintf("%v %s v%d %s", labels, api.Name, v, got.Sections[i].ID), got.Sections[i].Body, want.Sections[i].Body)
				}
				n++
			}
			for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
				check(api, v, newest)
			}
			for v, ov := range d.old[api.Key] {
				check(ov.api, v, ov.rel)
			}
		}
		if want := 300; labels[0] == "crafted" {
			if n != 3*64 {
				t.Errorf("crafted: %d pages compared", n)
			}
		} else if n < want {
			t.Errorf("%v: only %d pages compared", labels, n)
		}
	}
}
