package diff

import (
	"bytes"
	"fmt"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/manifester/manifester/internal/schema"
)

func TestVersionComments(t *testing.T) {
	src := `// A licence header that mentions Version 2.0 of a licence.
// Version 9 in the header is not a per-version comment either.

{
  "name": "XRequest",
  // Versions 0-3 were removed in release 4.0.
  //
  // Version 4 adds Foo.  Starting in version 4, the order
  // of partitions matters.
  // Version 5 changes nothing on the wire.
  //
  // Supported errors:
  // - Version 6 mentioned in a list is not a start
  // Starting in version 6, brokers throttle.
  "validVersions": "4-7", // Version 99 trailing a code line is not read
  // Versions 6 through 7 add
  // a tagged field.
  "fields": []
}
`
	r := func(lo, hi int16) schema.Versions { return schema.Versions{Lo: lo, Hi: hi} }
	want := []Comment{
		{Versions: r(0, 3), Lo: 0, Hi: 3, Text: "Versions 0-3 were removed in release 4.0.", Line: 6},
		{Versions: r(4, 4), Lo: 4, Hi: 4, Text: "Version 4 adds Foo.  Starting in version 4, the order of partitions matters.", Line: 8},
		{Versions: r(5, 5), Lo: 5, Hi: 5, Text: "Version 5 changes nothing on the wire.", Line: 10},
		{Versions: r(6, 6), Lo: 6, Hi: 6, Text: "Starting in version 6, brokers throttle.", Line: 14},
		{Versions: r(6, 7), Lo: 6, Hi: 7, Text: "Versions 6 through 7 add a tagged field.", Line: 16},
	}
	got := VersionComments([]byte(src))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("VersionComments (-want +got):\n%s", diff)
	}
	between := func(a, b int16) []int {
		var lines []int
		for _, c := range commentsBetween(VersionComments([]byte(src)), a, b) {
			lines = append(lines, c.Line)
		}
		return lines
	}
	if diff := cmp.Diff([]int{8}, between(3, 4)); diff != "" {
		t.Errorf("comments in (3, 4] (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{10, 14, 16}, between(6, 4)); diff != "" {
		t.Errorf("comments in (4, 6] (-want +got):\n%s", diff)
	}
	if got := between(5, 5); len(got) != 0 {
		t.Errorf("comments in (5, 5] = %v, want none", got)
	}
}

// FuzzVersionComments: any input gives well-formed comments, without
// panicking.
func FuzzVersionComments(f *testing.F) {
	f.Add([]byte("{\n// Version 3 adds X.\n// more\n\"a\": 1\n"))
	f.Add([]byte("x\n// Versions 9-2 reversed\n// Version 99999999999 too big\n//\n// Starting in version 4, y"))
	f.Fuzz(func(t *testing.T, src []byte) {
		lines := 1 + bytes.Count(src, []byte("\n"))
		for _, c := range VersionComments(src) {
			if c.Lo > c.Hi || c.Versions.Lo != c.Lo || c.Versions.Hi != c.Hi || c.Line < 1 || c.Line > lines || c.Text == "" {
				t.Fatalf("bad comment %+v", c)
			}
		}
	})
}

// TestVersionCommentsLinear: a comment of many continuation lines is
// read in memory linear in its size. The text was grown by string
// concatenation, copying it once per line: 300,000 lines of "// x"
// (1.5 MB) took `manifester diff` 39 s.
func TestVersionCommentsLinear(t *testing.T) {
	src := []byte("{\n// Version 1 starts a comment that goes on.\n" + strings.Repeat("// x\n", 50000) + "}\n")
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	cs := VersionComments(src)
	metrics.Read(s)
	n := s[0].Value.Uint64() - before
	if len(cs) != 1 || !strings.HasPrefix(cs[0].Text, "Version 1 starts a comment that goes on. x x") || cs[0].Line != 2 {
		t.Fatalf("comments: %d, text of %d bytes", len(cs), len(cs[0].Text))
	}
	if limit := uint64(32 * len(src)); n > limit {
		t.Errorf("reading %d bytes of comments allocated %d bytes, want <= %d", len(src), n, limit)
	}
}

