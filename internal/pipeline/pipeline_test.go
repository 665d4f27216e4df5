package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// gates is one channel per item, closed by the test in the order it
// chooses: Work waits for its item's gate, so the order in which items
// finish is the test's, not the scheduler's or the machine's speed.
type gates []chan struct{}

func newGates(n int) gates {
	g := make(gates, n)
	for i := range g {
		g[i] = make(chan struct{})
	}
	return g
}

// TestOrderUnderRandomCompletion finishes the items' Work in a random
// order and checks that Emit sees them in submission order, each once.
func TestOrderUnderRandomCompletion(t *testing.T) {
	for seed := range uint64(20) {
		const n = 300
		g := newGates(n)
		var emitted []int
		p := New(context.Background(), Config{Workers: 8, Window: 16}, Stages[int]{
			Work: func(i int) error { <-g[i]; return nil },
			Emit: func(i int) error { emitted = append(emitted, i); return nil },
		})
		go func() { // open the gates in a random order
			r := rand.New(rand.NewPCG(seed, 1))
			for _, i := range r.Perm(n) {
				close(g[i])
			}
		}()
		for i := range n {
			if err := p.Submit(i); err != nil {
				t.Fatalf("seed %d: Submit(%d): %v", seed, i, err)
			}
		}
		if err := p.Close(); err != nil {
			t.Fatalf("seed %d: Close: %v", seed, err)
		}
		if len(emitted) != n {
			t.Fatalf("seed %d: %d items emitted, want %d", seed, len(emitted), n)
		}
		for i, v := range emitted {
			if v != i {
				t.Fatalf("seed %d: item %d emitted at position %d", seed, v, i)
			}
		}
	}
}

