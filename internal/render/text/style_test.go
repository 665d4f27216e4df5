package text

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

const everyTypeDir = "../../../testdata/specs/everytype"

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// longTree is a tree with descriptions longer than the reference cut, a
// deep path and a CJK value.
func longTree() TNode {
	long := "The first sentence of a long description that goes well past the seventy-eight characters the reference pages show; the second sentence ends here."
	return TNode{Name: "ThingRequest", Type: "message v1", Len: 20, Cat: span.CatRequestBody, Kids: []TNode{
		{Name: "Frame", Len: 4, Cat: span.CatFrame, About: "length-delimited framing", Kids: []TNode{
			{Name: "size", Type: "int32", Val: span.ValInt, Int: 16, Len: 4, Cat: span.CatFrame, About: long},
		}},
		{Name: "Topics", Type: "[]Topic", Val: span.ValArray, Int: 1, Off: 4, Len: 16, Cat: span.CatRequestBody, About: "Each topic.", Kids: []TNode{
			{Name: "Topic", Elem: 1, Type: "Topic", Val: span.ValStruct, Off: 4, Len: 16, Cat: span.CatRequestBody, Kids: []TNode{
				{Name: "Name", Type: "string", Val: span.ValString, Bytes: []byte("注文トピック"), Enc: span.EncInt16, Prefix: 18, Off: 4, Len: 20, Cat: span.CatRequestBody, About: long + " " + long},
				{Name: "Broken", Type: "int8", Val: span.ValInt, Int: 1, Off: 24, Len: 1, Cat: span.CatRequestBody, Err: "crafted \x1b[2Jescape in an error"},
			}},
		}},
	}}
}

// words is the text of rendered output with the tree drawing removed, as
// one space-separated string, to find descriptions that were wrapped.
func words(s string) string {
	var out []string
	for _, f := range strings.Fields(ansi.ReplaceAllString(s, "")) {
		if f == "|" || f == "+--" {
			continue
		}
		out = append(out, f)
	}
	return strings.Join(out, " ")
}

func TestTreeStyleFitsWidth(t *testing.T) {
	root := longTree()
	tree := BuildTree(root)
	var ref bytes.Buffer
	Tree(&ref, tree)
	if !strings.Contains(ref.String(), "...") {
		t.Fatalf("the reference tree cuts no description:\n%s", ref.String())
	}
	var walk func(n TNode, f func(TNode))
	walk = func(n TNode, f func(TNode)) {
		f(n)
		for _, k := range n.Kids {
			walk(k, f)
		}
	}
	for _, width := range []int{300, 120, 80, 60, 40} {
		for _, color := range []bool{false, true} {
			var b bytes.Buffer
			TreeStyle(&b, tree, Style{Width: width, Color: color})
			out := b.String()
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if w := cells(ansi.ReplaceAllString(l, "")); w > width {
					t.Errorf("width %d: line of %d cells: %q", width, w, l)
				}
			}
			if strings.Contains(out, "...") {
				t.Errorf("width %d: a description was cut:\n%s", width, out)
			}
			text := words(out)
			walk(root, func(n TNode) {
				if n.About != "" && !strings.Contains(text, strings.Join(strings.Fields(n.About), " ")) {
					t.Errorf("width %d: description of %s not in full:\n%s", width, n.Name, out)
				}
			})
			if strings.Contains(out, "\x1b[2J") {
				t.Errorf("width %d: an escape sequence from the input reached the output", width)
			}
			if color != strings.Contains(out, "\x1b[") {
				t.Errorf("width %d: colour %v but escapes %v", width, color, !color)
			}
			if color && !strings.Contains(out, "\x1b["+colorError+"mERROR: crafted") {
				t.Errorf("width %d: the error is not red:\n%q", width, out)
			}
		}
	}
	// Wide: one line per row, descriptions in full whatever the width.
	var b bytes.Buffer
	TreeStyle(&b, tree, Style{Width: 40, Wide: true})
	if n, want := strings.Count(b.String(), "\n"), 7; n != want {
		t.Errorf("wide: %d lines, want %d:\n%s", n, want, b.String())
	}
	if !strings.Contains(b.String(), root.Kids[1].Kids[0].Kids[0].About) {
		t.Errorf("wide: description not in full")
	}
}

// TestCJKColumns: a value with wide characters does not shift the columns
// after it (widths count terminal cells), in the reference tree too.
func TestCJKColumns(t *testing.T) {
	root := BuildTree(TNode{Name: "M", Type: "message", Kids: []TNode{
		{Name: "A", Type: "string", Val: span.ValString, Bytes: []byte("注文"), Len: 7, About: "wide"},
		{Name: "B", Type: "string", Val: span.ValString, Bytes: []byte("abcd"), Off: 7, Len: 7, About: "narrow"},
	}})
	for _, st := range []Style{{}, {Width: 200}} {
		var b bytes.Buffer
		TreeStyle(&b, root, st)
		lines := strings.Split(b.String(), "\n")
		col := func(l, s string) int { return cells(l[:strings.Index(l, s)]) }
		if a, c := col(lines[1], "[0x"), col(lines[2], "[0x"); a != c {
			t.Errorf("%+v: [offset, size] at cell %d and %d:\n%s", st, a, c, b.String())
		}
	}
}

