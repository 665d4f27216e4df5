//go:build !race

package jsonr

const raceEnabled = false