// TestWorkRunsConcurrently checks that Workers items are worked on at
// once: each Work waits until all workers are inside Work.
func TestWorkRunsConcurrently(t *testing.T) {
	const workers = 4
	var barrier sync.WaitGroup
	barrier.Add(workers)
	var count atomic.Int32
	p := New(context.Background(), Config{Workers: workers}, Stages[int]{
		Work: func(int) error {
			if count.Add(1) <= workers {
				barrier.Done()
				barrier.Wait() // deadlocks unless workers Works run at once
			}
			return nil
		},
		Emit: func(int) error { return nil },
	})
	for i := range 3 * workers {
		if err := p.Submit(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWindowBound holds every Work until the submitter has filled the
// window: Submit must not return for more items than the window holds
// beyond those emitted, at any point.
func TestWindowBound(t *testing.T) {
	const window, n = 6, 100
	var submitted, emitted atomic.Int64
	var violation atomic.Value
	check := func(where string) {
		if s, e := submitted.Load(), emitted.Load(); s > e+window {
			violation.CompareAndSwap(nil, where)
		}
	}
	open := make(chan struct{})
	var once sync.Once
	p := New(context.Background(), Config{Workers: 2, Window: window}, Stages[int]{
		Work: func(int) error { <-open; return nil },
		Emit: func(int) error { emitted.Add(1); check("emit"); return nil },
	})
	for i := range n {
		if err := p.Submit(i); err != nil {
			t.Fatal(err)
		}
		submitted.Add(1)
		check("submit")
		if submitted.Load() == window {
			// The window is full and nothing is emitted: the next Submit
			// waits until Work runs.
			once.Do(func() { close(open) })
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if v := violation.Load(); v != nil {
		t.Fatalf("more than %d items in flight (seen at %s)", window, v)
	}
	if emitted.Load() != n {
		t.Fatalf("%d emitted, want %d", emitted.Load(), n)
	}
}

// TestWindowBlocksSubmit checks that Submit waits while the window is
// full, with no timing: a Submit beyond the window returns only after an
// item was emitted.
func TestWindowBlocksSubmit(t *testing.T) {
	const window = 3
	g := newGates(window + 1)
	var emitted atomic.Int64
	p := New(context.Background(), Config{Workers: 1, Window: window}, Stages[int]{
		Work: func(i int) error { <-g[i]; return nil },
		Emit: func(int) error { emitted.Add(1); return nil },
	})
	for i := range window {
		if err := p.Submit(i); err != nil {
			t.Fatal(err)
		}
	}
	returned := make(chan int64)
	go func() {
		if err := p.Submit(window); err != nil {
			t.Error(err)
		}
		returned <- emitted.Load()
	}()
	close(g[0]) // lets item 0 be emitted, which frees one place
	if e := <-returned; e < 1 {
		t.Fatalf("Submit beyond a full window returned with %d items emitted", e)
	}
	for _, c := range g[1:] {
		close(c)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if emitted.Load() != window+1 {
		t.Fatalf("%d emitted, want %d", emitted.Load(), window+1)
	}
}

// TestWorkErrorInOrder fails one item's Work: the items before it are
// emitted, none after, and Submit and Close return the error.
func TestWorkErrorInOrder(t *testing.T) {
	boom := errors.New("boom")
	const bad, n = 37, 200
	g := newGates(n)
	var emitted []int
	p := New(context.Background(), Config{Workers: 4, Window: 8}, Stages[int]{
		Work: func(i int) error {
			<-g[i]
			if i == bad {
				return boom
			}
			return nil
		},
		Emit: func(i int) error { emitted = append(emitted, i); return nil },
	})
	go func() { // the items after the bad one finish first
		for i := n - 1; i >= 0; i-- {
			close(g[i])
		}
	}()
	var serr error
	for i := range n {
		if serr = p.Submit(i); serr != nil {
			break
		}
	}
	if serr != nil && !errors.Is(serr, boom) {
		t.Fatalf("Submit: %v, want boom", serr)
	}
	if err := p.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close: %v, want boom", err)
	}
	if len(emitted) != bad {
		t.Fatalf("%d items emitted, want the %d before the failed one", len(emitted), bad)
	}
	for i, v := range emitted {
		if v != i {
			t.Fatalf("item %d emitted at %d", v, i)
		}
	}
}

// TestEmitErrorStops fails Emit of one item: nothing after it is emitted
// and the submitter learns of it.
func TestEmitErrorStops(t *testing.T) {
	full := errors.New("disk full")
	var emitted []int
	p := New(context.Background(), Config{Workers: 2, Window: 4}, Stages[int]{
		Work: func(int) error { return nil },
		Emit: func(i int) error {
			if i == 10 {
				return full
			}
			emitted = append(emitted, i)
			return nil
		},
	})
	var serr error
	submitted := 0
	for i := range 1000 {
		if serr = p.Submit(i); serr != nil {
			break
		}
		submitted++
	}
	if !errors.Is(serr, full) {
		t.Fatalf("Submit: %v after %d items, want the Emit error", serr, submitted)
	}
	if submitted > 10+4+1 {
		t.Errorf("%d items taken after Emit failed at item 10 with a window of 4", submitted)
	}
	if err := p.Close(); !errors.Is(err, full) {
		t.Fatalf("Close: %v", err)
	}
	if len(emitted) != 10 {
		t.Fatalf("%d emitted, want 10", len(emitted))
	}
}

// TestCancel cancels the context while Work is held and Submit waits on a
// full window: Submit returns the cause, no item is emitted after, and
// Close returns once the held Work returns.
func TestCancel(t *testing.T) {
	stop := errors.New("stopped by the user")
	ctx, cancel := context.WithCancelCause(context.Background())
	open := make(chan struct{})
	var started atomic.Int64
	startedAll := make(chan struct{})
	var emitted atomic.Int64
	p := New(ctx, Config{Workers: 2, Window: 2}, Stages[int]{
		Work: func(int) error {
			if started.Add(1) == 2 {
				close(startedAll)
			}
			<-open
			return nil
		},
		Emit: func(int) error { emitted.Add(1); return nil },
	})
	for i := range 2 {
		if err := p.Submit(i); err != nil {
			t.Fatal(err)
		}
	}
	<-startedAll
	done := make(chan error)
	go func() { done <- p.Submit(2) }() // waits: the window is full
	cancel(stop)
	if err := <-done; !errors.Is(err, stop) {
		t.Fatalf("Submit after cancel: %v, want the cause", err)
	}
	if err := p.Submit(3); !errors.Is(err, stop) {
		t.Fatalf("Submit after cancel: %v", err)
	}
	close(open)
	if err := p.Close(); !errors.Is(err, stop) {
		t.Fatalf("Close: %v, want the cause", err)
	}
	if e := emitted.Load(); e != 0 {
		t.Fatalf("%d items emitted after the cancel", e)
	}
	if err := p.Submit(4); !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit after Close: %v", err)
	}
}

// TestIdle checks that Idle runs when the emitter has caught up: after
// the last item at least, and never between two items whose Work was done
// before the first was emitted.
func TestIdle(t *testing.T) {
	g := newGates(4)
	var log []string
	p := New(context.Background(), Config{Workers: 4, Window: 4}, Stages[int]{
		Work: func(i int) error { <-g[i]; return nil },
		Emit: func(i int) error { log = append(log, "emit"); return nil },
		Idle: func() error { log = append(log, "idle"); return nil },
	})
	for i := range 4 {
		if err := p.Submit(i); err != nil {
			t.Fatal(err)
		}
	}
	// Items 1 to 3 are done before item 0: the emitter emits all four
	// and then is idle once.
	ready := make(chan struct{})
	go func() {
		for _, c := range g[1:] {
			close(c)
		}
		close(ready)
	}()
	<-ready
	waitDone(p, 1, 3)
	close(g[0])
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"emit", "emit", "emit", "emit", "idle"}
	if len(log) != len(want) {
		t.Fatalf("log %v, want %v", log, want)
	}
	for i := range want {
		if log[i] != want[i] {
			t.Fatalf("log %v, want %v", log, want)
		}
	}
}

// waitDone waits until the Work of the items in slots from..to is done
// (their done signal is buffered), without consuming it.
func waitDone[T any](p *Pipeline[T], from, to int) {
	for i := from; i <= to; i++ {
		for len(p.slots[i].done) == 0 {
			runtime.Gosched()
		}
	}
}

// TestErrorFromIdle stops the pipeline on Idle's error.
func TestErrorFromIdle(t *testing.T) {
	bad := errors.New("flush failed")
	p := New(context.Background(), Config{Workers: 1, Window: 1}, Stages[int]{
		Work: func(int) error { return nil },
		Emit: func(int) error { return nil },
		Idle: func() error { return bad },
	})
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		err = p.Submit(i)
	}
	if cerr := p.Close(); !errors.Is(cerr, bad) {
		t.Fatalf("Close: %v", cerr)
	}
}

// TestDefaults: zero Config works.
func TestDefaults(t *testing.T) {
	var sum atomic.Int64
	p := New(context.Background(), Config{}, Stages[int]{
		Work: func(i int) error { sum.Add(int64(i)); return nil },
		Emit: func(int) error { return nil },
	})
	for i := range 1000 {
		if err := p.Submit(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if sum.Load() != 999*1000/2 {
		t.Fatalf("sum %d", sum.Load())
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// goid is the calling goroutine's id, from its stack header
// ("goroutine 12 [running]:").
func goid() string {
	var b [64]byte
	s := string(b[:runtime.Stack(b[:], false)])
	s = s[len("goroutine "):]
	for i, r := range s {
		if r == ' ' {
			return s[:i]
		}
	}
	return s
}

// TestStart: Config.Start runs once on each worker and on the emitter,
// each on a goroutine of its own (goroutine ids are never reused), and
// every Work and Emit runs on a goroutine whose Start has returned.
func TestStart(t *testing.T) {
	const workers = 3
	var mu sync.Mutex
	started := map[string]bool{} // goroutine → Start returned
	calls := 0
	var bad []string
	check := func(stage string) {
		mu.Lock()
		defer mu.Unlock()
		if !started[goid()] {
			bad = append(bad, stage+" on a goroutine without Start")
		}
	}
	p := New(context.Background(), Config{Workers: workers, Start: func() {
		mu.Lock()
		calls++
		id := goid()
		if _, dup := started[id]; dup {
			bad = append(bad, "Start twice on goroutine "+id)
		}
		started[id] = false
		mu.Unlock()
		runtime.Gosched()
		mu.Lock()
		started[id] = true
		mu.Unlock()
	}}, Stages[int]{
		Work: func(int) error { check("Work"); return nil },
		Emit: func(int) error { check("Emit"); return nil },
	})
	for i := range 50 {
		if err := p.Submit(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if calls != workers+1 || len(started) != workers+1 {
		t.Errorf("Start ran %d times on %d goroutines, want %d", calls, len(started), workers+1)
	}
	if len(bad) > 0 {
		t.Errorf("%d problems, first: %s", len(bad), bad[0])
	}
}

// TestBudgetBound gives items of random costs and holds every Work until
// the submitter cannot go on: the items in flight never cost more than
// the budget together, unless one item alone does, and the window still
// caps their number.
func TestBudgetBound(t *testing.T) {
	for seed := range uint64(10) {
		const window, budget, n = 8, 100, 300
		r := rand.New(rand.NewPCG(seed, 2))
		costs := make([]int64, n)
		for i := range costs {
			costs[i] = r.Int64N(60) // some items cost nothing
			if i%37 == 5 {
				costs[i] = 150 // more than the budget alone
			}
		}
		var mu sync.Mutex
		var spent, inFlight int64
		var bad []string
		check := func(where string, i int) {
			if inFlight > window {
				bad = append(bad, fmt.Sprintf("%s %d: %d items in flight", where, i, inFlight))
			}
			if spent > budget && inFlight > 1 {
				bad = append(bad, fmt.Sprintf("%s %d: %d items cost %d", where, i, inFlight, spent))
			}
		}
		g := newGates(n)
		p := New(context.Background(), Config{Workers: 3, Window: window, Budget: budget}, Stages[int]{
			Work: func(i int) error { <-g[i]; return nil },
			Emit: func(i int) error {
				mu.Lock()
				spent -= costs[i]
				inFlight--
				mu.Unlock()
				return nil
			},
			Cost: func(i int) int64 { return costs[i] },
		})
		go func() {
			for _, i := range r.Perm(n) {
				close(g[i])
			}
		}()
		for i := range n {
			if err := p.Submit(i); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			spent += costs[i]
			inFlight++
			check("after Submit", i)
			mu.Unlock()
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if spent != 0 || inFlight != 0 {
			t.Fatalf("seed %d: %d items costing %d left after Close", seed, inFlight, spent)
		}
		if len(bad) > 0 {
			t.Fatalf("seed %d: %d violations, first: %s", seed, len(bad), bad[0])
		}
	}
}

// TestBudgetBlocksSubmit checks, with no timing, that a Submit that does
// not fit in the budget waits until enough is emitted, and that an item
// costing more than the whole budget waits until nothing is in flight
// and is then taken alone.
func TestBudgetBlocksSubmit(t *testing.T) {
	costs := []int64{4, 4, 4, 20, 1}
	g := newGates(len(costs))
	var emitted atomic.Int64
	p := New(context.Background(), Config{Workers: 2, Window: 16, Budget: 10}, Stages[int]{
		Work: func(i int) error { <-g[i]; return nil },
		Emit: func(int) error { emitted.Add(1); return nil },
		Cost: func(i int) int64 { return costs[i] },
	})
	for i := range 2 { // 8 of 10
		if err := p.Submit(i); err != nil {
			t.Fatal(err)
		}
	}
	returned := make(chan int64)
	submit := func(i int) {
		go func() {
			if err := p.Submit(i); err != nil {
				t.Error(err)
			}
			returned <- emitted.Load()
		}()
	}
	submit(2)   // 12 > 10: waits for item 0
	close(g[1]) // item 1 done, but item 0 is not: nothing emitted
	close(g[0])
	if e := <-returned; e < 1 {
		t.Fatalf("Submit beyond the budget returned with %d items emitted", e)
	}
	submit(3) // 20 alone: waits until items 0–2 are emitted
	close(g[2])
	if e := <-returned; e != 3 {
		t.Fatalf("an item over the budget was taken with %d of 3 items emitted", e)
	}
	submit(4) // 20 + 1 > 10: waits for item 3
	close(g[3])
	if e := <-returned; e != 4 {
		t.Fatalf("Submit after an item over the budget returned with %d of 4 items emitted", e)
	}
	close(g[4])
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if emitted.Load() != int64(len(costs)) {
		t.Fatalf("%d emitted, want %d", emitted.Load(), len(costs))
	}
}

// TestBudgetStops: a Submit waiting for the budget returns the error that
// stops the pipeline.
func TestBudgetStops(t *testing.T) {
	bad := errors.New("bad item")
	g := newGates(2)
	p := New(context.Background(), Config{Workers: 1, Window: 4, Budget: 5}, Stages[int]{
		Work: func(i int) error { <-g[i]; return bad },
		Emit: func(int) error { return nil },
		Cost: func(int) int64 { return 5 },
	})
	if err := p.Submit(0); err != nil {
		t.Fatal(err)
	}
	returned := make(chan error)
	go func() { returned <- p.Submit(1) }()
	close(g[0])
	if err := <-returned; !errors.Is(err, bad) {
		t.Fatalf("waiting Submit: %v, want %v", err, bad)
	}
	close(g[1])
	if err := p.Close(); !errors.Is(err, bad) {
		t.Fatalf("Close: %v", err)
	}
}

// TestYieldKeepsOrder runs items of random lengths through workers that
// yield (Config.Yield): every item is emitted once, in order.
func TestYieldKeepsOrder(t *testing.T) {
	const n = 500
	var emitted []int
	r := rand.New(rand.NewPCG(5, 6))
	spins := make([]int, n)
	for i := range spins {
		spins[i] = r.IntN(2000)
	}
	var sink atomic.Int64
	p := New(context.Background(), Config{Workers: 4, Window: 32, Budget: 3000, Yield: true}, Stages[int]{
		Work: func(i int) error {
			x := 0
			for k := range spins[i] {
				x += k
			}
			sink.Add(int64(x))
			return nil
		},
		Emit: func(i int) error { emitted = append(emitted, i); return nil },
		Cost: func(i int) int64 { return int64(spins[i]) },
	})
	for i := range n {
		if err := p.Submit(i); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for i, v := range emitted {
		if v != i {
			t.Fatalf("item %d emitted at position %d", v, i)
		}
	}
	if len(emitted) != n {
		t.Fatalf("%d emitted, want %d", len(emitted), n)
	}
}
