package proxy

import (
	"sync"
	"time"

	"github.com/manifester/manifester/internal/english"
)

// decodeQueue holds the frames and events waiting for the decoding
// goroutine: one FIFO per connection (id 0 for the proxy's own events),
// served round robin, so that a connection that sends much, or that
// stalls in the middle of a huge frame, cannot keep another's frames from
// being decoded and logged. Nothing here ever blocks a forwarder: a frame
// that finds no room is forwarded without decoding and counted, per
// connection, and the count is logged as an [EventSkipped].
//
// Space is reserved as a frame's bytes arrive ([decodeQueue.grow]), never
// from its size prefix. A connection may hold at most connBytes (frames
// being collected and frames queued), or half the queue for one frame
// while it has nothing else queued; all connections together at most
// maxBytes.
type decodeQueue struct {
	mu        sync.Mutex
	wake      chan struct{}
	conns     map[int]*connQueue
	ready     fifo[*connQueue] // connections with items, in service order
	bytes     int64            // reserved over all connections
	closed    bool
	maxBytes  int64
	connBytes int64
	connItems int // frames queued per connection
	// sleeping says the feeder found nothing in its last poll
	// (feederPoll) and waits to be woken by the next frame; a busy one
	// is not woken for each frame. timer times its polls.
	sleeping bool
	timer    *time.Timer
}

// connQueue is one connection's part of the queue.
type connQueue struct {
	id       int
	c        *conn // nil for the proxy's own events
	items    fifo[*item]
	frames   int   // frames among items
	reserved int64 // bytes of queued frames and of frames being collected
	inReady  bool
	done     bool // the connection's last event is queued
	skipped  int  // frames forwarded without decoding, not yet reported
	dropped  int  // events dropped, not yet reported
}

// maxConnEvents bounds the events (not frames) one connection queues;
// beyond it events are dropped and counted.
const maxConnEvents = 4096

// feederPoll is how often a busy feeder looks at the queue instead of
// being woken for each frame (each wake-up is a futex call and a thread
// woken on these few cores, per frame forwarded); the log may lag a frame
// by as much.
const feederPoll = time.Millisecond

func newDecodeQueue(maxBytes int64, maxFrames int) *decodeQueue {
	q := &decodeQueue{wake: make(chan struct{}, 1), conns: map[int]*connQueue{}, maxBytes: maxBytes,
		connBytes: max(maxBytes/4, 1), connItems: max(maxFrames/4, 1)}
	q.conns[0] = &connQueue{id: 0}
	return q
}

// open returns the queue of connection id.
func (q *decodeQueue) open(c *conn) *connQueue {
	q.mu.Lock()
	defer q.mu.Unlock()
	cq := &connQueue{id: c.id, c: c}
	q.conns[c.id] = cq
	return cq
}

