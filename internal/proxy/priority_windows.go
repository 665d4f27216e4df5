//go:build windows

package proxy

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// decoderOwnsThread: the decoding goroutine has no thread of its own.
const decoderOwnsThread = false

// lowerPriority does nothing where thread priorities are not set: the
// decoding goroutine competes with forwarding like any other.
func lowerPriority() {}

// IdlePriority puts the calling process in the idle priority class, for
// a decoding process ([DecodeStream]) beside the proxy.
func IdlePriority() error {
	if err := windows.SetPriorityClass(windows.CurrentProcess(), windows.IDLE_PRIORITY_CLASS); err != nil {
		return fmt.Errorf("idle priority: %w", err)
	}
	return nil
}
