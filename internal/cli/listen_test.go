package cli

import (
	"net"
	"os"
	"strings"
	"testing"
)

// TestListenTaken: proxy and serve refuse an address another process
// already accepts connections on, naming the process where the system
// tells (on Linux: this test binary).
func TestListenTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	comm, _ := os.ReadFile("/proc/self/comm")
	for _, args := range [][]string{
		{"proxy", "--spec", decSpec, "--listen", addr, "--upstream", "127.0.0.1:1"},
		{"serve", "--spec", decSpec, "--addr", addr},
	} {
		code, _, errs := decRun(t, nil, args...)
		if code != ExitFailure || !strings.Contains(errs, addr+" is already taken") {
			t.Errorf("%s: exit %d: %s", args[0], code, errs)
		}
		if len(comm) > 0 && !strings.Contains(errs, "by "+strings.TrimSpace(string(comm))+", pid ") {
			t.Logf("%s: the process is not named (the system may not tell): %s", args[0], errs)
		}
	}
	if err := checkListenFree("--listen", "127.0.0.1:0"); err != nil {
		t.Errorf("port 0: %v", err)
	}
}
