package proxy

import (
	"encoding/binary"
	"sync"
	"testing"
	"time"
)

// queuedBytes is the decode-queue space reserved now.
func queuedBytes(p *Proxy) int64 {
	p.q.mu.Lock()
	defer p.q.mu.Unlock()
	return p.q.bytes
}

// frameEvents counts the decoded frames of API api on connection conn.
func frameEvents(ev *events, conn int, api string) int {
	n := 0
	for _, e := range ev.of(EventFrame) {
		if e.Conn == conn && e.Frame != nil && e.Frame.API == api {
			n++
		}
	}
	return n
}

// TestStalledClaimDoesNotStarveOthers: a client sends a size prefix that
// claims 60 MiB, 1 MiB of it, and stalls. It reserves queue space for the
// bytes that came, not for the claim, and another client's frames are
// decoded and logged while it stalls (not after the idle timeout).
func TestStalledClaimDoesNotStarveOthers(t *testing.T) {
	up, _ := heartbeatBroker(t)
	p, ev := start(t, up, nil)
	staller := dial(t, p.Addr())
	hb, _ := heartbeat(1)
	claim := append(binary.BigEndian.AppendUint32(nil, 60<<20), hb[4:]...)
	sent := len(claim) + 1<<20
	staller.Write(append(claim, make([]byte, 1<<20)...))
	// Wait until the proxy has read what was sent.
	deadline := time.Now().Add(20 * time.Second)
	for queuedBytes(p) < int64(sent) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if q := queuedBytes(p); q != int64(sent) {
		t.Fatalf("%d bytes reserved for a frame of which %d bytes came (claimed %d)", q, sent, 60<<20)
	}
	other := dial(t, p.Addr())
	for i := int32(1); i <= 20; i++ {
		if err := exchange(other, i); err != nil {
			t.Fatal(err)
		}
	}
	// Both directions of the other client's 20 exchanges are decoded
	// while the first client still holds its half frame.
	for time.Now().Before(deadline) && frameEvents(ev, 2, "Heartbeat") < 40 {
		time.Sleep(5 * time.Millisecond)
	}
	if n := frameEvents(ev, 2, "Heartbeat"); n != 40 {
		t.Fatalf("%d frames of the other client decoded while the first stalls, want 40", n)
	}
	staller.Close()
	p.Close()
	if q := queuedBytes(p); q != 0 {
		t.Errorf("%d bytes still reserved after the stalled client closed", q)
	}
}

// TestFloodingClientDoesNotStarveOthers: while decoding is held up, one
// client pipelines many frames and another sends a few. The flood fills
// only its own share of the queue (its excess is forwarded undecoded and
// counted), and every frame of the other client is decoded.
func TestFloodingClientDoesNotStarveOthers(t *testing.T) {
	up, _ := heartbeatBroker(t)
	var gate sync.WaitGroup
	gate.Add(1)
	var once sync.Once
	p, ev := start(t, up, func(c *Config) {
		c.QueueFrames = 16 // 4 per connection
		inner := c.Sink
		c.Sink = func(e *Event) {
			if e.Kind == EventFrame {
				once.Do(gate.Wait) // hold decoding at the first frame
			}
			inner(e)
		}
	})
	flood, calm := dial(t, p.Addr()), dial(t, p.Addr())
	if err := exchange(flood, 0); err != nil { // its request holds the decoder
		t.Fatal(err)
	}
	var reqs []byte
	for i := int32(1); i <= 200; i++ {
		req, _ := heartbeat(i)
		reqs = append(reqs, req...)
	}
	flood.Write(reqs)
	_, resp := heartbeat(1)
	buf := make([]byte, 200*len(resp))
	if _, err := readFull(flood, buf); err != nil {
		t.Fatal(err)
	}
	if err := exchange(calm, 7); err != nil {
		t.Fatal(err)
	}
	gate.Done()
	flood.Close()
	calm.Close()
	p.Close()
	if n := frameEvents(ev, 2, "Heartbeat"); n != 2 {
		t.Errorf("%d frames of the calm client decoded, want 2 (request and response)", n)
	}
	skipped := 0
	for _, e := range ev.of(EventSkipped) {
		if e.Conn == 1 {
			skipped += e.Count
		} else {
			t.Errorf("skips on connection %d: %s", e.Conn, e.Detail)
		}
	}
	decoded := frameEvents(ev, 1, "Heartbeat")
	if skipped == 0 || decoded+skipped != 402 {
		t.Errorf("flooding client: %d frames decoded and %d skipped, want some skipped and 402 in all", decoded, skipped)
	}
}

func readFull(c interface{ Read([]byte) (int, error) }, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := c.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
