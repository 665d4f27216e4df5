//go:build linux

package proxy

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// decodeNice is how much lower than the forwarding threads' the decoding
// goroutine's thread runs (nice levels): when the CPU is short, the
// kernel runs forwarding first, and decoding catches up with what is left
// (the queue bounds how far it may fall behind; beyond, frames are
// forwarded undecoded and counted).
const decodeNice = 5

// decoderOwnsThread: lowerPriority locks the decoding goroutine to its
// thread (see AddDecoderP).
const decoderOwnsThread = true

// lowerPriority gives the calling goroutine a thread of its own at a
// lower scheduling priority, for as long as it runs: the thread is never
// handed back to other goroutines (it ends with the goroutine).
func lowerPriority() {
	runtime.LockOSThread()
	tid := unix.Gettid()
	if cur, err := unix.Getpriority(unix.PRIO_PROCESS, tid); err == nil {
		// Getpriority returns 20 - nice.
		_ = unix.Setpriority(unix.PRIO_PROCESS, tid, min(19, 20-cur+decodeNice))
	}
}

// IdlePriority puts the calling process at the lowest CPU priority there
// is, for a decoding process ([DecodeStream]) beside the proxy: every
// thread of it at SCHED_IDLE, which the kernel runs only when no other
// thread wants the CPU, and preempts at once for any that does. Threads
// made later inherit it from the thread that makes them. Inside the
// proxy itself this would be unsafe (a stop of the world would wait for
// a thread the kernel does not run, and every forwarder with it); a
// process of its own waits only for itself.
func IdlePriority() error {
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}
	seen := map[int]bool{}
	for {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("idle priority: listing the threads: %w", err)
		}
		fresh := false
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || seen[tid] {
				continue
			}
			seen[tid], fresh = true, true
			if err := unix.SchedSetAttr(tid, &attr, 0); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("idle priority: thread %d: %w", tid, err)
			}
		}
		if !fresh { // no thread was made while the list was read
			return nil
		}
	}
}
