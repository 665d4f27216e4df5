package cli

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfile starts the profiles a measurement asks for through the
// environment (see docs/bench.md): a CPU profile into the file
// $MANIFESTER_CPUPROFILE names, and an allocation profile (every
// allocation sampled at 4 KiB, written when the command ends) into the
// file $MANIFESTER_MEMPROFILE names. The returned function stops them and
// closes the files. A file that cannot be written is said on stderr and
// the command goes on without that profile.
func startProfile(env *Env, cmd string) func() {
	if env.Getenv == nil {
		return func() {}
	}
	warn := func(name string, err error) {
		fmt.Fprintf(env.Stderr, "manifester %s: warning: %s: %v\n", cmd, name, err)
	}
	var stops []func()
	if path := env.Getenv("MANIFESTER_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			if err = pprof.StartCPUProfile(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			warn("MANIFESTER_CPUPROFILE", err)
		} else {
			stops = append(stops, func() {
				pprof.StopCPUProfile()
				f.Close()
			})
		}
	}
	if path := env.Getenv("MANIFESTER_MEMPROFILE"); path != "" {
		rate := runtime.MemProfileRate
		runtime.MemProfileRate = 4096
		stops = append(stops, func() {
			defer func() { runtime.MemProfileRate = rate }()
			f, err := os.Create(path)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				warn("MANIFESTER_MEMPROFILE", err)
			}
		})
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}
