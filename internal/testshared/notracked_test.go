package testshared

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pendingReadme lists, by StandIn (so this file does not quote them), the
// Kafka sentences README.md still quotes; only the lead edits README.md.
// They are tolerated there alone, and the test fails once one is gone, so
// that its entry is removed with it.
var pendingReadme = []string{}

// TestNoKafkaTextInTrackedFiles scans every file git tracks in this
// repository for Kafka's sentences (the abouts and spec comments of every
// release in ../shared, see KafkaTexts): goldens, fixtures, code and docs
// must not quote them. Tests compare with Kafka's text by reading
// ../shared at test time.
func TestNoKafkaTextInTrackedFiles(t *testing.T) {
	texts := KafkaTexts(t)
	if len(texts) < 500 {
		t.Fatalf("only %d Kafka texts found", len(texts))
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(filepath.Dir(wd)) // internal/testshared -> module root
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no module root at %s: %v", root, err)
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed: cannot list the tracked files")
	}
	cmd := exec.Command(git, "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): cannot list the tracked files", err)
	}
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(files) < 100 {
		t.Fatalf("git lists only %d files", len(files))
	}
	// Match on whitespace-collapsed text, so a sentence re-wrapped or
	// re-indented in a doc or a golden is still found.
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	needles := make([]string, len(texts))
	for i, s := range texts {
		needles[i] = norm(s)
	}
	pending := map[string]bool{}
	for _, s := range pendingReadme {
		pending[s] = false
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // deleted in the work tree
		}
		if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
			continue // binary
		}
		hay := norm(string(b))
		for _, k := range needles {
			if !strings.Contains(hay, k) {
				continue
			}
			if _, ok := pending[StandIn("about", k)]; ok && f == "README.md" {
				pending[StandIn("about", k)] = true
				continue
			}
			t.Errorf("%s quotes Kafka's text %q", f, k)
		}
	}
	for k, seen := range pending {
		if !seen {
			t.Errorf("README.md no longer quotes the text of %s: remove it from pendingReadme", k)
		}
	}
}
