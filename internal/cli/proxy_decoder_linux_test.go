package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/manifester/manifester/internal/testdeadline"
)

// checkIdleThreads fails unless every thread of process pid comes to run
// at SCHED_IDLE (policy 5, field 41 of /proc/PID/task/TID/stat). It waits
// for that, until the test's deadline: on a loaded machine the process
// may not have reached its first line yet (the pipe holds what it is
// sent meanwhile).
func checkIdleThreads(t *testing.T, pid int) {
	t.Helper()
	var bad []string
	for deadline := testdeadline.Deadline(t); ; time.Sleep(20 * time.Millisecond) {
		if bad = notIdle(t, pid); len(bad) == 0 {
			return
		}
		if time.Now().After(deadline) {
			break
		}
	}
	t.Errorf("threads of the decoding process not at SCHED_IDLE (policy 5): %s", strings.Join(bad, "; "))
}

// notIdle lists the threads of process pid whose policy is not 5.
func notIdle(t *testing.T, pid int) []string {
	stats, err := filepath.Glob(filepath.Join("/proc", itoa(pid), "task", "*", "stat"))
	if err != nil || len(stats) == 0 {
		t.Fatalf("threads of process %d: %v", pid, err)
	}
	var bad []string
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended
		}
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // fields 3 on
		if len(fields) < 39 || fields[38] != "5" {
			bad = append(bad, fmt.Sprintf("%s: policy %v", p, fields[min(38, len(fields)-1)]))
		}
	}
	return bad
}

func processAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }
