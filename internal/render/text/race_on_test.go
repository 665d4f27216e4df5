//go:build race

package text_test

// raceEnabled reports a -race build, under which sync.Pool drops what it
// is given at random: the bytes allocated per frame do not hold.
const raceEnabled = true
