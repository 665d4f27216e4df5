package schema

import (
	"archive/zip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/spec"
	"github.com/manifester/manifester/internal/testshared"
)

// badSpecs holds one small, hand-written spec directory per kind of
// mistake; each must fail to load with exactly one error.
const badSpecs = "../../testdata/specs/bad"

// TestBadSpecs checks every bad fixture: exactly one error, at the
// file:line:col of the offending token (checked by hand against the
// fixture), with the field path and the sentinel cause.
func TestBadSpecs(t *testing.T) {
	cases := []struct {
		dir        string
		file       string
		line, col  int
		path       string
		is         error
		mentioning string
	}{
		// line 8 starts a second field object without a comma after the first
		{"malformed_json", "Thing.json", 8, 5, "", spec.ErrSyntax, "after array value"},
		// "nullable" (not nullableVersions) inside an inline struct
		{"unknown_key", "Thing.json", 8, 57, "Outer.A", spec.ErrUnknownKey, `"nullable"`},
		// "int128" is no Kafka type
		{"unknown_type", "Thing.json", 8, 30, "Outer.A", ErrType, `"int128"`},
		// versions "1-x"
		{"bad_version_range", "Thing.json", 7, 49, "A", ErrVersions, `"1-x"`},
		// versions "3-1": Java would silently make this empty
		{"reversed_version_range", "Thing.json", 8, 49, "B", ErrVersions, "reversed"},
		// the second "tag": 0
		{"duplicate_tag", "Thing.json", 8, 86, "B", ErrTag, "also used by A"},
		// taggedVersions without tag
		{"missing_tag", "Thing.json", 7, 73, "A", ErrTag, "no tag"},
		// tag without taggedVersions
		{"tag_without_tagged_versions", "Thing.json", 7, 62, "A", ErrTag, "taggedVersions is not"},
		// taggedVersions 1+ but versions 2+
		{"tagged_outside_versions", "Thing.json", 7, 73, "A", ErrTag, "outside versions 2+"},
		// taggedVersions 1+ but flexibleVersions 2+
		{"tagged_outside_flexible", "Thing.json", 7, 73, "A", ErrTag, "outside flexibleVersions 2+"},
		// tags 0 and 2: the error points at tag 2
		{"non_contiguous_tags", "Thing.json", 8, 86, "B", ErrTag, "not contiguous"},
		// type "Missing": no inline fields, no common struct
		{"undefined_struct", "Thing.json", 8, 34, "Outer.Inner", ErrUndefined, "Missing"},
		// the second "A" in struct Item
		{"duplicate_field_name", "Thing.json", 9, 17, "Outer.A", ErrDuplicate, `"A"`},
		// SecondRequest.json repeats apiKey 90 (files are read in name order)
		{"duplicate_api_key", "SecondRequest.json", 4, 13, "", ErrAPIKey, "more than one request with API key 90"},
		// no LonelyResponse.json
		{"request_without_response", "LonelyRequest.json", 2, 13, "", ErrAPIKey, "failed to find response for API key 91"},
		{"response_without_request", "LonelyResponse.json", 4, 13, "", ErrAPIKey, "failed to find request for API key 92"},
		// flexibleVersions "1-2"
		{"flexible_not_open_ended", "Thing.json", 5, 23, "", ErrVersions, "not open-ended"},
		// nullableVersions on an int32
		{"nullable_int32", "Thing.json", 7, 75, "A", ErrNullable, "int32 cannot be nullable"},
		// default "200" on an int8
		{"bad_default", "Thing.json", 7, 65, "A", ErrDefault, "200 does not fit int8"},
		// Hostile specs. Node.Next is a Node: the error points at the type
		// that closes the cycle.
		{"recursive_self", "Thing.json", 9, 33, "Head.Next", ErrRecursive, "struct Node holds itself (Node.Next -> Node)"},
		// Tree holds itself twice (Left and Right): the first is reported
		{"recursive_twice", "Thing.json", 8, 33, "Root.Left", ErrRecursive, "struct Tree holds itself (Tree.Left -> Tree)"},
		// common structs Ping -> Pong -> []Ping
		{"recursive_cycle", "Thing.json", 14, 36, "Start.ToPong.ToPings", ErrRecursive, "Ping holds itself through Pong (Ping.ToPong -> Pong.ToPings -> Ping)"},
		// an array of the struct inside itself (nullable does not help:
		// the smallest instance has one element)
		{"recursive_array", "Thing.json", 8, 37, "Items.Children", ErrRecursive, "struct Item holds itself (Item.Children -> Item)"},
		// a default nested 100 arrays deep: level 101 is the 98th '['
		{"too_deep", "Thing.json", 7, 162, "", spec.ErrTooDeep, "deeper than 100 levels"},
		// 15 levels of common structs, each holding the next twice: no
		// cycle, but 2^15 fields; L7 is the first over the limit (8 per
		// field declared, plus 128: 368)
		{"doubling_structs", "Thing.json", 40, 30, "Top.A.A.A.A.A.A.A.B", ErrTooLarge, "smallest instance of L7 would hold more than 368 fields"},
		// a chain of 70 common structs
		{"deep_structs", "Thing.json", 15, 77, "Top.Down.Down.Down.Down.Down.Down", ErrTooLarge, "more than 64 levels deep"},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.dir] = true
		t.Run(c.dir, func(t *testing.T) {
			reg, err := Load(filepath.Join(badSpecs, c.dir))
			if err == nil {
				t.Fatalf("loaded without error (%d APIs)", len(reg.APIs))
			}
			var list spec.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error is %T, not a spec.ErrorList: %v", err, err)
			}
			if len(list) != 1 {
				t.Fatalf("got %d errors, want 1:\n%v", len(list), err)
			}
			e := list[0]
			want := spec.Pos{File: c.file, Line: c.line, Col: c.col}
			if e.Pos != want {
				t.Errorf("position = %s, want %s (%v)", e.Pos, want, e)
			}
			if e.Path != c.path {
				t.Errorf("path = %q, want %q (%v)", e.Path, c.path, e)
			}
			if !errors.Is(err, c.is) {
				t.Errorf("errors.Is(err, %v) is false: %v", c.is, err)
			}
			prefix := want.String() + ": "
			if c.path != "" {
				prefix += c.path + ": "
			}
			if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, c.mentioning) {
				t.Errorf("message %q should start with %q and mention %q", msg, prefix, c.mentioning)
			}
		})
	}
	// Every fixture directory is covered by a case.
	entries, err := os.ReadDir(badSpecs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !seen[e.Name()] && !headerVersionFixtures[e.Name()] {
			t.Errorf("fixture %s has no test case", e.Name())
		}
	}
}

