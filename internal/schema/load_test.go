package schema

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/manifester/manifester/internal/testshared"
)

// specRoot is where tests and CI read Kafka's spec files; they are never
// copied into the repository.
var specRoot = testshared.SpecPath("")

func releases(t testing.TB) []string {
	t.Helper()
	testshared.Dir(t)
	entries, err := os.ReadDir(specRoot)
	if err != nil {
		t.Fatalf("reading %s: %v", specRoot, err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	for _, want := range []string{"3.9", "4.0", "4.1", "4.2", "4.3", "trunk"} {
		if !slices.Contains(out, want) {
			t.Fatalf("releases under %s are %v; %s is missing", specRoot, out, want)
		}
	}
	return out
}

func TestEveryReleaseLoads(t *testing.T) {
	for _, rel := range releases(t) {
		t.Run(rel, func(t *testing.T) {
			reg, err := Load(filepath.Join(specRoot, rel))
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if reg.Label != rel {
				t.Errorf("label = %q, want %q", reg.Label, rel)
			}
			if reg.RequestHeader == nil || reg.ResponseHeader == nil {
				t.Errorf("headers missing")
			}
			if len(reg.APIs) < 80 {
				t.Errorf("only %d APIs", len(reg.APIs))
			}
		})
	}
}
