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
