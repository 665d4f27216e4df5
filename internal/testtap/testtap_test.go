package testtap

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"testing"

	"github.com/manifester/manifester/internal/capture"
)

// frame is a size-prefixed frame of body.
func frame(body string) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// TestTapRecordsAndTrims: what a client sends through the tap reaches the
// upstream and is recorded per direction; the capture counts whole frames
// only, and leaves out a direction's bytes after its last whole frame.
func TestTapRecordsAndTrims(t *testing.T) {
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	reply := append(frame("pong"), frame("cut-off-frame")[:13]...) // a whole frame, then 13 bytes of the next
	go func() {
		c, err := up.Accept()
		if err != nil {
			return
		}
		buf := make([]byte, len(frame("ping")))
		if _, err := io.ReadFull(c, buf); err == nil {
			c.Write(reply)
		}
		c.Close()
	}()
	tap := New(t, up.Addr().String())
	c, err := net.Dial("tcp", tap.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(frame("ping")); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(got, reply) {
		t.Fatalf("the client read %q (%v), want %q", got, err, reply)
	}
	c.Close()
	tap.Close()

	if s := tap.Streams(capture.ClientToServer); len(s) != 1 || !bytes.Equal(s[0], frame("ping")) {
		t.Errorf("client streams %q", s)
	}
	if s := tap.Streams(capture.ServerToClient); len(s) != 1 || !bytes.Equal(s[0], reply) {
		t.Errorf("server streams %q", s)
	}
	if a := tap.Addrs(); len(a) != 1 || a[0][1].String() != tap.Addr() {
		t.Errorf("addresses %v, want one connection to %s", a, tap.Addr())
	}
	pcap, frames, conns := tap.Capture(t, capture.PCAP)
	if frames != 2 || conns != 1 {
		t.Errorf("capture: %d frames, %d connections; want 2, 1", frames, conns)
	}
	if !bytes.Contains(pcap, frame("pong")) || bytes.Contains(pcap, []byte("cut-off-f")) {
		t.Errorf("the capture should hold the whole frame and not the cut one's bytes")
	}
}
