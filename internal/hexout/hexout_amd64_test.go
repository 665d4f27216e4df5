//go:build amd64 && !purego

package hexout

import "golang.org/x/sys/cpu"

// eachLoop calls f once with each block loop this processor has in use,
// named: AVX2 where it has it, and SSE2.
func eachLoop(f func(name string)) {
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	if cpu.X86.HasAVX2 {
		useAVX2 = true
		f("avx2")
	}
	useAVX2 = false
	f("sse2")
}
