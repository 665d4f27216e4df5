package cli

import (
	"strings"
	"testing"
)

// TestServeMaxConnsUsage: serve needs room for at least one connection.
func TestServeMaxConnsUsage(t *testing.T) {
	for _, n := range []string{"0", "-1"} {
		_, stderr, code := runCLI(t, "serve", "--spec", spec43, "--addr", "127.0.0.1:0", "--max-conns", n)
		if code != ExitUsage || !strings.Contains(stderr, "--max-conns") {
			t.Errorf("serve --max-conns %s: exit %d, %q; want %d naming the flag", n, code, stderr, ExitUsage)
		}
	}
}
