//go:build linux

package portowner

import (
	"net"
	"os"
	"strings"
	"testing"
)

// TestListenerIsThisProcess: a port this test listens on is found to be
// held by this very process.
func TestListenerIsThisProcess(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	p, ok := Listener(port)
	if !ok {
		t.Skip("/proc does not tell (a restricted container)")
	}
	comm, _ := os.ReadFile("/proc/self/comm")
	if p.PID != os.Getpid() || p.Name != strings.TrimSpace(string(comm)) {
		t.Errorf("got %v, want pid %d (%s)", p, os.Getpid(), comm)
	}
	ln.Close()
	if p, ok := Listener(port); ok {
		t.Errorf("a closed port is held by %v", p)
	}
}
