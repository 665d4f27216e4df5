//go:build amd64 && !purego

package hexout

import "golang.org/x/sys/cpu"

// blockSize is the input bytes encodeBlocks takes at a time.
const blockSize = 16

// useAVX2 chooses the 32-byte loop: on processors with AVX2 (and an
// operating system that saves its registers) it writes the same digits
// with about half the instructions a byte.
var useAVX2 = cpu.X86.HasAVX2

// encodeBlocks writes the hex of src (a multiple of blockSize bytes) into
// out (twice as long), thirty-two bytes at a time with AVX2 where the
// processor has it, else sixteen at a time with SSE2.
func encodeBlocks(out, src []byte) {
	_ = out[2*len(src)-1] // out is long enough
	if useAVX2 {
		encodeAVX2(&out[0], &src[0], len(src))
		return
	}
	encodeSSE2(&out[0], &src[0], len(src))
}

// encodeSSE2 writes the hex of the n bytes at src (n a positive multiple
// of 16) to the 2n bytes at dst.
//
//go:noescape
func encodeSSE2(dst, src *byte, n int)

// encodeAVX2 is encodeSSE2 with AVX2, for the same n.
//
//go:noescape
func encodeAVX2(dst, src *byte, n int)
