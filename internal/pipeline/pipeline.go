// Package pipeline runs work on several goroutines and hands the results
// on in the order the work was submitted, with a bounded number of items in
// flight.
//
// It is the shape of `decode --pcap` and `stats --pcap`: one goroutine reads
// frames (Submit), Workers goroutines decode and render them (Stages.Work),
// and one goroutine writes them in capture order (Stages.Emit). Window caps
// the items submitted and not yet emitted, so the memory held is the
// window's items whatever the input's size; Submit waits while it is full.
// Budget and Cost cap what the items in flight weigh as well (their bytes,
// say), so that a window can be wide for small items without holding many
// large ones: a large item that takes long to work on then does not stop
// the other workers while the small items after it are worked on and wait
// for it to be emitted.
//
//	p := pipeline.New(ctx, pipeline.Config{}, pipeline.Stages[*job]{Work: decode, Emit: write})
//	for ... { if err := p.Submit(j); err != nil { break } }
//	err := p.Close()
//
// The first error of Work or Emit, in submission order, stops the
// pipeline: the items before it are emitted, none after it; Submit and
// Close return it. Cancelling ctx stops it the same way with ctx's cause.
package pipeline

import (
	"context"
	"errors"
	"runtime"
	"sync"
)

// Config sizes a pipeline.
type Config struct {
	// Workers is the number of goroutines that run Stages.Work (zero or
	// less: runtime.GOMAXPROCS(0)).
	Workers int
	// Window is the most items in flight, submitted and not yet emitted
	// (zero or less: 4 per worker; at least Workers).
	Window int
	// Budget, when more than zero, caps the sum of Stages.Cost over the
	// items in flight: Submit waits while the new item's cost would take
	// the sum past Budget, unless nothing is in flight (an item that costs
	// more than Budget is taken on its own). Window still caps their
	// number.
	Budget int64
	// Yield makes a worker yield after each item. The worker's "done"
	// readies the emitter on the worker's own thread, where it waits
	// until the worker blocks or is preempted (up to 10 ms later) while
	// the window fills and the submitter waits; with Yield the emitter
	// runs at once. Traces of decode --pcap showed the emitter runnable
	// but not running for half of the run without it. A worker locked
	// to its thread (see Start) pays a thread hand-off for each yield.
	Yield bool
	// Start, when set, runs first on each goroutine the pipeline starts:
	// every worker and the emitter, before the first Work or Emit on it
	// (e.g. to lock the goroutine to a thread at a lower priority). It runs
	// once per goroutine, concurrently on several.
	Start func()
}

// Stages are the functions a pipeline runs on each item.
type Stages[T any] struct {
	// Work runs on one of the worker goroutines, on any number of items
	// at once. Its error stops the pipeline once the items before are
	// emitted.
	Work func(T) error
	// Emit runs on the one emitting goroutine, in submission order, after
	// the item's Work. Its error stops the pipeline.
	Emit func(T) error
	// Idle, when set, runs on the emitting goroutine whenever it has
	// emitted every item whose Work is done (e.g. to flush a stream). Its
	// error stops the pipeline.
	Idle func() error
	// Cost, when set, is an item's weight against Config.Budget (nil:
	// every item costs 1). It runs in Submit, on the submitting goroutine.
	Cost func(T) int64
}

// ErrClosed is Submit's error after Close.
var ErrClosed = errors.New("pipeline: submit after close")

// Pipeline is a running pipeline of items of type T. Submit and Close are
// called from one goroutine.
type Pipeline[T any] struct {
	ctx    context.Context
	st     Stages[T]
	start  func() // Config.Start
	yield  bool   // Config.Yield
	budget int64  // Config.Budget (0: none)
	// spent is the cost of the held items in flight (with budget),
	// guarded by mu; the emitter signals freed (capacity 1) when it
	// lowers them.
	mu     sync.Mutex
	spent  int64
	held   int
	freed  chan struct{}
	slots  []slot[T]
	free   chan struct{} // one token per item in flight
	work   chan int      // slots to work on
	order  chan int      // slots in submission order, for the emitter
	stop   chan struct{} // closed when the emitter stops on an error
	stopEr error         // the error, set before stop is closed
	wg     sync.WaitGroup
	result chan error
	seq    int
	closed bool
	err    error // Close's result once closed
}

// slot holds one item in flight. The slots form a ring: item n uses slot
// n % Window, free again once item n is emitted.
type slot[T any] struct {
	v    T
	err  error
	cost int64         // against the budget
	done chan struct{} // capacity 1: the worker's "Work is done"
}

// errSkipped marks an item not worked on because the pipeline had stopped.
var errSkipped = errors.New("pipeline: skipped")

