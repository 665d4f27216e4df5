//go:build windows

package proxy

import (
	"net"
	"os"
	"syscall"
	"testing"
)

// TestClientGoneWindows: Windows' own numbers for a reset and an aborted
// connection read as a client gone, as the POSIX ones do elsewhere.
func TestClientGoneWindows(t *testing.T) {
	for _, e := range []syscall.Errno{syscall.WSAECONNRESET, syscall.WSAECONNABORTED} {
		if !clientGone(&net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("wsasend", e)}) {
			t.Errorf("%v: not read as a client gone", e)
		}
	}
}
