package server

import (
	"context"
	"sync/atomic"
	"time"
)

// gate caps work that runs at once: a fixed number of slots, and a queue
// of requests waiting for one. The decode handlers and the pages rendered
// on demand each have their own.
type gate struct {
	slots     chan struct{}
	queued    atomic.Int64 // requests waiting for a slot
	maxQueued int64
	wait      time.Duration
}

// init makes the gate n slots where at most maxQueued requests wait, each
// at most wait; zero ones take the defaults (MaxConcurrentDecodes(),
// MaxQueuedDecodes, QueueWait). Before any use.
func (g *gate) init(n, maxQueued int, wait time.Duration) {
	if n <= 0 {
		n = MaxConcurrentDecodes()
	}
	if maxQueued <= 0 {
		maxQueued = MaxQueuedDecodes
	}
	if wait <= 0 {
		wait = QueueWait
	}
	g.slots = make(chan struct{}, n)
	g.maxQueued, g.wait = int64(maxQueued), wait
}

// acquire claims a slot. When all are busy, the request waits in the
// queue for at most the gate's wait; false when the queue is full, the
// wait runs out or ctx is done (the client went away).
func (g *gate) acquire(ctx context.Context) bool {
	select {
	case g.slots <- struct{}{}:
		return true
	default:
	}
	if g.queued.Add(1) > g.maxQueued {
		g.queued.Add(-1)
		return false
	}
	defer g.queued.Add(-1)
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// release gives back a slot acquire claimed.
func (g *gate) release() { <-g.slots }
