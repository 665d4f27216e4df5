package proxy

import (
	"testing"
	"time"

	"github.com/manifester/manifester/internal/testdeadline"
)

// TestBusyFeederNotWokenPerFrame: frames queued while the feeder is busy
// (it took an item and polls the queue) do not wake it, each a futex call
// and a thread woken; it takes them at its poll. Once a poll finds the
// queue empty it sleeps, and the next frame wakes it.
func TestBusyFeederNotWokenPerFrame(t *testing.T) {
	q := newDecodeQueue(1<<20, 64)
	c := &conn{id: 1}
	cq := q.open(c)
	queue := func() {
		t.Helper()
		if !q.grow(cq, 1) || !q.frame(cq, &item{kind: kindRequest, conn: c, reserved: 1}) {
			t.Fatal("no room in the queue")
		}
	}
	for range 3 {
		queue()
	}
	if len(q.wake) != 0 {
		t.Errorf("a busy feeder was woken for a frame")
	}
	for i := range 3 {
		if it, _, _, _, ok := q.next(); !ok || it == nil {
			t.Fatalf("item %d: none", i)
		}
	}
	got := make(chan *item, 1)
	go func() {
		it, _, _, _, _ := q.next()
		got <- it
	}()
	deadline := testdeadline.Deadline(t)
	for {
		q.mu.Lock()
		asleep := q.sleeping
		q.mu.Unlock()
		if asleep {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the feeder never went to sleep on an empty queue")
		}
		time.Sleep(time.Millisecond)
	}
	queue()
	select {
	case it := <-got:
		if it == nil {
			t.Error("no item")
		}
	case <-time.After(time.Until(deadline)):
		t.Fatal("a sleeping feeder was not woken by a frame")
	}
}

// TestFullConnectionSkipsBeforeCopy: once a connection has as many frames
// queued as it may, its next frame is skipped at its first bytes (counted,
// its room given back), not copied whole and refused at its end; once the
// feeder takes a frame, the connection's frames are collected again.
func TestFullConnectionSkipsBeforeCopy(t *testing.T) {
	q := newDecodeQueue(1<<20, 4) // one frame queued per connection
	p := &Proxy{q: q}
	c := &conn{id: 1, p: p}
	c.q = q.open(c)
	collect := func(size int) (on bool, body frameBody, reserved int) {
		on = true
		chunk := make([]byte, size)
		for range 2 { // a frame in two reads
			c.collect(&on, &body, &reserved, 2*size, chunk)
		}
		return on, body, reserved
	}
	on, body, reserved := collect(100)
	if !on || body.len() != 200 || reserved != 200 {
		t.Fatalf("first frame: collecting %v, %d bytes copied, %d reserved; want true, 200, 200", on, body.len(), reserved)
	}
	if !q.frame(c.q, &item{kind: kindRequest, conn: c, body: body, reserved: reserved}) {
		t.Fatal("first frame refused")
	}
	on, body, reserved = collect(100)
	if on || body.len() != 0 || reserved != 0 {
		t.Errorf("second frame with one queued: collecting %v, %d bytes copied, %d reserved; want false, 0, 0", on, body.len(), reserved)
	}
	q.mu.Lock()
	skipped, bytes := c.q.skipped, q.bytes
	q.mu.Unlock()
	if skipped != 1 || bytes != 200 {
		t.Errorf("after the skip: %d skipped, %d bytes held; want 1 and the first frame's 200", skipped, bytes)
	}
	it, _, _, _, ok := q.next()
	if !ok || it == nil {
		t.Fatal("the queued frame was not taken")
	}
	q.release(c.q, it.reserved)
	if on, body, _ = collect(100); !on || body.len() != 200 {
		t.Errorf("after the feeder took the frame: collecting %v, %d bytes; want true, 200", on, body.len())
	}
}
