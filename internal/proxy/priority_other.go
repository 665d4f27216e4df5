//go:build !unix && !windows

package proxy

import "fmt"

// decoderOwnsThread: the decoding goroutine has no thread of its own.
const decoderOwnsThread = false

// lowerPriority does nothing where thread priorities are not set: the
// decoding goroutine competes with forwarding like any other.
func lowerPriority() {}

// IdlePriority is not supported here (js/wasm and the like, where the
// proxy does not run).
func IdlePriority() error { return fmt.Errorf("idle priority: not supported on this platform") }
