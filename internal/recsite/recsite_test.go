package recsite_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/recschema"
	"github.com/manifester/manifester/internal/recsite"
	"github.com/manifester/manifester/internal/release"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/site"
	"github.com/manifester/manifester/internal/testshared"
)

func build(t *testing.T, withRecords bool) *site.Site {
	t.Helper()
	reg, err := schema.Load("../../testdata/specs/headerv3")
	if err != nil {
		t.Fatal(err)
	}
	c := codec.New(reg)
	if withRecords {
		recs, err := recschema.Load(testshared.Path(t, "kafka-records", "trunk"))
		if err != nil {
			t.Fatal(err)
		}
		c.SetRecordSchemas(recs)
	}
	s, err := site.Build(site.Options{Releases: []*release.Release{{Label: "x", Codec: c}}, Extensions: []site.Extension{recsite.Extension(c)}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRecordPages: every record type has a page per valid version, one at
// its highest version with the same bytes, and a JSON model; the version
// switcher marks the current version.
func TestRecordPages(t *testing.T) {
	s := build(t, true)
	top, ok := s.Lookup("/records/group-coordinator/OffsetCommitValue/")
	v4, ok4 := s.Lookup("/records/group-coordinator/OffsetCommitValue/v4/")
	if !ok || !ok4 || string(top.Body) != string(v4.Body) {
		t.Fatalf("highest-version page missing or different")
	}
	body := string(v4.Body)
	for _, w := range []string{`<a href="/records/group-coordinator/OffsetCommitValue/v4/" aria-current="page">v4</a>`,
		`<a href="/records/group-coordinator/OffsetCommitValue/v0/">v0</a>`, "__consumer_offsets", "OffsetCommitValue v4 as a record value",
		`<a href="/records/">Internal records</a>`} {
		if !strings.Contains(body, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	js, ok := s.Lookup("/records/metadata/UnregisterControllerRecord/v0.json")
	if !ok {
		t.Fatal("no JSON page of a trunk-only record type")
	}
	var p struct{ Name, Module, Hex string }
	if err := json.Unmarshal(js.Body, &p); err != nil || p.Name != "UnregisterControllerRecord" || p.Module != "metadata" || !strings.HasPrefix(p.Hex, "01") {
		t.Errorf("JSON page %+v (%v)", p, err)
	}
	if _, ok := s.Lookup("/records/"); !ok {
		t.Error("no /records/ index")
	}
}

// TestNoRecordsNoPages: without record schemas the extension adds nothing.
func TestNoRecordsNoPages(t *testing.T) {
	s := build(t, false)
	for _, p := range s.Paths() {
		if strings.HasPrefix(p, "/records/") {
			t.Fatalf("page %s without record schemas", p)
		}
	}
	idx, _ := s.Lookup("/")
	if strings.Contains(string(idx.Body), "Internal records") {
		t.Error("nav link without record schemas")
	}
}