// New starts a pipeline's workers and emitter. Every pipeline must be
// closed (Close) to stop them.
func New[T any](ctx context.Context, cfg Config, st Stages[T]) *Pipeline[T] {
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	window := cfg.Window
	if window <= 0 {
		window = 4 * workers
	}
	window = max(window, workers)
	p := &Pipeline[T]{ctx: ctx, st: st, start: cfg.Start, yield: cfg.Yield, slots: make([]slot[T], window),
		free: make(chan struct{}, window), work: make(chan int, window), order: make(chan int, window),
		stop: make(chan struct{}), result: make(chan error, 1)}
	if cfg.Budget > 0 {
		p.budget, p.freed = cfg.Budget, make(chan struct{}, 1)
	}
	for i := range p.slots {
		p.slots[i].done = make(chan struct{}, 1)
	}
	p.wg.Add(workers)
	for range workers {
		go p.worker()
	}
	go p.emitter()
	return p
}

// Submit hands an item over, waiting while the window is full. It returns
// the error that stopped the pipeline (the first error of Work or Emit, or
// ctx's cause), and then takes no more items.
func (p *Pipeline[T]) Submit(v T) error {
	if p.closed {
		return ErrClosed
	}
	if err := p.stopped(); err != nil {
		return err
	}
	select {
	case p.free <- struct{}{}:
	case <-p.stop:
		return p.stopEr
	case <-p.ctx.Done():
		return context.Cause(p.ctx)
	}
	var cost int64
	if p.budget > 0 {
		cost = 1 // Stages.Cost unset
		if p.st.Cost != nil {
			cost = max(p.st.Cost(v), 0)
		}
		if err := p.spend(cost); err != nil {
			return err
		}
	}
	i := p.seq % len(p.slots)
	p.seq++
	p.slots[i].v, p.slots[i].cost = v, cost
	// Neither send waits: there are as many places as tokens.
	p.work <- i
	p.order <- i
	return nil
}

// spend waits until cost fits in the budget beside the items in flight (or
// nothing is in flight) and adds it to what they cost.
func (p *Pipeline[T]) spend(cost int64) error {
	for {
		p.mu.Lock()
		if p.held == 0 || p.spent+cost <= p.budget {
			p.spent += cost
			p.held++
			p.mu.Unlock()
			return nil
		}
		p.mu.Unlock()
		select {
		case <-p.freed:
		case <-p.stop:
			return p.stopEr
		case <-p.ctx.Done():
			return context.Cause(p.ctx)
		}
	}
}

// refund gives an emitted item's cost back to the budget.
func (p *Pipeline[T]) refund(cost int64) {
	p.mu.Lock()
	p.spent -= cost
	p.held--
	p.mu.Unlock()
	select {
	case p.freed <- struct{}{}:
	default: // a signal is pending already: Submit looks again
	}
}

// stopped returns the error that stopped the pipeline, if it has.
func (p *Pipeline[T]) stopped() error {
	select {
	case <-p.stop:
		return p.stopEr
	default:
	}
	if p.ctx.Err() != nil {
		return context.Cause(p.ctx)
	}
	return nil
}

// Close waits for every item submitted to be worked on and emitted (or
// skipped after an error) and returns the error that stopped the
// pipeline, if any: the first error of Work or Emit in submission order,
// or ctx's cause when it was cancelled before every item was emitted.
func (p *Pipeline[T]) Close() error {
	if p.closed {
		return p.err
	}
	p.closed = true
	close(p.work)
	close(p.order)
	p.wg.Wait()
	p.err = <-p.result
	return p.err
}

func (p *Pipeline[T]) worker() {
	defer p.wg.Done()
	if p.start != nil {
		p.start()
	}
	for i := range p.work {
		s := &p.slots[i]
		if p.stopped() != nil {
			s.err = errSkipped
		} else {
			s.err = p.st.Work(s.v)
		}
		s.done <- struct{}{}
		if p.yield {
			runtime.Gosched() // see Config.Yield
		}
	}
}

func (p *Pipeline[T]) emitter() {
	if p.start != nil {
		p.start()
	}
	var err error
	var zero T
	for i := range p.order {
		s := &p.slots[i]
		<-s.done
		if err == nil {
			switch {
			case s.err == errSkipped || p.ctx.Err() != nil:
				err = context.Cause(p.ctx)
				if err == nil { // skipped because of an error already said
					err = p.stopEr
				}
			case s.err != nil:
				err = s.err
			default:
				err = p.st.Emit(s.v)
			}
			if err == nil && p.st.Idle != nil && p.caughtUp(i) {
				err = p.st.Idle()
			}
			if err != nil {
				p.stopEr = err
				close(p.stop)
			}
		}
		cost := s.cost
		s.v, s.err, s.cost = zero, nil, 0 // drop the reference before the slot is reused
		if p.budget > 0 {
			p.refund(cost)
		}
		<-p.free
	}
	p.result <- err
}

// caughtUp reports whether the item after slot i is not done yet (or not
// submitted yet).
func (p *Pipeline[T]) caughtUp(i int) bool {
	if len(p.order) == 0 {
		return true
	}
	return len(p.slots[(i+1)%len(p.slots)].done) == 0
}
