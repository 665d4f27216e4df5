//go:build unix

package recschema

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadPipeJar: a named pipe named like a module jar in a libs folder
// is refused by name; opening it as a zip blocked `--records DIR` forever.
func TestLoadPipeJar(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "kafka-metadata-4.3.0.jar")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Load(dir); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "kafka-metadata-4.3.0.jar: not a regular file") {
			t.Errorf("err = %v", err)
		}
	case <-time.After(20 * time.Second):
		if f, err := os.OpenFile(pipe, os.O_RDWR, 0); err == nil {
			defer f.Close()
		}
		t.Fatal("loading a folder with a pipe for a jar did not return")
	}
}
