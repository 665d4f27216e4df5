//go:build amd64 && !purego

package hexout

// blockSize is the input bytes encodeBlocks takes at a time.
const blockSize = 16

// encodeBlocks writes the hex of src (a multiple of blockSize bytes) into
// out (twice as long), sixteen bytes at a time with SSE2.
func encodeBlocks(out, src []byte) {
	_ = out[2*len(src)-1] // out is long enough
	encodeSSE2(&out[0], &src[0], len(src))
}

// encodeSSE2 writes the hex of the n bytes at src (n a positive multiple
// of 16) to the 2n bytes at dst.
//
//go:noescape
func encodeSSE2(dst, src *byte, n int)
