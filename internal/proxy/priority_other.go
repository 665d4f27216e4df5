//go:build !linux

package proxy

// decoderOwnsThread: the decoding goroutine has no thread of its own.
const decoderOwnsThread = false

// lowerPriority does nothing where thread priorities are not set: the
// decoding goroutine competes with forwarding like any other.
func lowerPriority() {}
