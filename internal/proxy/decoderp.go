package proxy

import (
	"os"
	"runtime"
	"sync"
)

var addDecoderPOnce sync.Once

// AddDecoderP raises GOMAXPROCS by one, once per process, where the
// decoding goroutine keeps an OS thread of its own at a lower priority
// (Linux): that thread holds a P whenever it runs, also while the kernel
// has it waiting for the CPU behind the forwarders, and with only
// GOMAXPROCS Ps the forwarding goroutines could be left with none (the
// other taken by a garbage-collection worker: the trace of
// bench/proxybench showed a forwarder runnable for 70 ms so). With one P
// more, the forwarders keep as many as there are CPUs, and the kernel,
// which favours them over the decoder's thread, shares the CPUs. A
// GOMAXPROCS set in the environment is left as it is. Call it before
// [New], from a command that runs a proxy (not from a library).
func AddDecoderP() {
	if !decoderOwnsThread || os.Getenv("GOMAXPROCS") != "" {
		return
	}
	addDecoderPOnce.Do(func() { runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1) })
}
