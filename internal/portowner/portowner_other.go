//go:build !linux

package portowner

// listener cannot tell on this system.
func listener(int) (Process, bool) { return Process{}, false }
