package cli

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/manifester/manifester/internal/portowner"
)

// checkListenFree refuses a listen address that another process already
// accepts connections on. Binding alone does not always tell: macOS and
// Windows let a second program bind 127.0.0.1:P beside one bound to
// 0.0.0.0:P, and clients then reach either. Port 0 (any free port) is
// always free.
func checkListenFree(flagName, addr string) error {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil // the listener reports the bad address
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port == 0 {
		return nil
	}
	dial := host
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		dial = "127.0.0.1"
		if ip != nil && ip.To4() == nil {
			dial = "::1"
		}
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(dial, portText), 2*time.Second)
	if err != nil {
		return nil
	}
	conn.Close()
	return failure{fmt.Errorf("%s is already taken%s: another process accepts connections there; stop it or give another %s", addr, heldBy(port), flagName)}
}

// heldBy names the process listening on port, " by NAME, pid N", when the
// system tells.
func heldBy(port int) string {
	if p, ok := portowner.Listener(port); ok {
		return " by " + p.String()
	}
	return ""
}

// listenError adds the process holding the port to an "address already
// in use" error.
func listenError(addr string, err error) error {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	if _, portText, e := net.SplitHostPort(addr); e == nil {
		if port, e := strconv.Atoi(portText); e == nil {
			if by := heldBy(port); by != "" {
				return fmt.Errorf("%w (the port is held%s)", err, by)
			}
		}
	}
	return err
}
