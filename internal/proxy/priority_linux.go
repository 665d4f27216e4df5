//go:build linux

package proxy

import (
	"runtime"

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
