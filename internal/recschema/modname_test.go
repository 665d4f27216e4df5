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
