package proxy

import "testing"

// TestDefaultDecodeWorkers: a quarter of the CPUs, at least one.
func TestDefaultDecodeWorkers(t *testing.T) {
	for _, c := range []struct{ cpus, want int }{{1, 1}, {2, 1}, {3, 1}, {4, 1}, {7, 1}, {8, 2}, {16, 4}, {64, 16}} {
		if got := defaultDecodeWorkers(c.cpus); got != c.want {
			t.Errorf("defaultDecodeWorkers(%d) = %d, want %d", c.cpus, got, c.want)
		}
	}
}
