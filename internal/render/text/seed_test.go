package text_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testshared"
)

// The reference pages the output must reproduce, and the specs they were
// made from. Both are read in place, never copied.
const (
	legendOK = "framerpc headerrequest bodyRecordBatchRecordresponse bodytagged_fields"
)

func loadCodec(t testing.TB, dir string) *codec.Codec {
	t.Helper()
	reg, err := schema.Load(dir)
	if err != nil {
		t.Fatalf("loading %s: %v", dir, err)
	}
	return codec.New(reg)
}

func buildPage(t testing.TB, c *codec.Codec, name string, v int16) *page.Page {
	t.Helper()
	api, err := c.Reg.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := page.Build(c, api, v)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// seed is a reference page split into its parts.
type seed struct {
	intro   string
	summary [][2]string // label, value
	legend  string
	titles  []string // section titles: request, response
	grids   []string // "byte layout (...)" headings
	trees   [][]string
	schemas []string
}

// readSeed splits a seed page. The pages are text copied from the rendered
// site: AlterConfigs.txt keeps its line structure, DescribeAcls.txt had its
// whitespace collapsed (a tree or schema is one line, list items start
// with "- ").
func readSeed(t *testing.T, name string) *seed {
	t.Helper()
	b, err := os.ReadFile(testshared.Path(t, "seeds", name))
	if err != nil {
		t.Fatalf("reading seed: %v", err)
	}
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	s := &seed{}
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " \t")
		switch {
		case strings.HasPrefix(l, "This page encodes"):
			s.intro = l
			// The summary follows: label and value lines until the legend.
			var cells []string
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "frame"); i++ {
				if c := strings.TrimSpace(strings.TrimPrefix(lines[i], "- ")); c != "" {
					cells = append(cells, c)
				}
			}
			for j := 0; j+1 < len(cells); j += 2 {
				s.summary = append(s.summary, [2]string{cells[j], cells[j+1]})
			}
			if i < len(lines) {
				s.legend = strings.TrimSpace(lines[i])
			}
		case strings.HasSuffix(l, "bytes on the wire"):
			s.titles = append(s.titles, l)
		case strings.HasPrefix(l, "byte layout ("):
			s.grids = append(s.grids, l)
		case l == "object tree":
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) == ""; i++ {
			}
			var tree []string
			for ; i < len(lines) && strings.TrimSpace(lines[i]) != "" && lines[i] != "kafka message schema (.json)"; i++ {
				tree = append(tree, strings.TrimRight(lines[i], " \t"))
			}
			i--
			s.trees = append(s.trees, tree)
		case l == "kafka message schema (.json)":
			var sch []string
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "Response"; i++ {
				sch = append(sch, lines[i])
			}
			i--
			s.schemas = append(s.schemas, strings.Join(sch, "\n"))
		}
	}
	if s.intro == "" || len(s.summary) != 8 || len(s.trees) != 2 || len(s.schemas) != 2 || len(s.titles) != 2 || len(s.grids) != 2 {
		t.Fatalf("could not split %s: intro %t, %d summary items, %d titles, %d grids, %d trees, %d schemas",
			name, s.intro != "", len(s.summary), len(s.titles), len(s.grids), len(s.trees), len(s.schemas))
	}
	return s
}

// collapse replaces every run of white space with one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func renderTree(t *span.Tree) []string {
	var b bytes.Buffer
	text.Tree(&b, t)
	return strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
}

