//go:build !race

package codec_test

const raceOn = false
