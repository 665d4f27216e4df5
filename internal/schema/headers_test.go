package schema

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/spec"
)

// headerVersionFixtures are the bad fixtures of headerVersions maps, one
// per rule; TestBadHeaderVersions covers them (TestBadSpecs skips them).
var headerVersionFixtures = map[string]bool{}

func init() {
	for _, c := range badHeaderVersionCases {
		headerVersionFixtures[c.dir] = true
	}
}

var badHeaderVersionCases = []struct {
	dir       string
	file      string
	line, col int
	token     string // the text at file:line:col
	is        error
	mention   string
}{
	{"header_versions_not_from_zero", "ProbeRequest.json", 7, 23, `"1+"`, ErrHeaderVersions, "must start at 0"},
	{"header_versions_gap", "ProbeRequest.json", 7, 35, `"3+"`, ErrHeaderVersions, "not contiguous"},
	{"header_versions_overlap", "ProbeRequest.json", 7, 35, `"2+"`, ErrHeaderVersions, "overlaps 0-2"},
	{"header_versions_open_not_last", "ProbeRequest.json", 7, 23, `"0+"`, ErrHeaderVersions, "only the last range may be open-ended"},
	{"header_versions_last_not_open", "ProbeRequest.json", 7, 35, `"2-3"`, ErrHeaderVersions, "not open-ended"},
	{"header_versions_decreasing", "ProbeRequest.json", 7, 38, `"0"`, ErrHeaderVersions, "never decrease"},
	{"header_versions_unknown_header", "ProbeRequest.json", 7, 41, `"4"`, ErrHeaderVersions, "not in RequestHeader.json's validVersions (0-3)"},
	{"header_versions_above_valid", "ProbeRequest.json", 7, 35, `"4+"`, ErrHeaderVersions, "above the highest valid version 3"},
	{"header_versions_flexible_to_classic", "ProbeRequest.json", 7, 41, `"1"`, ErrHeaderVersions, "version 2, which is flexible"},
	{"header_versions_api_versions_response", "ApiVersionsResponse.json", 7, 41, `"1"`, ErrHeaderVersions, "KIP-511"},
	{"header_versions_empty", "ProbeRequest.json", 7, 21, `{`, spec.ErrMissing, "empty map"},
	{"header_versions_bad_range", "ProbeRequest.json", 7, 23, `"0-x"`, ErrHeaderVersions, `"0-x"`},
}

// TestBadHeaderVersions loads one fixture per rule of Kafka's generator for
// headerVersions maps: exactly one error, at the file:line:col of the
// offending range or header version (the token there is checked too), with
// the path "headerVersions".
func TestBadHeaderVersions(t *testing.T) {
	for _, c := range badHeaderVersionCases {
		t.Run(c.dir, func(t *testing.T) {
			dir := filepath.Join(badSpecs, c.dir)
			reg, err := Load(dir)
			if err == nil {
				t.Fatalf("loaded without error (%d APIs)", len(reg.APIs))
			}
			var list spec.ErrorList
			if !errors.As(err, &list) || len(list) != 1 {
				t.Fatalf("want exactly one spec error, got %v", err)
			}
			e := list[0]
			if want := (spec.Pos{File: c.file, Line: c.line, Col: c.col}); e.Pos != want {
				t.Errorf("position = %s, want %s (%v)", e.Pos, want, e)
			}
			if e.Path != "headerVersions" {
				t.Errorf("path = %q, want headerVersions", e.Path)
			}
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.mention) {
				t.Errorf("error %q: want %v mentioning %q", err, c.is, c.mention)
			}
			if got := tokenAt(t, filepath.Join(dir, c.file), c.line, c.col, len(c.token)); got != c.token {
				t.Errorf("the error points at %q, want %q", got, c.token)
			}
		})
	}
}

func tokenAt(t *testing.T, file string, line, col, n int) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if line < 1 || line > len(lines) || col < 1 || col-1+n > len(lines[line-1]) {
		return ""
	}
	return lines[line-1][col-1 : col-1+n]
}

func buildOne(t *testing.T, srcs ...string) (*Registry, error) {
	t.Helper()
	var files []*spec.File
	for i, s := range srcs {
		f, err := spec.Parse(string(rune('A'+i))+".json", []byte(s))
		if err != nil {
			t.Fatalf("parse %s: %v", s, err)
		}
		files = append(files, f)
	}
	return Build(files)
}

// TestHeaderVersionsFromSpec: a valid map is honoured at every version,
// with string and integer values alike, in any key order; without a map the
// version is derived as before and HeaderFromSpec says so.
func TestHeaderVersionsFromSpec(t *testing.T) {
	reg, err := buildOne(t,
		`{"type": "request", "name": "XRequest", "apiKey": 60, "validVersions": "1-4", "flexibleVersions": "2+",
		  "headerVersions": {"3+": 3, "0-1": "1", "2": "2"}, "fields": []}`,
		`{"type": "response", "name": "XResponse", "apiKey": 60, "validVersions": "1-4", "flexibleVersions": "2+", "fields": []}`,
		`{"type": "header", "name": "RequestHeader", "validVersions": "0-3", "flexibleVersions": "2+", "fields": []}`,
	)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := reg.API(60)
	for v, want := range map[int16]int16{1: 1, 2: 2, 3: 3, 4: 3} {
		if got := a.Request.HeaderVersion(v); got != want {
			t.Errorf("request v%d: header v%d, want v%d", v, got, want)
		}
		if !a.Request.HeaderFromSpec(v) {
			t.Errorf("request v%d: HeaderFromSpec is false", v)
		}
	}
	for v, want := range map[int16]int16{1: 0, 2: 1, 4: 1} {
		if got := a.Response.HeaderVersion(v); got != want {
			t.Errorf("response v%d (derived): header v%d, want v%d", v, got, want)
		}
		if a.Response.HeaderFromSpec(v) {
			t.Errorf("response v%d: HeaderFromSpec is true without a map", v)
		}
	}
}

// TestHeaderVersionsRemovedVersions: a range made only of removed versions
// may name a header version the header spec no longer has (request header
// v0 of a removed ControlledShutdown v0), as the map covers removed
// versions too.
func TestHeaderVersionsRemovedVersions(t *testing.T) {
	_, err := buildOne(t,
		`{"type": "request", "name": "XRequest", "apiKey": 7, "validVersions": "1-3", "flexibleVersions": "3+",
		  "headerVersions": {"0": "0", "1-2": "1", "3+": "2"}, "fields": []}`,
		`{"type": "response", "name": "XResponse", "apiKey": 7, "validVersions": "1-3", "flexibleVersions": "3+",
		  "headerVersions": {"0-2": "0", "3+": "1"}, "fields": []}`,
		`{"type": "header", "name": "RequestHeader", "validVersions": "1-2", "flexibleVersions": "2+", "fields": []}`,
	)
	if err != nil {
		t.Fatal(err)
	}
}
