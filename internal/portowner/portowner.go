// Package portowner tells which process listens on a TCP port, where the
// system lets it (Linux, through /proc, for processes the user may
// inspect); elsewhere it cannot tell.
package portowner

import "fmt"

// Process is a process that listens on a port.
type Process struct {
	PID  int
	Name string
}

func (p Process) String() string { return fmt.Sprintf("%s, pid %d", p.Name, p.PID) }

// Listener returns the process listening on the TCP port (IPv4 or IPv6),
// and false when there is none or it cannot be told.
func Listener(port int) (Process, bool) { return listener(port) }
