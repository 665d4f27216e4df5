//go:build unix

package recschema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModuleNamePlain: a module's name is its folder's name and becomes
// a path segment of the site (/records/<module>/<Record>/); "?" and "#"
// in it made every link to its pages point elsewhere, and "." or ".."
// would leave /records/. Such names are refused.
func TestModuleNamePlain(t *testing.T) {
	key := `{"type": "coordinator-key", "name": "XKey", "apiKey": 1, "validVersions": "0", "flexibleVersions": "none", "fields": []}`
	for _, name := range []string{"we ird?#", "a b", "<b>"} {
		root := t.TempDir()
		dir := filepath.Join(root, name)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "XKey.json"), []byte(key), 0o644)
		if _, err := Load(root); err == nil || !strings.Contains(err.Error(), "module name") {
			t.Errorf("folder %q: err = %v", name, err)
		}
	}
	if _, err := FromFS(nil, "..", os.DirFS(t.TempDir())); err == nil || !strings.Contains(err.Error(), "module name") {
		t.Errorf(`module "..": err = %v`, err)
	}
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "my_module-2.x"), 0o755)
	os.WriteFile(filepath.Join(root, "my_module-2.x", "XKey.json"), []byte(key), 0o644)
	if _, err := Load(root); err != nil {
		t.Errorf("a plain name: %v", err)
	}
}

// TestRecordsAmbiguous: two record schemas of one module with the same
// type and apiKey (a record's bytes name only the key) kept the one
// sorted last; two whose names differ only in letter case have one
// folder on a case-insensitive file system. Both are refused.
func TestRecordsAmbiguous(t *testing.T) {
	for _, c := range []struct {
		names [2]string
		keys  [2]int
		want  string
	}{
		{[2]string{"AKey", "BKey"}, [2]int{1, 1}, "BKey.json: coordinator-key BKey has apiKey 1, as AKey has"},
		{[2]string{"AKey", "AKEY"}, [2]int{1, 2}, "AKey.json: AKey differs from AKEY only in letter case"},
	} {
		dir := filepath.Join(t.TempDir(), "group-coordinator")
		os.MkdirAll(dir, 0o755)
		for i, n := range c.names {
			os.WriteFile(filepath.Join(dir, n+".json"), []byte(`{"type": "coordinator-key", "name": "`+n+`", "apiKey": `+string(rune('0'+c.keys[i]))+`, "validVersions": "0", "flexibleVersions": "none", "fields": []}`), 0o644)
		}
		if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.names, err, c.want)
		}
	}
}
