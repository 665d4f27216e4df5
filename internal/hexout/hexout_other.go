//go:build !amd64 || purego

package hexout

// blockSize is the input bytes encodeBlocks takes at a time.
const blockSize = 8

// encodeBlocks writes the hex of src (a multiple of blockSize bytes) into
// out (twice as long).
func encodeBlocks(out, src []byte) { encodePairs(out, src) }
