package site

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// testSite is a site of the given paths, each with a body naming it.
func testSite(paths ...string) *Site {
	s := &Site{assets: map[string]*Asset{}}
	for _, p := range paths {
		s.assets[p] = &Asset{Path: p, Body: []byte("body of " + p + strings.Repeat(".", len(p)*100))}
		s.paths = append(s.paths, p)
	}
	sort.Strings(s.paths)
	return s
}

// readTree returns every file under dir by its URL path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		got[URLPath(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestWriteDir writes a site with nested directories into a new
// directory, then again over the first copy (shorter bodies: every file is
// truncated), and checks that the files are exactly the site's.
func TestWriteDir(t *testing.T) {
	paths := []string{"/", "/404.html", "/apis/A/", "/apis/A/v0/", "/apis/A/v0.json", "/apis/A/v1/", "/apis/A/diff/v0..v1/",
		"/apis/B/v0/", "/deep/a/b/c/d/e/", "/static/site.css"}
	for i := range 30 {
		paths = append(paths, "/many/"+strings.Repeat("x", i+1)+"/")
	}
	s := testSite(paths...)
	dir := filepath.Join(t.TempDir(), "out", "site")
	check := func() {
		t.Helper()
		got := readTree(t, dir)
		if len(got) != len(paths) {
			t.Errorf("wrote %d files, want %d", len(got), len(paths))
		}
		for _, p := range paths {
			if b, ok := got[p]; !ok || !bytes.Equal(b, s.assets[p].Body) {
				t.Errorf("%s: wrote %q, want %q", p, b, s.assets[p].Body)
			}
		}
	}
	if err := s.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	check()
	for _, a := range s.assets {
		a.Body = a.Body[:len(a.Body)/2]
	}
	if err := s.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	check()
	fi, err := os.Stat(filepath.Join(dir, "apis", "A", "v0.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o600 != 0o600 || fi.Mode().Perm()&0o111 != 0 {
		t.Errorf("file mode %v, want rw, not executable", fi.Mode())
	}
}

// TestWriteDirErrors checks that a file where a directory must go, and a
// directory where a file must go, fail the write with the path named, and
// that the first error in path order is the one returned.
func TestWriteDirErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "apis"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "z", "index.html"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := testSite("/", "/apis/A/v0/", "/apis/A/v1/", "/z/").WriteDir(dir)
	if err == nil || !strings.Contains(err.Error(), "apis") {
		t.Errorf("writing under a file: %v, want an error naming apis", err)
	}
	err = testSite("/", "/z/").WriteDir(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join("z", "index.html")) {
		t.Errorf("writing over a directory: %v, want an error naming z/index.html", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "index.html")); err != nil {
		t.Errorf("the files before the failing one were not written: %v", err)
	}
}
