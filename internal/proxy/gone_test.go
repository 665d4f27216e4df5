package proxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
)

// TestClientGone: each of the platform's errors for a peer that has gone
// reads as gone however it is wrapped (as the net package wraps a
// write's), and the ordinary ends and a timeout do not.
func TestClientGone(t *testing.T) {
	for _, e := range goneErrnos {
		wrapped := &net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", e)}
		if !clientGone(wrapped) || !clientGone(fmt.Errorf("writing to the client: %w", wrapped)) {
			t.Errorf("%v (%#v): not read as a client gone", wrapped, e)
		}
	}
	for _, err := range []error{io.EOF, net.ErrClosed, os.ErrDeadlineExceeded, errors.New("broken pipe")} {
		if clientGone(err) {
			t.Errorf("%v read as a client gone", err)
		}
	}
}
