// Package english writes counts of things as English does: "1 frame",
// "0 frames", "2 batches". Messages that count things a user reads
// (capture summaries, stats, the proxy's details, budget notes) write
// their counts with it, so that none says "1 connections".
package english

import (
	"strconv"
	"strings"
)

// Count returns n followed by word, in the plural unless n is 1 (or -1).
func Count[N ~int | ~int16 | ~int32 | ~int64](n N, word string) string {
	s := strconv.FormatInt(int64(n), 10) + " "
	if n == 1 || n == -1 {
		return s + word
	}
	return s + Plural(word)
}

// Plural returns the plural of a regular English noun (the last word of
// word): "es" after s, x, z, ch and sh, "s" after anything else.
func Plural(word string) string {
	for _, end := range []string{"s", "x", "z", "ch", "sh"} {
		if strings.HasSuffix(word, end) {
			return word + "es"
		}
	}
	return word + "s"
}
