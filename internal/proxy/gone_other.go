//go:build !windows

package proxy

import "syscall"

// goneErrnos are the errors of a write to a peer that has gone: a broken
// pipe, or a reset.
var goneErrnos = []error{syscall.EPIPE, syscall.ECONNRESET}
