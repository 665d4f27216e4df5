package cli

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startPcapProfile starts a CPU profile of `decode --pcap` into the file
// $MANIFESTER_CPUPROFILE names, when it is set (for measuring: see
// docs/bench.md); the returned function stops it and closes the file. A
// file that cannot be written is said on stderr and the decode goes on
// without a profile.
func startPcapProfile(env *Env) func() {
	if env.Getenv == nil {
		return func() {}
	}
	path := env.Getenv("MANIFESTER_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "manifester decode: warning: MANIFESTER_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
