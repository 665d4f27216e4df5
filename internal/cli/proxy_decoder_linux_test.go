package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// checkIdleThreads fails unless every thread of process pid runs at
// SCHED_IDLE (policy 5, field 41 of /proc/PID/task/TID/stat).
func checkIdleThreads(t *testing.T, pid int) {
	t.Helper()
	stats, err := filepath.Glob(filepath.Join("/proc", itoa(pid), "task", "*", "stat"))
	if err != nil || len(stats) == 0 {
		t.Fatalf("threads of process %d: %v", pid, err)
	}
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // fields 3 on
		if len(fields) < 39 || fields[38] != "5" {
			t.Errorf("%s: policy %v, want 5 (SCHED_IDLE)", p, fields[min(38, len(fields)-1)])
		}
	}
}

func processAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }
