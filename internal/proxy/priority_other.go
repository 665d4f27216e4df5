//go:build !linux

package proxy

// lowerPriority does nothing where thread priorities are not set: the
// decoding goroutine competes with forwarding like any other.
func lowerPriority() {}
