package hostile

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// Usage is what a piece of work cost in memory.
type Usage struct {
	// Peak is the largest heap (bytes in live and not yet collected
	// objects) seen while the work ran, above what it was before.
	Peak uint64
	// Total is every byte the work allocated (MemStats.TotalAlloc), an
	// upper bound of Peak that does not depend on sampling.
	Total uint64
}

// Measure runs f and reports its memory use. The heap is sampled from
// runtime/metrics every 200µs; a sample missed on a loaded machine only
// makes Peak smaller, never larger, so bounds asserted on it do not
// depend on the machine's speed. Run it from tests that are not parallel.
func Measure(f func()) Usage {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	base := read()
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				v := read()
				mu.Lock()
				peak = max(peak, v)
				mu.Unlock()
			}
		}
	}()
	f()
	end := read()
	close(done)
	wg.Wait()
	runtime.ReadMemStats(&after)
	peak = max(peak, end)
	u := Usage{Total: after.TotalAlloc - before.TotalAlloc}
	if peak > base {
		u.Peak = peak - base
	}
	return u
}
