//go:build race

package codec_test

// raceOn is set under the race detector, which makes sync.Pool drop
// items (so allocation counts vary).
const raceOn = true
