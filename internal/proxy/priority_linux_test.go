//go:build linux

package proxy

import (
	"os"
	"runtime"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLowerPriority: the goroutine that calls lowerPriority (the decoding
// goroutine does, first thing) runs on a thread decodeNice levels below
// the one it started on, and keeps it.
func TestLowerPriority(t *testing.T) {
	type result struct {
		before, after, later int
		same                 bool
		err                  error
	}
	done := make(chan result)
	go func() {
		var r result
		// Getpriority returns 20 - nice.
		cur, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
		if err != nil {
			r.err = err
			done <- r
			return
		}
		r.before = 20 - cur
		lowerPriority()
		tid := unix.Gettid()
		cur, r.err = unix.Getpriority(unix.PRIO_PROCESS, tid)
		r.after = 20 - cur
		// Still the same thread after blocking.
		ch := make(chan struct{})
		go func() { close(ch) }()
		<-ch
		r.same = unix.Gettid() == tid
		cur, _ = unix.Getpriority(unix.PRIO_PROCESS, tid)
		r.later = 20 - cur
		done <- r
	}()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := min(19, r.before+decodeNice)
	if r.after != want || r.later != want || !r.same {
		t.Errorf("nice %d before, %d after lowerPriority, %d later (same thread: %v); want %d", r.before, r.after, r.later, r.same, want)
	}
}

// TestAddDecoderP: GOMAXPROCS goes up by the decoding side's goroutines
// (the default workers, the feeder and the emitter: 3 on a machine of up
// to 7 CPUs), once however often it is called, unless the environment
// sets it.
func TestAddDecoderP(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	addDecoderPOnce = sync.Once{} // as in a new process (go test -count N runs it again)
	AddDecoderP(0)
	AddDecoderP(5)
	want := before + DefaultDecodeWorkers() + 2
	if os.Getenv("GOMAXPROCS") != "" {
		want = before
	}
	if got := runtime.GOMAXPROCS(0); got != want {
		t.Errorf("GOMAXPROCS %d after AddDecoderP twice, was %d; want %d", got, before, want)
	}
}
