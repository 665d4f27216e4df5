//go:build !race

package text_test

const raceEnabled = false