func (q *decodeQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// push appends an item to cq (locked).
func (q *decodeQueue) push(cq *connQueue, it *item) {
	cq.items.push(it)
	if !cq.inReady {
		cq.inReady = true
		q.ready.push(cq)
	}
}

// event queues a non-frame event on cq (nil: the proxy's own). last marks
// the connection's final event.
func (q *decodeQueue) event(cq *connQueue, e *Event, last bool) {
	q.mu.Lock()
	if cq == nil {
		cq = q.conns[0]
	}
	if last {
		cq.done = true
	}
	if cq.items.len()-cq.frames >= maxConnEvents && !last {
		cq.dropped++
	} else {
		q.push(cq, &item{kind: kindEvent, ev: e})
	}
	q.mu.Unlock()
	q.signal()
}

// grow reserves n more bytes for a frame being collected by cq; false
// when there is no room (the caller gives back what the frame holds with
// release and counts a skip). A connection with as many frames queued as
// it may have gets no room either: [decodeQueue.frame] would refuse its
// frame at its end, so it is skipped at its first bytes, not copied first.
func (q *decodeQueue) grow(cq *connQueue, n int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := int64(n)
	if q.bytes+k > q.maxBytes || cq.frames >= q.connItems || q.closed {
		return false
	}
	if cq.reserved+k > q.connBytes && (cq.frames > 0 || cq.reserved+k > q.maxBytes/2) {
		return false
	}
	q.bytes += k
	cq.reserved += k
	return true
}

// release gives back n reserved bytes.
func (q *decodeQueue) release(cq *connQueue, n int) {
	if n == 0 {
		return
	}
	q.mu.Lock()
	q.bytes -= int64(n)
	cq.reserved -= int64(n)
	q.mu.Unlock()
}

// skip counts a frame of cq forwarded without decoding.
func (q *decodeQueue) skip(cq *connQueue) {
	q.mu.Lock()
	cq.skipped++
	q.mu.Unlock()
}

// frame queues a complete frame whose it.reserved bytes were reserved;
// false (space given back, a skip counted) when cq has too many frames
// queued.
func (q *decodeQueue) frame(cq *connQueue, it *item) bool {
	q.mu.Lock()
	if cq.frames >= q.connItems || q.closed {
		q.bytes -= int64(it.reserved)
		cq.reserved -= int64(it.reserved)
		cq.skipped++
		q.mu.Unlock()
		it.body.drop()
		putHeld(it.held)
		return false
	}
	cq.frames++
	q.push(cq, it)
	wake := q.sleeping
	q.mu.Unlock()
	if wake {
		q.signal()
	}
	return true
}

// reserveWhole reserves n bytes for a frame held whole anyway and queues
// it; false (a skip counted) without room.
func (q *decodeQueue) reserveWhole(cq *connQueue, it *item, n int) bool {
	if !q.grow(cq, n) {
		q.skip(cq)
		putHeld(it.held)
		return false
	}
	it.reserved = n
	return q.frame(cq, it)
}

// next waits for the next item, taking the connections in turn. It
// returns the skip and drop counts of the item's connection not reported
// yet, and false once the queue is closed and empty.
func (q *decodeQueue) next() (it *item, cq *connQueue, skipped, dropped int, ok bool) {
	timedOut := false
	for {
		q.mu.Lock()
		if q.ready.len() > 0 {
			q.sleeping = false // busy: frames queued meanwhile wait for its poll
			cq = q.ready.pop()
			it = cq.items.pop()
			if it.kind != kindEvent {
				cq.frames--
			}
			skipped, dropped = cq.skipped, cq.dropped
			cq.skipped, cq.dropped = 0, 0
			if cq.items.len() > 0 {
				q.ready.push(cq)
			} else {
				cq.inReady = false
				if cq.done && cq.id != 0 {
					delete(q.conns, cq.id)
				}
			}
			q.mu.Unlock()
			return it, cq, skipped, dropped, true
		}
		if q.closed {
			// Counts not reported yet (a connection whose last frames
			// were skipped after its close was queued cannot happen,
			// but the proxy's own queue can hold some).
			for _, c := range q.conns {
				if c.skipped > 0 || c.dropped > 0 {
					skipped, dropped = c.skipped, c.dropped
					c.skipped, c.dropped = 0, 0
					q.mu.Unlock()
					return nil, c, skipped, dropped, true
				}
			}
			q.mu.Unlock()
			return nil, nil, 0, 0, false
		}
		q.sleeping = timedOut
		q.mu.Unlock()
		if timedOut {
			<-q.wake
			continue
		}
		if q.timer == nil {
			q.timer = time.NewTimer(feederPoll)
		} else {
			q.timer.Reset(feederPoll)
		}
		select {
		case <-q.wake:
			q.timer.Stop()
		case <-q.timer.C:
			timedOut = true
		}
	}
}

// empty reports that no item is queued.
func (q *decodeQueue) empty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ready.len() == 0
}

// close ends the queue: next returns what is left, then false.
func (q *decodeQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// skippedEvent reports frames of connection c (nil: the proxy's) that
// were forwarded without decoding, and events dropped.
func skippedEvent(c *conn, skipped, dropped int) *Event {
	e := &Event{Kind: EventSkipped, Time: time.Now(), Count: skipped}
	if c != nil {
		e.Conn, e.Client, e.Listener, e.Upstream = c.base.Conn, c.base.Client, c.base.Listener, c.base.Upstream
	}
	switch {
	case skipped > 0 && dropped > 0:
		e.Detail = "decoding fell behind: " + english.Count(skipped, "frame") + " forwarded without decoding, " + english.Count(dropped, "log event") + " dropped"
	case skipped > 0:
		e.Detail = "decoding fell behind: " + english.Count(skipped, "frame") + " forwarded without decoding"
	default:
		e.Detail = "decoding fell behind: " + english.Count(dropped, "log event") + " dropped"
	}
	return e
}

// fifo is a queue whose array is reused, so that a steady flow of items
// through it allocates nothing (the forwarders push on every frame). An
// array grown past fifoKeep is dropped when the queue empties.
type fifo[T any] struct {
	a    []T
	head int
}

// fifoKeep is the largest array a fifo keeps once empty.
const fifoKeep = 256

func (f *fifo[T]) len() int { return len(f.a) - f.head }

// push appends v. When the array is full and at least half of it is
// taken elements, the rest moves to the front first: a queue that never
// empties holds an array of at most about twice its longest length.
func (f *fifo[T]) push(v T) {
	if len(f.a) == cap(f.a) && f.head > 0 && f.head >= len(f.a)/2 {
		n := copy(f.a, f.a[f.head:])
		clear(f.a[n:])
		f.a, f.head = f.a[:n], 0
	}
	f.a = append(f.a, v)
}

// pop takes the first element; the fifo must not be empty.
func (f *fifo[T]) pop() T {
	var zero T
	v := f.a[f.head]
	f.a[f.head] = zero // no reference kept
	f.head++
	if f.head == len(f.a) {
		if cap(f.a) > fifoKeep {
			f.a = nil
		} else {
			f.a = f.a[:0]
		}
		f.head = 0
	}
	return v
}
