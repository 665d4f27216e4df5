//go:build linux

package proxy

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// niceLevels returns the nice level of every thread of the process.
func niceLevels(t *testing.T) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/self/task/*/stat")
	if err != nil || len(stats) == 0 {
		t.Skipf("no /proc/self/task: %v", err)
	}
	var out []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		// Fields after the command name (in parentheses, which may hold
		// spaces): state is field 3, nice field 19.
		rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
		fields := strings.Fields(rest)
		if n, err := strconv.Atoi(fields[19-3]); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// TestDecodeThreadPriority: the decoding goroutine runs on a thread
// decodeNice levels below the process's.
func TestDecodeThreadPriority(t *testing.T) {
	base := niceLevels(t)[0] // the main thread is listed first
	if base+decodeNice > 19 {
		t.Skipf("the process already runs at nice %d", base)
	}
	p, err := New(Config{Upstream: "127.0.0.1:1", Codec: testCodec(t), ListenerIdle: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, n := range niceLevels(t) {
			if n == base+decodeNice {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no thread at nice %d: %v", base+decodeNice, niceLevels(t))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
