package schema

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHasRequest loads the everytype fixture with a reserved API key
// added and checks which key and version pairs read as requests: only
// valid versions of APIs that are not reserved.
func TestHasRequest(t *testing.T) {
	dir := t.TempDir()
	src := "../../testdata/specs/everytype"
	names, err := filepath.Glob(filepath.Join(src, "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("fixture: %v (%d files)", err, len(names))
	}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(n)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, kind := range []string{"request", "response"} {
		name := "ReservedRequest"
		if kind == "response" {
			name = "ReservedResponse"
		}
		body := `{"apiKey": 1002, "type": "` + kind + `", "name": "` + name + `", "validVersions": "none", "flexibleVersions": "none", "fields": []}`
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if api, ok := reg.API(1002); !ok || !api.Reserved() {
		t.Fatalf("API 1002 = %v, %v: want the reserved fixture", api, ok)
	}
	for _, c := range []struct {
		key, version int16
		want         bool
	}{
		{1000, 0, true}, {1000, 2, true}, {1000, 3, false}, {1000, -1, false},
		{1001, 1, true}, {1001, 2, false},
		{1002, 0, false}, // reserved
		{1003, 0, false}, // unknown
		{-1, 0, false},
	} {
		if got := reg.HasRequest(c.key, c.version); got != c.want {
			t.Errorf("HasRequest(%d, %d) = %v, want %v", c.key, c.version, got, c.want)
		}
	}
}
