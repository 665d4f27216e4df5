// Package pairing pairs Kafka responses with their requests. A response
// names only its correlation id; its API and version (needed to decode
// it) and the time its request went out (for latency) come from the
// request with that id. Kafka answers a connection's requests in order,
// so the requests before the one answered never get an answer (acks=0
// produce requests); they are dropped and counted, as are the oldest
// requests beyond a limit. Nothing leaves the table uncounted.
package pairing

import "time"

// Request is a request awaiting its response.
type Request struct {
	APIKey        int16
	Version       int16
	CorrelationID int32
	// Time is when the request was seen (its frame completed, or its
	// header passed).
	Time time.Time
	// Size is the request frame's size, size prefix included, where known.
	Size int
	// Raw marks an entry for a raw SASL token (after a legacy
	// SaslHandshake v0): it has no correlation id, and the next frame of
	// the other direction answers it ([Pending.TakeRaw]).
	Raw bool
}

// Latency is the time from the request to a response at t, in
// microseconds.
func (r *Request) Latency(t time.Time) int64 { return t.Sub(r.Time).Microseconds() }

// Pending is one connection's requests awaiting responses, in the order
// they were sent. The zero value has no limit; it is not safe for
// concurrent use.
type Pending struct {
	// reqs[head:] are waiting; removing from the front moves head, and
	// the slice is compacted once most of it is behind head.
	reqs []Request
	head int
	// Max bounds the requests held (0: no bound); adding one beyond it
	// drops the oldest, counted in Evicted.
	Max int
	// Pool, when set, is shared with other connections' Pendings and
	// bounds their requests together: adding one when the pool is full
	// drops this connection's oldest, counted in Evicted.
	Pool *Pool
	// Evicted counts requests dropped beyond Max; PassedOver the requests
	// that a later request's answer showed will get none.
	Evicted, PassedOver int64
	// ids counts the waiting requests (raw tokens aside) of each
	// correlation id, so that a response whose id none has is refused
	// without looking at them all.
	ids map[int32]int
	// looked counts the waiting requests looked at for an id (for tests:
	// it bounds the work).
	looked int64
}

// Len is the number of requests waiting.
func (p *Pending) Len() int { return len(p.reqs) - p.head }

// Pool counts the requests waiting in the Pendings that share it (not
// safe for concurrent use: their connections are read by one goroutine).
type Pool struct {
	// Max bounds the requests waiting in all (0: no bound).
	Max int
	n   int
}

// Len is the number of requests waiting in all.
func (p *Pool) Len() int { return p.n }

// count adds n (negative: removes) to p's pool, if it has one.
func (p *Pending) count(n int) {
	if p.Pool != nil {
		p.Pool.n += n
	}
}

// full reports whether adding a request must first drop the oldest.
func (p *Pending) full() bool {
	return p.Max > 0 && p.Len() >= p.Max || p.Pool != nil && p.Pool.Max > 0 && p.Pool.n >= p.Pool.Max
}

// keptRoom is the room for requests an empty Pending keeps; beyond it,
// room is given back as the requests are answered, so that a connection
// that once had thousands waiting does not hold their room for good.
const keptRoom = 64

// drop removes the first n waiting requests.
func (p *Pending) drop(n int) {
	for _, r := range p.reqs[p.head : p.head+n] {
		p.forget(r)
	}
	clear(p.reqs[p.head : p.head+n])
	p.head += n
	p.count(-n)
	switch {
	case p.head == len(p.reqs) && cap(p.reqs) > keptRoom:
		p.reqs, p.head, p.ids = nil, 0, nil // a map keeps its room too
	case p.head == len(p.reqs):
		p.reqs, p.head = p.reqs[:0], 0
	case p.head >= keptRoom && p.head >= len(p.reqs)/2:
		live := p.reqs[p.head:]
		if cap(p.reqs) > 4*len(live) {
			// Mostly room: move what waits, and its ids, to room of
			// its size.
			p.reqs, p.head = append(make([]Request, 0, 2*len(live)), live...), 0
			p.ids = make(map[int32]int, len(live))
			for _, r := range live {
				if !r.Raw {
					p.ids[r.CorrelationID]++
				}
			}
			return
		}
		k := copy(p.reqs, live)
		clear(p.reqs[k:])
		p.reqs, p.head = p.reqs[:k], 0
	}
}

// Room is the number of requests p has room for (its memory is about
// 48 bytes each).
func (p *Pending) Room() int { return cap(p.reqs) }

// Add appends a request, dropping the oldest when Max are waiting or the
// Pool is full; it reports whether one was dropped.
func (p *Pending) Add(r Request) (evicted bool) {
	if p.Len() > 0 && p.full() {
		p.drop(1)
		p.Evicted++
		evicted = true
	}
	p.reqs = append(p.reqs, r)
	p.count(1)
	if !r.Raw {
		if p.ids == nil {
			p.ids = map[int32]int{}
		}
		p.ids[r.CorrelationID]++
	}
	return evicted
}

// forget takes r, leaving the waiting requests, out of ids.
func (p *Pending) forget(r Request) {
	if r.Raw {
		return
	}
	if p.ids[r.CorrelationID] <= 1 {
		delete(p.ids, r.CorrelationID)
	} else {
		p.ids[r.CorrelationID]--
	}
}

// index is the position among the waiting requests of the first (raw
// tokens aside) with the correlation id, or -1.
func (p *Pending) index(corr int32) int {
	if p.ids[corr] == 0 {
		return -1
	}
	for i, r := range p.reqs[p.head:] {
		p.looked++
		if !r.Raw && r.CorrelationID == corr {
			return i
		}
	}
	return -1
}

// Find returns the first waiting request (raw tokens aside) with the
// correlation id, leaving it in place; nil when there is none. The
// pointer is valid until the next change.
func (p *Pending) Find(corr int32) *Request {
	if i := p.index(corr); i >= 0 {
		return &p.reqs[p.head+i]
	}
	return nil
}

// Answer removes and returns the first waiting request (raw tokens aside)
// with the correlation id, and with it every request before it, which
// will get no answer: passed says how many (also counted in PassedOver).
// ok is false, and nothing is removed, when no request has the id.
func (p *Pending) Answer(corr int32) (req Request, passed int, ok bool) {
	i := p.index(corr)
	if i < 0 {
		return Request{}, 0, false
	}
	req = p.reqs[p.head+i]
	p.drop(i + 1)
	p.PassedOver += int64(i)
	return req, i, true
}

// TakeRaw removes the first waiting entry when it is a raw SASL token's,
// and reports whether it was.
func (p *Pending) TakeRaw() bool {
	if p.Len() > 0 && p.reqs[p.head].Raw {
		p.drop(1)
		return true
	}
	return false
}

// Clear removes every waiting request (the connection ended) and returns
// how many there were.
func (p *Pending) Clear() int {
	n := p.Len()
	p.reqs, p.head, p.ids = nil, 0, nil
	p.count(-n)
	return n
}
