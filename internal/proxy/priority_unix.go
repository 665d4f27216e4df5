//go:build unix && !linux

package proxy

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// decoderOwnsThread: the decoding goroutine has no thread of its own.
const decoderOwnsThread = false

// lowerPriority does nothing where thread priorities are not set: the
// decoding goroutine competes with forwarding like any other.
func lowerPriority() {}

// IdlePriority puts the calling process at the lowest CPU priority the
// platform gives a process (nice 19), for a decoding process
// ([DecodeStream]) beside the proxy.
func IdlePriority() error {
	if err := unix.Setpriority(unix.PRIO_PROCESS, 0, 19); err != nil {
		return fmt.Errorf("idle priority: %w", err)
	}
	return nil
}