func TestSeeds(t *testing.T) {
	c := loadCodec(t, testshared.Spec(t, "4.3"))
	cases := []struct {
		file       string
		api        string
		version    int16
		req, resp  int
		exactLines bool // the seed kept its line structure
	}{
		{"AlterConfigs.txt", "AlterConfigs", 2, 25, 21, true},
		{"DescribeAcls.txt", "DescribeAcls", 3, 23, 28, false},
	}
	for _, c2 := range cases {
		t.Run(c2.api, func(t *testing.T) {
			sd := readSeed(t, c2.file)
			p := buildPage(t, c, c2.api, c2.version)

			if p.Request.Size != c2.req || p.Response.Size != c2.resp {
				t.Errorf("sizes %d/%d, want %d/%d", p.Request.Size, p.Response.Size, c2.req, c2.resp)
			}
			if p.Intro != sd.intro {
				t.Errorf("intro:\n got %q\nwant %q", p.Intro, sd.intro)
			}
			if len(p.Summary) != len(sd.summary) {
				t.Fatalf("summary has %d items, seed %d", len(p.Summary), len(sd.summary))
			}
			for i, it := range p.Summary {
				if it.Label != sd.summary[i][0] || it.Value != sd.summary[i][1] {
					t.Errorf("summary %d = %q: %q, seed %q: %q", i, it.Label, it.Value, sd.summary[i][0], sd.summary[i][1])
				}
			}
			var legend string
			for _, cat := range span.Categories {
				legend += cat.String()
			}
			if legend != sd.legend || legend != legendOK {
				t.Errorf("legend %q, seed %q", legend, sd.legend)
			}
			for i, s := range []*page.Section{p.Request, p.Response} {
				if s.Title != sd.titles[i] {
					t.Errorf("%s title %q, seed %q", s.Kind, s.Title, sd.titles[i])
				}
				var grid bytes.Buffer
				text.Grid(&grid, s.Bytes)
				if first, _, _ := strings.Cut(grid.String(), "\n"); first != sd.grids[i] {
					t.Errorf("%s grid heading %q, seed %q", s.Kind, first, sd.grids[i])
				}
				got := renderTree(s.Spans)
				if c2.exactLines {
					// The seed's trees are 24 and 17 lines long.
					if n := len(sd.trees[i]); n != []int{24, 17}[i] {
						t.Fatalf("seed %s tree split into %d lines", s.Kind, n)
					}
					if len(got) != len(sd.trees[i]) {
						t.Errorf("%s tree has %d lines, seed %d", s.Kind, len(got), len(sd.trees[i]))
					}
					for j := 0; j < len(got) && j < len(sd.trees[i]); j++ {
						if got[j] != sd.trees[i][j] {
							t.Errorf("%s tree line %d:\n got %q\nwant %q", s.Kind, j+1, got[j], sd.trees[i][j])
						}
					}
				} else if g, w := collapse(strings.Join(got, "\n")), collapse(strings.Join(sd.trees[i], " ")); g != w {
					t.Errorf("%s tree cells differ:\n got %s\nwant %s", s.Kind, g, w)
				}
				if g, w := collapse(s.Schema), collapse(sd.schemas[i]); g != w {
					t.Errorf("%s schema differs:\n got %s\nwant %s", s.Kind, g, w)
				}
			}
		})
	}
}

// TestTreeFormat checks the column rules on a small hand-made tree: every
// column as wide as its longest cell plus two, +-- and |   prefixes,
// descriptions over 78 characters cut to 75 plus "...", no trailing blanks.
func TestTreeFormat(t *testing.T) {
	long := strings.Repeat("x", 79)
	exact := strings.Repeat("y", 78)
	root := text.BuildTree(text.TNode{Name: "M", Type: "message v1", Off: 0, Len: 10, Kids: []text.TNode{
		{Name: "A", Type: "int8", Val: span.ValInt, Int: 1, Off: 0, Len: 1, About: long},
		{Name: "Group", Type: "[]S", Val: span.ValArray, Int: 1, Off: 1, Len: 9, Kids: []text.TNode{
			{Name: "S", Elem: 1, Type: "S", Val: span.ValStruct, Off: 1, Len: 9, Kids: []text.TNode{
				{Name: "B", Type: "int16", Val: span.ValInt, Int: 2, Off: 1, Len: 2, About: exact},
			}},
			{Name: "z", Type: "uvarint", Val: span.ValInt, Off: 3, Len: 1, Flag: "unknown tag", About: "d"},
		}},
	}})
	// name column: longest "    |   +-- B" (13) + 2; type: "message v1"
	// (10) + 2; value: "= 1 element" (11) + 2; span: "[0x0000, 10B]" (13) + 2.
	want := []string{
		"M              message v1               [0x0000, 10B]",
		"+-- A          int8        = 1          [0x0000, 1B]   " + strings.Repeat("x", 75) + "...",
		"+-- Group      []S         = 1 element  [0x0001, 9B]",
		"    +-- S[0]   S           = struct     [0x0001, 9B]",
		"    |   +-- B  int16       = 2          [0x0001, 2B]   " + exact,
		"    +-- z      uvarint     = 0          [0x0003, 1B]   [unknown tag] d",
	}
	got := renderTree(root)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tree:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestGrid checks the byte grid: 16 bytes per row, 0000-style offsets.
func TestGrid(t *testing.T) {
	data := make([]byte, 18)
	for i := range data {
		data[i] = byte(0x41 + i) // "ABCDEFGHIJKLMNOPQR"
	}
	data[17] = 0x00
	var b bytes.Buffer
	text.Grid(&b, data)
	want := "byte layout (18 bytes, 16 bytes per row)\n\n" +
		"      0  1  2  3  4  5  6  7  8  9  A  B  C  D  E  F\n" +
		"0000  41 42 43 44 45 46 47 48 49 4a 4b 4c 4d 4e 4f 50  ABCDEFGHIJKLMNOP\n" +
		"0010  51 00                                            Q.\n"
	var trimmed []string
	for _, l := range strings.Split(b.String(), "\n") {
		trimmed = append(trimmed, strings.TrimRight(l, " "))
	}
	if got := strings.Join(trimmed, "\n"); got != want {
		t.Errorf("grid:\n%q\nwant:\n%q", got, want)
	}
}
