package proxy

import "testing"

// TestFifo: elements come out in the order they went in, through
// emptying, refilling and compaction, and a queue that never empties
// (one in, one out, around a backlog) keeps a bounded array.
func TestFifo(t *testing.T) {
	var f fifo[int]
	next, want := 0, 0
	pop := func() {
		t.Helper()
		if got := f.pop(); got != want {
			t.Fatalf("pop = %d, want %d", got, want)
		}
		want++
	}
	for round := range 5 {
		for range 10 + round*100 {
			f.push(next)
			next++
		}
		for f.len() > round {
			pop()
		}
	}
	// A backlog of 300, then 100,000 steps of one in and one out.
	for f.len() < 300 {
		f.push(next)
		next++
	}
	maxCap := 0
	for range 100000 {
		f.push(next)
		next++
		pop()
		maxCap = max(maxCap, cap(f.a))
	}
	if f.len() != 300 || maxCap > 4*300 {
		t.Errorf("length %d (want 300), array capacity up to %d (want at most %d)", f.len(), maxCap, 4*300)
	}
	for f.len() > 0 {
		pop()
	}
	if want != next {
		t.Errorf("%d popped, %d pushed", want, next)
	}
	if f.a != nil {
		t.Errorf("an emptied array of capacity %d (over %d) is kept", cap(f.a), fifoKeep)
	}
}
