package histsite

import (
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/diff"
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
