//go:build windows

package proxy

import "syscall"

// goneErrnos are the errors of a write to a peer that has gone: Windows
// reports a reset by the peer as WSAECONNRESET and a connection its stack
// aborted (after the peer's reset) as WSAECONNABORTED, not as the POSIX
// numbers Go invents for it.
var goneErrnos = []error{syscall.WSAECONNRESET, syscall.WSAECONNABORTED, syscall.EPIPE, syscall.ECONNRESET}