// TestPageStyleColorOnly: colour without a width is the reference page
// with escapes added, nothing else changed.
func TestPageStyleColorOnly(t *testing.T) {
	reg, err := schema.Load(everyTypeDir)
	if err != nil {
		t.Fatal(err)
	}
	api, err := reg.Lookup("EveryType")
	if err != nil {
		t.Fatal(err)
	}
	p, err := page.Build(codec.New(reg), api, -1)
	if err != nil {
		t.Fatal(err)
	}
	var ref, col bytes.Buffer
	if err := Page(&ref, p); err != nil {
		t.Fatal(err)
	}
	if err := PageStyle(&col, p, Style{Color: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(col.String(), "\x1b[") {
		t.Fatal("no colour")
	}
	if got := ansi.ReplaceAllString(col.String(), ""); got != ref.String() {
		t.Errorf("colour changed the text:\n%s\nwant\n%s", got, ref.String())
	}
	for _, code := range []string{catColors[span.CatFrame], catColors[span.CatHeader], catColors[span.CatRequestBody]} {
		if !strings.Contains(col.String(), "\x1b["+code+"m") {
			t.Errorf("no %s-coloured bytes or rows", code)
		}
	}
	// A wide terminal: the same lines (the fixture's descriptions are short).
	var wide bytes.Buffer
	if err := PageStyle(&wide, p, Style{Width: 2000}); err != nil {
		t.Fatal(err)
	}
	if wide.String() != ref.String() {
		t.Errorf("a 2000-column page differs from the reference")
	}
	// A narrow one: every line but the 16-byte grid rows fits.
	var narrow bytes.Buffer
	if err := PageStyle(&narrow, p, Style{Width: 50}); err != nil {
		t.Fatal(err)
	}
	grid := regexp.MustCompile(`^([0-9a-f]{4}  | {5} 0  1)`)
	for _, l := range strings.Split(narrow.String(), "\n") {
		if cells(l) > 50 && !grid.MatchString(l) {
			t.Errorf("line of %d cells: %q", cells(l), l)
		}
	}
}

// TestGridWideOffsets: past 0xffff the offset column widens for every row,
// so the columns stay aligned; below it, the grid is the reference one.
func TestGridWideOffsets(t *testing.T) {
	data := make([]byte, 0x10010)
	var b bytes.Buffer
	GridStyle(&b, data, nil, Style{})
	lines := strings.Split(b.String(), "\n")
	if !strings.HasPrefix(lines[3], "00000  00") || !strings.HasPrefix(lines[len(lines)-2], "10000  00") {
		t.Errorf("offsets: %q ... %q", lines[3], lines[len(lines)-2])
	}
	for _, l := range lines[3 : len(lines)-1] {
		if len(l) != len(lines[3]) {
			t.Fatalf("row %q is not as long as %q", l, lines[3])
		}
	}
	var small, ref bytes.Buffer
	GridStyle(&small, data[:40], nil, Style{})
	Grid(&ref, data[:40])
	if small.String() != ref.String() {
		t.Errorf("small grid differs from the reference")
	}
}

// TestCellsMatchRunewidth: cells counts ASCII itself, and must count it
// as runewidth does (control bytes none, CR LF none); anything else goes
// to runewidth.
func TestCellsMatchRunewidth(t *testing.T) {
	var cases []string
	for c := range 0x80 {
		cases = append(cases, string(rune(c)), "a"+string(rune(c))+"b")
	}
	cases = append(cases, "", "\r\n", "a\r\nb", "tab\there", "café", "日本語", "e\u0301", "👍🏽", "x\u200by", "\x7f\u0085")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(0x80))
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := cells(s), runewidth.StringWidth(s); got != want {
			t.Errorf("cells(%q) = %d, runewidth says %d", s, got, want)
		}
	}
}

// TestGridColours: each byte of the coloured grid is painted with the
// colour of its leaf's category, the offsets dim, and the text under the
// colours is the plain grid's.
func TestGridColours(t *testing.T) {
	tr := BuildTree(TNode{Name: "frame", Len: 20, Cat: span.CatFrame, Kids: []TNode{
		{Name: "size", Off: 0, Len: 4, Cat: span.CatFrame},
		{Name: "header", Off: 4, Len: 6, Cat: span.CatHeader},
		{Name: "body", Off: 10, Len: 10, Cat: span.CatResponseBody},
	}})
	data := []byte("\x00\x00\x00\x10ABCDEFGHIJKLMNOP")
	var col, plain bytes.Buffer
	GridStyle(&col, data, tr, Style{Color: true})
	GridStyle(&plain, data, tr, Style{})
	if got := ansi.ReplaceAllString(col.String(), ""); got != plain.String() {
		t.Errorf("without its colours the grid is\n%s\nwant\n%s", got, plain.String())
	}
	rows := strings.Split(col.String(), "\n")[3:5]
	paint := func(code, s string) string { return "\x1b[" + code + "m" + s + "\x1b[0m" }
	want0 := paint(colorDim, "0000") + " "
	for i, c := range data[:16] {
		cat := span.CatFrame
		switch {
		case i >= 10:
			cat = span.CatResponseBody
		case i >= 4:
			cat = span.CatHeader
		}
		want0 += " " + paint(catColors[cat], fmt.Sprintf("%02x", c))
	}
	if !strings.HasPrefix(rows[0], want0+"  ") {
		t.Errorf("first row\n%q\nwant it to begin\n%q", rows[0], want0)
	}
	if want1 := paint(colorDim, "0010") + "  " + paint(catColors[span.CatResponseBody], "4d"); !strings.HasPrefix(rows[1], want1) {
		t.Errorf("second row %q, want it to begin %q", rows[1], want1)
	}
}