// TestVersionCommentsBounded: every diff page of a message (one per pair
// of versions) shows its comments about the versions between, so 280 KB
// of "// Versions 1-63 ..." comments made a 1.5 GB site (4.4 GB of
// memory). The comments kept from one file hold at most
// MaxCommentText bytes of text, the last one cut and marked; Kafka's
// files have at most 1.5 KB.
func TestVersionCommentsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("{\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "// Versions 1-63 change number %d of this message, é.\n//\n", i)
	}
	b.WriteString("}\n")
	cs := VersionComments([]byte(b.String()))
	total := 0
	for _, c := range cs {
		total += len(c.Text)
	}
	if total > MaxCommentText+len(" …") || total < MaxCommentText-100 {
		t.Errorf("%d comments of %d bytes, want about %d", len(cs), total, MaxCommentText)
	}
	last := cs[len(cs)-1].Text
	if !strings.HasSuffix(last, " …") || !utf8.ValidString(last) {
		t.Errorf("last comment %q", last)
	}
	// One comment of many lines is cut the same way.
	cs = VersionComments([]byte("{\n// Version 1 goes on.\n" + strings.Repeat("// xy\n", 50000) + "}\n"))
	if len(cs) != 1 || len(cs[0].Text) > MaxCommentText+len(" …") || !strings.HasSuffix(cs[0].Text, " …") {
		t.Errorf("%d comments, the first of %d bytes", len(cs), len(cs[0].Text))
	}
}

// TestVersionCommentsLists: a comment about a list of versions ("Versions
// 1 and 2 ...", "Version 3, 4, and 5 ...") was read as being about its
// first version only, so the diff of the later ones left it out: Kafka
// 4.3's Metadata v2 -> v3 showed no comment though line 28 of
// MetadataRequest.json is about versions 2 and 3. A list is about its
// lowest to its highest version.
func TestVersionCommentsLists(t *testing.T) {
	src := "{\n" +
		"  // Versions 1 and 2 are like version 0.\n" +
		"  // Version 3, 4, and 5 are like version 2.\n" +
		"  // Version 6 or 7 is not sent.\n" +
		"  // Versions 10, 11 add a field.\n" +
		"  // Version 12 and later add nothing.\n" +
		"}\n"
	r := func(lo, hi int16) schema.Versions { return schema.Versions{Lo: lo, Hi: hi} }
	var got []schema.Versions
	for _, c := range VersionComments([]byte(src)) {
		got = append(got, c.Versions)
		if c.Lo != c.Versions.Lo || c.Hi != c.Versions.Hi {
			t.Errorf("line %d: Lo, Hi %d, %d; Versions %v", c.Line, c.Lo, c.Hi, c.Versions)
		}
	}
	if diff := cmp.Diff([]schema.Versions{r(1, 2), r(3, 5), r(6, 7), r(10, 11), r(12, 12)}, got); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}

	// Kafka's own: line 28 of 4.3's MetadataRequest.json is about
	// versions 2 and 3; line 31 of OffsetFetchRequest.json about 3, 4
	// and 5.
	for _, tc := range []struct {
		api  string
		a, b int16
		file string
		line int
	}{
		{"Metadata", 2, 3, "MetadataRequest.json", 28},
		{"OffsetFetch", 4, 5, "OffsetFetchRequest.json", 31},
	} {
		d := versionDiff(t, "4.3", tc.api, tc.a, tc.b)
		text := specComment(t, "4.3", tc.file, tc.line)
		if !strings.HasPrefix(text, "Version") {
			t.Fatalf("%s:%d is not a per-version comment", tc.file, tc.line)
		}
		var lines []int
		for _, c := range d.Request.Comments {
			lines = append(lines, c.Line)
		}
		if !slices.Contains(lines, tc.line) {
			t.Errorf("%s v%d -> v%d: request comments on lines %v, want line %d among them", tc.api, tc.a, tc.b, lines, tc.line)
		}
	}
}
