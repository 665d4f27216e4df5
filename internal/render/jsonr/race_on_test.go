//go:build race

package jsonr

// raceEnabled reports a -race build, which allocates on the heap what a
// normal build keeps on the stack: allocation counts do not hold.
const raceEnabled = true
