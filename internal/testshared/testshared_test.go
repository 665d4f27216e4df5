package testshared

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestLocate(t *testing.T) {
	root := t.TempDir()
	mod := filepath.Join(root, "repo")
	pkg := filepath.Join(mod, "internal", "x")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := locate(pkg); !errors.Is(err, ErrAbsent) {
		t.Fatalf("without ../shared: err = %v, want ErrAbsent", err)
	}
	want := filepath.Join(root, Name)
	if err := os.Mkdir(want, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := locate(pkg)
	if err != nil || got != want {
		t.Fatalf("locate = %q, %v; want %q", got, err, want)
	}
	// A "shared" directory inside the module is not the shared folder.
	if err := os.RemoveAll(want); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(mod, Name), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := locate(pkg); !errors.Is(err, ErrAbsent) {
		t.Fatalf("with only repo/shared: err = %v, want ErrAbsent", err)
	}
}

func TestSpecUnderShared(t *testing.T) {
	d := Spec(t, "4.3")
	if _, err := os.Stat(filepath.Join(d, "ApiVersionsRequest.json")); err != nil {
		t.Errorf("Spec(4.3) = %s: %v", d, err)
	}
}
