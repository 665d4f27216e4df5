package html

import (
	"fmt"
	"slices"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/manifester/manifester/internal/schema"
)

func TestWindow(t *testing.T) {
	all := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	for _, c := range []struct {
		n, at int
		want  []int
	}{
		{0, 0, []int{}},
		{ListMax, 5, all(ListMax)},
		{ListMax + 1, 0, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, ListMax}},
		{100, 50, []int{0, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 99}},
		{100, 99, []int{0, 91, 92, 93, 94, 95, 96, 97, 98, 99}},
		{100, 100, []int{0, 92, 93, 94, 95, 96, 97, 98, 99}}, // the current entry is past the last
		{100, 9, append(all(18), 99)},                        // the window reaches the first entry: no gap
	} {
		if got := Window(c.n, c.at); !slices.Equal(got, c.want) {
			t.Errorf("Window(%d, %d) = %v, want %v", c.n, c.at, got, c.want)
		}
	}
}

// switcherLinks returns the version numbers the switcher's main group and
// older group link, with -1 for each gap, and the current one.
func switcherLinks(t *testing.T, doc *html.Node) (main, older []int, current string) {
	t.Helper()
	navs := findNodes(doc, func(n *html.Node) bool { return n.DataAtom == atom.Nav && attrOf(n, "class") == "versions" })
	if len(navs) != 1 {
		t.Fatalf("%d version switchers", len(navs))
	}
	for _, ul := range findNodes(navs[0], func(n *html.Node) bool { return n.DataAtom == atom.Ul }) {
		var got []int
		for _, li := range findNodes(ul, func(n *html.Node) bool { return n.DataAtom == atom.Li }) {
			if attrOf(li, "class") == "gap" {
				got = append(got, -1)
				continue
			}
			a := findNodes(li, func(n *html.Node) bool { return n.DataAtom == atom.A })[0]
			var v int
			if _, err := fmt.Sscanf(attrOf(a, "href"), "/apis/Big/v%d/", &v); err != nil {
				t.Fatalf("href %q", attrOf(a, "href"))
			}
			got = append(got, v)
			if attrOf(a, "aria-current") == "page" {
				current = attrOf(a, "href")
			}
		}
		if attrOf(ul, "class") == "older" {
			older = got
		} else {
			main = got
		}
	}
	return main, older, current
}

// TestSwitcherWindow renders pages of an API with 200 versions and 100
// older ones: each switcher group shows a window around the current
// version, the first and the last, with gaps between, so that the
// switchers of V pages hold O(V) links, not V². The Go writer gives the
// template's bytes.
func TestSwitcherWindow(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	newest := &schema.Message{Valid: schema.Versions{Lo: 100, Hi: 299}, Flexible: schema.Versions{Lo: 150, Hi: schema.MaxVersion}}
	var older []OlderVersion
	for v := range 100 {
		older = append(older, OlderVersion{V: int16(v), Href: fmt.Sprintf("/apis/Big/v%d/", v), Title: "built from 1.0"})
	}
	span := func(lo, hi int) []int {
		var out []int
		for v := lo; v <= hi; v++ {
			out = append(out, v)
		}
		return out
	}
	join := func(parts ...[]int) []int { return slices.Concat(parts...) }
	for _, c := range []struct {
		v           int16
		main, older []int
	}{
		{200, join([]int{100, -1}, span(192, 208), []int{-1, 299}), []int{0, -1, 92, 93, 94, 95, 96, 97, 98, 99}},
		{100, join(span(100, 108), []int{-1, 299}), []int{0, -1, 92, 93, 94, 95, 96, 97, 98, 99}},
		{50, join(span(100, 108), []int{-1, 299}), join([]int{0, -1}, span(42, 58), []int{-1, 99})},
	} {
		p := evilPage()
		p.API, p.Version = "Big", c.v
		in := &PageInput{Page: p, API: &schema.API{Name: "Big", Request: newest, Response: newest},
			Extras: Extras{Switcher: newest, Older: older}}
		got, err := r.PageHTML(in)
		if err != nil {
			t.Fatal(err)
		}
		sameAsTemplate(t, fmt.Sprintf("Big v%d", c.v), got, templatePage(t, r, in))
		doc := checkSafe(t, got)
		main, old, current := switcherLinks(t, doc)
		if !slices.Equal(main, c.main) {
			t.Errorf("v%d: main group %v, want %v", c.v, main, c.main)
		}
		if !slices.Equal(old, c.older) {
			t.Errorf("v%d: older group %v, want %v", c.v, old, c.older)
		}
		if want := fmt.Sprintf("/apis/Big/v%d/", c.v); current != want {
			t.Errorf("v%d: current %q", c.v, current)
		}
	}
}
