package site

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/release"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/spec"
)

// wideRelease writes and loads a release whose one API, Wide (key 1000),
// defines versions lo to lo+63 (the most package schema accepts in one
// file).
func wideRelease(t *testing.T, label string, lo int) *release.Release {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"RequestHeader.json": `{"type": "header", "name": "RequestHeader", "validVersions": "1-2", "flexibleVersions": "2+",
  "fields": [{"name": "RequestApiKey", "type": "int16", "versions": "0+"}, {"name": "RequestApiVersion", "type": "int16", "versions": "0+"},
    {"name": "CorrelationId", "type": "int32", "versions": "0+"},
    {"name": "ClientId", "type": "string", "versions": "1+", "nullableVersions": "1+", "flexibleVersions": "none"}]}`,
		"ResponseHeader.json": `{"type": "header", "name": "ResponseHeader", "validVersions": "0-1", "flexibleVersions": "1+",
  "fields": [{"name": "CorrelationId", "type": "int32", "versions": "0+"}]}`,
	}
	for _, kind := range []string{"Request", "Response"} {
		files["Wide"+kind+".json"] = fmt.Sprintf(`{
  "apiKey": 1000,
  "type": "%s",
  "name": "Wide%s",
  "validVersions": "%d-%d",
  "flexibleVersions": "none",
  "fields": [{"name": "A", "type": "int8", "versions": "0+"}]
}`, strings.ToLower(kind), kind, lo, lo+63)
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := schema.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	reg.Label = label
	return &release.Release{Label: label, Reg: reg}
}

// TestVersionCap: an API whose versions over the loaded releases number
// more than MaxVersions is refused before any page is built, with an
// error naming the release and the file and line of the validVersions
// that goes over; at MaxVersions the site builds.
func TestVersionCap(t *testing.T) {
	n := MaxVersions / 64
	var rels []*release.Release
	for i := range n + 1 {
		rels = append(rels, wideRelease(t, fmt.Sprintf("1.%d", i), 64*i))
	}
	_, err := Build(Options{Releases: rels, NoCompress: true})
	if err == nil {
		t.Fatalf("%d versions built", 64*(n+1))
	}
	var se *spec.Error
	if !errors.As(err, &se) || se.Pos.File != "WideRequest.json" || se.Pos.Line != 5 {
		t.Errorf("error %q: want it at WideRequest.json:5 (validVersions)", err)
	}
	want := fmt.Sprintf("release 1.%d: WideRequest.json:5:20: API Wide (key 1000) has %d versions over the loaded releases, more than the %d the site makes pages for",
		n, 64*(n+1), MaxVersions)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q\nwant %q", err, want)
	}
	// Releases defining the same versions count them once.
	if _, err := Build(Options{Releases: []*release.Release{rels[0], rels[0], wideRelease(t, "2.0", 0)}, NoCompress: true}); err != nil {
		t.Error(err)
	}
	s, err := Build(Options{Releases: rels[:n], NoCompress: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Lookup(fmt.Sprintf("/apis/Wide/v%d/", MaxVersions-1)); !ok {
		t.Error("no page of the highest version")
	}
}
