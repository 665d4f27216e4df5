package proxy

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWriteDeadline: a client that keeps sending requests but stops
// reading while the broker streams a response must not pin the
// connection. Once the socket buffers are full the proxy's write to the
// client cannot progress; after IdleTimeout it fails, the fault is
// logged, and both sides are closed. The client's requests keep bytes
// flowing, so the idle (read) timeout is not what ends it.
func TestWriteDeadline(t *testing.T) {
	const idle = time.Second // requests 100 ms apart: only a 900 ms stall could look idle
	brokerWrote := make(chan int64, 1)
	up := fakeBroker(t, func(c net.Conn) {
		// Read (and drop) every request, so the request direction never blocks.
		first := make(chan struct{})
		go func() {
			var once sync.Once
			buf := make([]byte, 4096)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					once.Do(func() { close(first) })
				}
				if err != nil {
					return
				}
			}
		}()
		select {
		case <-first:
		case <-time.After(10 * time.Second):
			brokerWrote <- -1
			return
		}
		// One response frame of 90 MiB (above the buffer cap, so it is
		// forwarded as it arrives), streamed until the proxy stops taking it.
		hdr := binary.BigEndian.AppendUint32(nil, 90<<20-4)
		hdr = binary.BigEndian.AppendUint32(hdr, 1) // correlation id of the request
		c.SetWriteDeadline(time.Now().Add(20 * time.Second))
		total := int64(0)
		n, err := c.Write(hdr)
		total += int64(n)
		chunk := make([]byte, 64<<10)
		for err == nil && total < 90<<20 {
			n, err = c.Write(chunk)
			total += int64(n)
		}
		if err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			total = -total // the proxy never closed the broker side
		}
		brokerWrote <- total
	})
	p, ev := start(t, up, func(c *Config) { c.IdleTimeout = idle })
	c := dial(t, p.Addr()) // never read until the proxy has given up

	req, _ := heartbeat(1)
	stopWriting := make(chan struct{})
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for {
			if _, err := c.Write(req); err != nil {
				return
			}
			select {
			case <-stopWriting:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()

	var wrote int64
	select {
	case wrote = <-brokerWrote:
	case <-time.After(15 * time.Second):
		close(stopWriting)
		t.Fatal("the broker side was never closed: a client that stops reading pins the connection")
	}
	close(stopWriting)
	<-writerDone
	if wrote <= 0 {
		t.Fatalf("broker wrote %d bytes without the proxy closing its side", -wrote)
	}
	if wrote >= 90<<20 {
		t.Fatalf("broker wrote the whole frame (%d bytes): the client's buffers never filled", wrote)
	}

	// The client gets what the proxy had already forwarded, then the end.
	n, err := io.Copy(io.Discard, c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("client read %d bytes and the proxy never closed it", n)
	}
	if n >= wrote {
		t.Errorf("client read %d bytes of the broker's %d: the write did not stall", n, wrote)
	}
	p.Close() // delivers every event

	faultsContaining(t, ev, "writing to the client: ")
	for _, f := range ev.of(EventFault) {
		if strings.Contains(f.Detail, "writing to the client") && !strings.Contains(f.Detail, "i/o timeout") {
			t.Errorf("write fault %q, want the write deadline (i/o timeout)", f.Detail)
		}
		if strings.Contains(f.Detail, "no bytes either way") {
			t.Errorf("idle close %q: requests flowed, only the write deadline should end this connection", f.Detail)
		}
	}
	if closes := ev.of(EventClose); len(closes) != 1 {
		t.Errorf("%d close events, want 1", len(closes))
	}
}

// deadlineConn counts the deadlines set on it; its reads return a byte at
// once and its writes take everything.
type deadlineConn struct {
	net.Conn
	readSets, writeSets int
	read, write         time.Time
}

func (d *deadlineConn) Read(b []byte) (int, error)  { return 1, nil }
func (d *deadlineConn) Write(b []byte) (int, error) { return len(b), nil }
func (d *deadlineConn) SetReadDeadline(t time.Time) error {
	d.readSets++
	d.read = t
	return nil
}
func (d *deadlineConn) SetWriteDeadline(t time.Time) error {
	d.writeSets++
	d.write = t
	return nil
}

// TestDeadlinesMovedLazily: a busy connection's pumps set a socket's
// deadline once, not at each read and write, and it is never earlier
// than the idle timeout from the last byte (reads) or from the write's
// start (writes), nor more than a sixteenth later.
func TestDeadlinesMovedLazily(t *testing.T) {
	const idle = 24 * time.Hour // its sixteenth, 90 minutes, passes in no test run
	c := &conn{p: &Proxy{cfg: Config{IdleTimeout: idle}}}
	c.last.Store(time.Now().UnixNano())
	d := &deadlineConn{}
	var rset, wset int64
	buf := make([]byte, 8)
	for range 1000 {
		start := time.Now()
		if _, err := c.readFrom(d, buf, &rset); err != nil {
			t.Fatal(err)
		}
		if _, err := c.writeTo(d, buf, &wset); err != nil {
			t.Fatal(err)
		}
		if last := time.Unix(0, c.last.Load()); d.read.Before(last.Add(idle)) || d.read.After(last.Add(idle+idle/deadlineSlack)) {
			t.Fatalf("read deadline %v after the last byte, want %v to %v", d.read.Sub(last), idle, idle+idle/deadlineSlack)
		}
		if d.write.Before(start.Add(idle)) {
			t.Fatalf("write deadline %v after the write began, under the timeout %v", d.write.Sub(start), idle)
		}
	}
	if d.readSets != 1 || d.writeSets != 1 {
		t.Errorf("%d read and %d write deadlines set over 1,000 reads and writes, want one each", d.readSets, d.writeSets)
	}
}