// TestDefaultErrorSaysItOnce guards against the cause being wrapped twice
// ("invalid default: invalid default: ...").
func TestDefaultErrorSaysItOnce(t *testing.T) {
	_, err := Load(filepath.Join(badSpecs, "bad_default"))
	if err == nil {
		t.Fatal("no error")
	}
	if n := strings.Count(err.Error(), ErrDefault.Error()); n != 1 {
		t.Errorf("%q says %q %d times", err, ErrDefault, n)
	}
}

// TestParseErrorsAreCollected checks that one file with several mistakes
// reports all of them, sorted by position.
func TestParseErrorsAreCollected(t *testing.T) {
	src := []byte(`{
  "type": "data",
  "name": "Thing",
  "bogus": 1,
  "validVersions": "0",
  "flexibleVersions": "none",
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", "what": 2 }
  ]
}`)
	_, err := spec.Parse("Thing.json", src)
	var list spec.ErrorList
	if !errors.As(err, &list) || len(list) != 2 {
		t.Fatalf("want 2 errors, got %v", err)
	}
	if got := list[0].Pos.String() + " " + list[1].Pos.String(); got != "Thing.json:4:3 Thing.json:8:55" {
		t.Errorf("positions = %s", got)
	}
	if list[1].Path != "A" {
		t.Errorf("path of the field error = %q, want A", list[1].Path)
	}
}

