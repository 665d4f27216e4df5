package proxy

import (
	"errors"
	"io"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// fullListener returns the address of a listener whose accept queue is
// full (backlog 0, one connection queued, never accepted): Linux drops
// further SYNs, so connecting to it hangs until the dialer gives up.
func fullListener(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Skip("raw socket:", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return addr // full
			}
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if i > 8 {
			t.Skip("the accept queue does not fill on this system")
		}
	}
}

// TestDialTimeout: a broker that never completes the connection makes
// the proxy give up after DialTimeout, log it and close the client
// cleanly.
func TestDialTimeout(t *testing.T) {
	up := fullListener(t)
	p, ev := start(t, up, func(c *Config) { c.DialTimeout = 300 * time.Millisecond })
	c := dial(t, p.Addr()) // its 10 s deadline fails the read if the dial never ends
	req, _ := heartbeat(1)
	c.Write(req)
	if b, err := io.ReadAll(c); err != nil || len(b) != 0 {
		t.Errorf("client read %d bytes, err %v; want a clean close", len(b), err)
	}
	p.Close()
	faultsContaining(t, ev, "i/o timeout; closing the client connection")
}

// TestStopWhileDialling: a proxy stopped while it connects to the broker
// for a client logs the client's close, saying why, and no fault (the
// dial its own stop cancelled is nobody's fault).
func TestStopWhileDialling(t *testing.T) {
	up := fullListener(t)
	p, ev := start(t, up, func(c *Config) { c.DialTimeout = time.Minute })
	dial(t, p.Addr())
	for deadline := time.Now().Add(10 * time.Second); len(ev.of(EventOpen)) == 0; {
		if time.Now().After(deadline) { // a guard against a hang, not a speed check
			t.Fatal("no open event")
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.Close()
	closes := ev.of(EventClose)
	if f := ev.of(EventFault); len(f) != 0 || len(closes) != 1 || closes[0].Detail != "the proxy stopped while connecting to the broker" {
		t.Errorf("faults %v, closes %v", f, closes)
	}
}
