//go:build race

package proxy

// raceEnabled reports a -race build, under which sync.Pool drops what it
// is given at random: allocation counts do not hold.
const raceEnabled = true
