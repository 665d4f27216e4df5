package tlstest

import (
	"os"
	"os/exec"
	"testing"
)

// Tool returns the path of the program name: when it is not installed
// the test is skipped, or fails when CI=true (CI installs tshark and
// openssl).
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required in CI: %v", name, err)
		}
		t.Skipf("%s not installed: skipping", name)
	}
	return p
}
