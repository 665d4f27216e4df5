//go:build race

package cli

// raceEnabled reports a -race build: the determinism test then builds one
// release, not five (the race detector makes each build several times
// slower, and the question it answers does not need more pages).
const raceEnabled = true
