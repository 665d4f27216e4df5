package text

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// cutTree is a tree of 8 nodes: M(A(A1, A2(A2x)), B(B1), C).
func cutTree() *span.Tree {
	leaf := func(name string, off int) TNode {
		return TNode{Name: name, Type: "int8", Val: span.ValInt, Int: int64(off), Off: off, Len: 1}
	}
	return BuildTree(TNode{Name: "M", Type: "message v1", Len: 5, Kids: []TNode{
		{Name: "A", Type: "A", Len: 2, Kids: []TNode{leaf("A1", 0), {Name: "A2", Off: 1, Len: 1, Kids: []TNode{leaf("A2x", 1)}}}},
		{Name: "B", Type: "B", Off: 2, Len: 2, Kids: []TNode{leaf("B1", 2)}},
		leaf("C", 4),
	}})
}

// TestTreeCut: the first keep nodes are drawn as in the whole tree, except
// that the last kept nodes close their branches, and a "..." row stands,
// as the last child of its parent, where the first node left out would be.
func TestTreeCut(t *testing.T) {
	tr := cutTree()
	if n := countNodes(tr, 100); n != 8 {
		t.Fatalf("%d nodes, want 8", n)
	}
	names := func(keep int) string { // one scratch after another, reused
		s := getRowScratch()
		defer s.release()
		var out []string
		for _, r := range treeRows(s, tr, keep, "cut", Escape, rowOpts{}) {
			out = append(out, r.name)
		}
		return strings.Join(out, "\n")
	}
	for _, c := range []struct {
		keep int
		want []string
	}{
		{-1, []string{"M", "+-- A", "|   +-- A1", "|   +-- A2", "|       +-- A2x", "+-- B", "|   +-- B1", "+-- C"}},
		{9, []string{"M", "+-- A", "|   +-- A1", "|   +-- A2", "|       +-- A2x", "+-- B", "|   +-- B1", "+-- C"}},
		{3, []string{"M", "+-- A", "    +-- A1", "    +-- ..."}},
		{4, []string{"M", "+-- A", "    +-- A1", "    +-- A2", "        +-- ..."}},
		{5, []string{"M", "+-- A", "|   +-- A1", "|   +-- A2", "|       +-- A2x", "+-- ..."}},
		{1, []string{"M", "+-- ..."}},
	} {
		if got := names(c.keep); got != strings.Join(c.want, "\n") {
			t.Errorf("keep %d:\n%s\nwant\n%s", c.keep, got, strings.Join(c.want, "\n"))
		}
	}
	// The cut row says what was left out, in full.
	long := strings.Repeat("z", 2*maxAbout)
	var b bytes.Buffer
	tree(&b, tr, 2, long)
	if !strings.Contains(b.String(), "+-- ...") || !strings.HasSuffix(b.String(), long+"\n") {
		t.Errorf("cut tree:\n%s", b.String())
	}
}

// TestSampleTreeZerosBare: a reference page's tree (Tree.Sample) shows
// the zeros of spec fields without the notes of their descriptors (a
// fixed node, not from a spec, keeps its note); a frame's shows every
// note.
func TestSampleTreeZerosBare(t *testing.T) {
	tr := BuildTree(TNode{Name: "M", Len: 6, Kids: []TNode{
		{Name: "ErrorCode", Type: "int16", Val: span.ValInt, Len: 2},
		{Name: "ErrorCode", Type: "int16", Val: span.ValInt, Int: 3, Off: 2, Len: 2},
		{Name: "fixed", Type: "int16", Val: span.ValInt, Off: 4, Len: 2},
	}})
	field := &schema.Field{Name: "ErrorCode", Type: &schema.Type{Kind: schema.KindInt16, Name: "int16"}}
	for id := span.ID(1); id <= 3; id++ {
		tr.Desc(id).Note = span.NoteErrorCode
	}
	tr.Desc(1).Field, tr.Desc(2).Field = field, field
	rows := func(sample bool) []string {
		tr.Sample = sample
		var b bytes.Buffer
		Tree(&b, tr)
		return strings.Split(b.String(), "\n")
	}
	page, frame := rows(true), rows(false)
	if !strings.Contains(page[1], "= 0  ") || strings.Contains(page[1], "(NONE)") || !strings.Contains(page[2], "= 3 (UNKNOWN_TOPIC_OR_PARTITION)") || !strings.Contains(page[3], "= 0 (NONE)") {
		t.Errorf("page tree:\n%s", strings.Join(page, "\n"))
	}
	if !strings.Contains(frame[1], "= 0 (NONE)") || !strings.Contains(frame[2], "= 3 (UNKNOWN_TOPIC_OR_PARTITION)") || !strings.Contains(frame[3], "= 0 (NONE)") {
		t.Errorf("frame tree:\n%s", strings.Join(frame, "\n"))
	}
}

// TestCandidateText: the first five candidates are named, the others
// counted, and an incomplete search said.
func TestCandidateText(t *testing.T) {
	f := &report.Frame{}
	for v := int16(0); v < 7; v++ {
		f.Candidates = append(f.Candidates, report.Candidate{APIKey: 3, Name: "Metadata", Version: v})
	}
	f.CandidatesIncomplete = true
	want := "candidates (decode cleanly and re-encode byte for byte): Metadata(3) v0, Metadata(3) v1, Metadata(3) v2, Metadata(3) v3, Metadata(3) v4 and 2 more (search stopped at its budget)"
	if got := candidateText(f); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// TestSpanText: the [offset, size] cell as fmt writes "[0x%04x, %dB]".
func TestSpanText(t *testing.T) {
	for _, c := range [][2]int32{{0, 0}, {9, 4}, {0xfff, 1}, {0x1000, 22}, {0x12345, 1 << 30}, {-1, 3}} {
		if got, want := spanText(c[0], c[1]), fmt.Sprintf("[0x%04x, %dB]", c[0], c[1]); got != want {
			t.Errorf("spanText(%d, %d) = %q, want %q", c[0], c[1], got, want)
		}
	}
}

// TestPlainGridRows: the plain grid's fixed layout writes what the styled
// one writes without colours, for short and partial rows, every byte
// value, and offsets wider than the column asks for.
func TestPlainGridRows(t *testing.T) {
	data := make([]byte, 0x10000+37)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, c := range []struct{ n, digits int }{{0, 4}, {1, 4}, {15, 4}, {16, 4}, {17, 4}, {256, 4}, {300, 6}, {len(data), 4}, {len(data), 5}} {
		var plain, styled bytes.Buffer
		plainGridRows(&plain, data[:c.n], c.digits)
		styledGridRows(&styled, data[:c.n], c.digits, nil, Style{})
		if !bytes.Equal(plain.Bytes(), styled.Bytes()) {
			p, s := plain.String(), styled.String()
			i := 0
			for i < min(len(p), len(s)) && p[i] == s[i] {
				i++
			}
			t.Errorf("%d bytes, %d digits: the plain grid differs at byte %d: %q against %q", c.n, c.digits, i, p[i:min(i+80, len(p))], s[i:min(i+80, len(s))])
		}
	}
}