// TestEmptyDirectory: a directory without specs is an error, not an empty
// registry.
func TestEmptyDirectory(t *testing.T) {
	_, err := Load(t.TempDir())
	if !errors.Is(err, spec.ErrNoSpecs) {
		t.Errorf("err = %v, want ErrNoSpecs", err)
	}
}

// TestNotAZip: a file that is neither a directory nor a jar.
func TestNotAZip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "kafka-clients.jar")
	if err := os.WriteFile(p, []byte("not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "neither a directory nor a jar") {
		t.Errorf("err = %v", err)
	}
}

var release43 = testshared.SpecPath("4.3")

// summary is what must agree between two loads of the same release.
func summary(t *testing.T, reg *Registry) string {
	t.Helper()
	var b strings.Builder
	for _, a := range reg.APIs {
		b.WriteString(a.Name + " " + a.Request.Valid.String() + " " + a.Request.Flexible.String() + "\n")
	}
	for _, m := range reg.Messages {
		b.WriteString(m.Name + " " + m.File + "\n")
	}
	return b.String()
}

// TestLoadJar builds a kafka-clients-style jar (entries
// common/message/*.json next to unrelated entries) in a temporary
// directory and loads it.
func TestLoadJar(t *testing.T) {
	testshared.Dir(t)
	want, err := Load(release43)
	if err != nil {
		t.Fatal(err)
	}
	jar := filepath.Join(t.TempDir(), "kafka-clients-4.3.0.jar")
	out, err := os.Create(jar)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(out)
	w, _ := zw.Create("META-INF/MANIFEST.MF")
	io.WriteString(w, "Manifest-Version: 1.0\n")
	w, _ = zw.Create("org/apache/kafka/common/message/FetchRequestData.class")
	w.Write([]byte{0xca, 0xfe, 0xba, 0xbe})
	names, _ := filepath.Glob(filepath.Join(release43, "*.json"))
	sort.Strings(names)
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create("common/message/" + filepath.Base(n))
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	out.Close()

	got, err := Load(jar)
	if err != nil {
		t.Fatalf("loading the jar: %v", err)
	}
	if len(got.Messages) != len(names) {
		t.Errorf("jar gave %d messages, the directory has %d files", len(got.Messages), len(names))
	}
	if s, w := summary(t, got), summary(t, want); s != w {
		t.Errorf("jar and directory loads differ:\njar:\n%s\ndir:\n%s", s, w)
	}
	if got.Label != "4.3.0" {
		t.Errorf("jar label = %q, want %q from the jar's file name", got.Label, "4.3.0")
	}
}

// TestLoadCheckout loads a Kafka source checkout layout: the specs under
// clients/src/main/resources/common/message, other files elsewhere.
func TestLoadCheckout(t *testing.T) {
	testshared.Dir(t)
	want, err := Load(release43)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	res := filepath.Join(root, "clients", "src", "main", "resources", "common")
	if err := os.MkdirAll(res, 0o755); err != nil {
		t.Fatal(err)
	}
	// A stray JSON file at the top must not be read.
	if err := os.WriteFile(filepath.Join(root, "package.json"), []byte("{not a spec"), 0o644); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(release43)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(res, "message")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	got, err := Load(root)
	if err != nil {
		t.Fatalf("loading the checkout: %v", err)
	}
	if s, w := summary(t, got), summary(t, want); s != w {
		t.Errorf("checkout and directory loads differ")
	}
	if got.Label != "4.3" {
		t.Errorf("label = %q, want 4.3 (from PROVENANCE)", got.Label)
	}
}
