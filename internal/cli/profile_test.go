package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestProfileFromEnvironment: MANIFESTER_CPUPROFILE and
// MANIFESTER_MEMPROFILE each get a profile (gzip-compressed protobuf, as
// pprof writes them) once the returned function runs; the allocation
// sampling rate comes back as it was; a file that cannot be created is
// said on stderr and costs nothing else.
func TestProfileFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	vars := map[string]string{"MANIFESTER_CPUPROFILE": cpu, "MANIFESTER_MEMPROFILE": mem}
	var errb bytes.Buffer
	env := &Env{Stderr: &errb, Getenv: func(k string) string { return vars[k] }}
	rate := runtime.MemProfileRate
	stop := startProfile(env, "proxy")
	var keep [][]byte
	for i := 0; i < 1000; i++ {
		keep = append(keep, make([]byte, 1<<10))
	}
	stop()
	if len(keep) != 1000 || runtime.MemProfileRate != rate {
		t.Errorf("MemProfileRate after the profile = %d, want %d back", runtime.MemProfileRate, rate)
	}
	for _, path := range []string{cpu, mem} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: %d bytes, not a gzip-compressed profile", filepath.Base(path), len(b))
		}
	}
	if errb.Len() != 0 {
		t.Errorf("stderr: %q", errb.String())
	}

	vars = map[string]string{"MANIFESTER_MEMPROFILE": filepath.Join(dir, "missing", "mem.pprof")}
	startProfile(env, "proxy")()
	if got := errb.String(); !strings.Contains(got, "manifester proxy: warning: MANIFESTER_MEMPROFILE: ") {
		t.Errorf("stderr for a file that cannot be created: %q", got)
	}
}
