//go:build unix

package spec

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenSpecialFiles: a named pipe where a spec file, a PROVENANCE
// file or a jar is expected is refused by name. Opening a pipe blocks
// until something writes to it, so `manifester apis --spec DIR` hung on a
// folder holding fifo.json; a device (/dev/zero.json) is refused too.
func TestOpenSpecialFiles(t *testing.T) {
	spec := `{"type": "data", "name": "Thing", "validVersions": "0", "flexibleVersions": "none", "fields": []}`
	for _, c := range []struct {
		name string
		pipe string // the folder's file that is a named pipe
		path string // what is opened: "" for the folder
		want string
	}{
		{"spec file", "Pipe.json", "", "Pipe.json: not a regular file"},
		{"provenance", "PROVENANCE", "", ""},
		{"clients jar in libs", "kafka-clients-4.3.0.jar", "", "kafka-clients-4.3.0.jar: not a regular file"},
		{"jar given", "kafka-clients-4.3.0.jar", "kafka-clients-4.3.0.jar", "kafka-clients-4.3.0.jar: not a regular file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "Thing.json"), []byte(spec), 0o644); err != nil {
				t.Fatal(err)
			}
			pipe := filepath.Join(dir, c.pipe)
			if err := syscall.Mkfifo(pipe, 0o644); err != nil {
				t.Skip(err)
			}
			done := make(chan error, 1)
			go func() {
				src, err := Open(filepath.Join(dir, c.path))
				if err == nil {
					_, err = src.ReadAll()
					src.Close()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
					t.Errorf("err = %v, want %q", err, c.want)
				}
			case <-time.After(20 * time.Second):
				// Release the reader: open the pipe's other end.
				if f, err := os.OpenFile(pipe, os.O_RDWR, 0); err == nil {
					defer f.Close()
				}
				t.Fatalf("opening a folder with the named pipe %s did not return", c.pipe)
			}
		})
	}
}
