//go:build !windows

package term

// enableEscapes reports whether w takes ANSI escape sequences: terminals
// outside Windows always do.
func enableEscapes(any) bool { return true }
