package pairing

import (
	"testing"
	"time"
)

func req(corr int32) Request { return Request{APIKey: 3, Version: 12, CorrelationID: corr} }

func TestAnswerInOrder(t *testing.T) {
	var p Pending
	for c := int32(1); c <= 5; c++ {
		p.Add(req(c))
	}
	// 3 answers: 1 and 2 will get no answer.
	r, passed, ok := p.Answer(3)
	if !ok || r.CorrelationID != 3 || passed != 2 || p.PassedOver != 2 || p.Len() != 2 {
		t.Fatalf("Answer(3): %+v %d %v, passed over %d, %d left", r, passed, ok, p.PassedOver, p.Len())
	}
	// An unknown id changes nothing.
	if _, _, ok := p.Answer(1); ok || p.Len() != 2 || p.PassedOver != 2 {
		t.Fatalf("Answer(1) after it was passed over: ok %v, %d left", ok, p.Len())
	}
	if f := p.Find(5); f == nil || f.CorrelationID != 5 || p.Len() != 2 {
		t.Fatalf("Find(5): %+v, %d left", f, p.Len())
	}
	if p.Find(9) != nil {
		t.Fatal("Find(9) found something")
	}
	if n := p.Clear(); n != 2 || p.Len() != 0 {
		t.Fatalf("Clear: %d, %d left", n, p.Len())
	}
}

func TestMax(t *testing.T) {
	p := Pending{Max: 100}
	for c := int32(0); c < 1000; c++ {
		evicted := p.Add(req(c))
		if evicted != (c >= 100) {
			t.Fatalf("Add(%d): evicted %v", c, evicted)
		}
	}
	if p.Len() != 100 || p.Evicted != 900 {
		t.Fatalf("%d waiting, %d evicted", p.Len(), p.Evicted)
	}
	// The oldest went: 899 is gone, 900 to 999 wait.
	if p.Find(899) != nil || p.Find(900) == nil {
		t.Fatal("the wrong requests were evicted")
	}
	for c := int32(900); c < 1000; c++ {
		if r, passed, ok := p.Answer(c); !ok || passed != 0 || r.CorrelationID != c {
			t.Fatalf("Answer(%d): %+v %d %v", c, r, passed, ok)
		}
	}
	if p.Len() != 0 || p.PassedOver != 0 {
		t.Fatalf("%d left, %d passed over", p.Len(), p.PassedOver)
	}
}

func TestRaw(t *testing.T) {
	var p Pending
	p.Add(Request{Raw: true})
	p.Add(req(0)) // correlation id 0, like the raw entry's zero value
	if r, passed, ok := p.Answer(0); !ok || passed != 1 || r.Raw {
		// A response passes the raw entry over: it is counted.
		t.Fatalf("Answer(0): %+v %d %v", r, passed, ok)
	}
	p.Add(Request{Raw: true})
	if !p.TakeRaw() || p.TakeRaw() || p.Len() != 0 {
		t.Fatal("TakeRaw")
	}
	p.Add(req(7))
	if p.TakeRaw() || p.Len() != 1 {
		t.Fatal("TakeRaw took a request")
	}
}

func TestLatency(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	r := Request{Time: t0}
	if got := r.Latency(t0.Add(1500 * time.Microsecond)); got != 1500 {
		t.Errorf("latency %d µs, want 1500", got)
	}
}

// TestCompaction: a long run of adds and answers keeps the table small.
func TestCompaction(t *testing.T) {
	var p Pending
	for c := int32(0); c < 100000; c++ {
		p.Add(req(c))
		p.Add(req(-c - 1))
		if _, _, ok := p.Answer(c); !ok {
			t.Fatal(c)
		}
	}
	if p.Len() != 1 || cap(p.reqs) > 1024 {
		t.Errorf("%d waiting in a slice of capacity %d", p.Len(), cap(p.reqs))
	}
}

