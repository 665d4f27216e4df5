package proxy

import (
	"os"
	"runtime"
	"sync"
)

// DefaultDecodeWorkers is the default of [Config.DecodeWorkers]: a
// quarter of the CPUs, at least one. Decoding is best effort at a lower
// priority: the forwarders, and the clients and brokers often on the same
// machine, come first, and the decoding side also runs a feeder and an
// emitter (which renders the log through Config.Sink, one event at a
// time); past a few workers the emitter, not decoding, sets the pace.
func DefaultDecodeWorkers() int { return defaultDecodeWorkers(runtime.NumCPU()) }

func defaultDecodeWorkers(cpus int) int { return max(1, cpus/4) }

// decodeThreads is the number of goroutines of the decoding side with
// workers decoders: the feeder, the workers and the emitter.
func decodeThreads(workers int) int { return workers + 2 }

var addDecoderPOnce sync.Once

// AddDecoderP raises GOMAXPROCS, once per process, by the number of
// goroutines of the decoding side (the workers, plus the feeder and the
// emitter), where each of
// them keeps an OS thread of its own at a lower priority (Linux): such a
// thread holds a P whenever it runs, also while the kernel has it waiting
// for the CPU behind the forwarders, and with only GOMAXPROCS Ps the
// forwarding goroutines could be left with none (the trace of
// bench/proxybench showed a forwarder runnable for 70 ms so, with one
// decoding thread and a garbage-collection worker on the two Ps). With as
// many Ps more, the forwarders keep as many as there are CPUs, and the
// kernel, which favours them over the decoding threads, shares the CPUs.
// A GOMAXPROCS set in the environment is left as it is. workers is the
// proxy's Config.DecodeWorkers (zero or less: the default). Call it before
// [New], from a command that runs a proxy (not from a library).
func AddDecoderP(workers int) {
	if !decoderOwnsThread || os.Getenv("GOMAXPROCS") != "" {
		return
	}
	if workers <= 0 {
		workers = DefaultDecodeWorkers()
	}
	addDecoderPOnce.Do(func() {
		runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + decodeThreads(workers))
	})
}