// TestRoomGivenBack: a connection that once had thousands of requests
// waiting gives their room back as they are answered, one at a time or
// all at once, so that many such connections do not each hold it for
// good; the answers are the same.
func TestRoomGivenBack(t *testing.T) {
	var p Pending
	for c := int32(0); c < 4096; c++ {
		p.Add(req(c))
	}
	for c := int32(0); c < 4090; c++ {
		if r, passed, ok := p.Answer(c); !ok || passed != 0 || r.CorrelationID != c {
			t.Fatalf("Answer(%d): %+v %d %v", c, r, passed, ok)
		}
	}
	if p.Len() != 6 || p.Room() > 4*keptRoom {
		t.Errorf("6 waiting of 4096: room for %d, want at most %d", p.Room(), 4*keptRoom)
	}
	if f := p.Find(4095); f == nil || f.CorrelationID != 4095 {
		t.Fatalf("Find(4095) after shrinking: %+v", f)
	}
	if _, passed, ok := p.Answer(4095); !ok || passed != 5 || p.Len() != 0 || p.Room() > keptRoom {
		t.Errorf("all answered: passed %d, %d waiting, room for %d", passed, p.Len(), p.Room())
	}
}

// TestPool: Pendings sharing a Pool are bounded together: adding to one
// when the pool is full drops that one's oldest (not another's), a
// Pending with none waiting adds all the same, and answers and Clear give
// their places back.
func TestPool(t *testing.T) {
	pool := &Pool{Max: 4}
	a, b := Pending{Pool: pool}, Pending{Pool: pool}
	for c := int32(0); c < 3; c++ {
		a.Add(req(c))
	}
	if b.Add(req(10)) || pool.Len() != 4 {
		t.Fatalf("filling the pool: %d", pool.Len())
	}
	if !b.Add(req(11)) || b.Evicted != 1 || a.Evicted != 0 || b.Find(10) != nil || a.Len() != 3 || pool.Len() != 4 {
		t.Errorf("adding to a full pool: b evicted %d, a %d; a has %d; pool %d", b.Evicted, a.Evicted, a.Len(), pool.Len())
	}
	var c Pending
	c.Pool = pool
	if c.Add(req(20)) || pool.Len() != 5 {
		t.Errorf("a first request beyond the pool: pool %d, want 5 (each connection may hold one)", pool.Len())
	}
	if _, _, ok := a.Answer(1); !ok || pool.Len() != 3 {
		t.Errorf("after answering 1 (0 passed over): pool %d, want 3", pool.Len())
	}
	a.Clear()
	b.Clear()
	c.Clear()
	if pool.Len() != 0 {
		t.Errorf("after Clear: pool %d", pool.Len())
	}
}

// TestUnansweredIDsCostLittle: responses whose correlation id no waiting
// request has (a crafted capture, or one that started mid-connection)
// are refused without looking at the waiting requests; each answer looks
// at the requests it answers and passes over, no more. Before, each
// unknown id compared every waiting request: 4096 of them for each of a
// capture's responses of 8 bytes.
func TestUnansweredIDsCostLittle(t *testing.T) {
	p := Pending{Max: 4096}
	for c := range int32(4096) {
		p.Add(req(c))
	}
	for c := range int32(10000) {
		if _, _, ok := p.Answer(-1 - c); ok {
			t.Fatal("an unknown id was answered")
		}
		if p.Find(-1-c) != nil {
			t.Fatal("an unknown id was found")
		}
	}
	if p.looked != 0 {
		t.Errorf("20000 unknown ids looked at %d waiting requests; want 0", p.looked)
	}
	if _, passed, ok := p.Answer(100); !ok || passed != 100 || p.looked != 101 {
		t.Errorf("Answer(100): %v, passed %d, looked at %d; want 101", ok, passed, p.looked)
	}
	if n := p.Clear(); n != 4096-101 || p.Find(200) != nil {
		t.Errorf("Clear: %d; Find after it: %v", n, p.Find(200))
	}
	// An id given twice (raw tokens between them): the first is
	// answered, then the second, then neither is waiting.
	var q Pending
	q.Add(req(7))
	q.Add(Request{Raw: true, CorrelationID: 7})
	q.Add(req(7))
	for i := range 2 {
		if _, passed, ok := q.Answer(7); !ok || passed != i {
			t.Fatalf("Answer(7) #%d: %v, passed %d", i+1, ok, passed)
		}
	}
	if _, _, ok := q.Answer(7); ok || q.Len() != 0 {
		t.Fatalf("a third Answer(7) succeeded, or %d left", q.Len())
	}
}
