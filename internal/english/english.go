// Package english writes counts of things as English does: "1 frame",
// "0 frames", "2 batches". Messages that count things a user reads
// (capture summaries, stats, the proxy's details, budget notes) write
// their counts with it, so that none says "1 connections".
package english

import (
	"strconv"
	"strings"
)

// Count returns n followed by word, in the plural unless n is 1.
func Count[N ~int | ~int16 | ~int32 | ~int64](n N, word string) string {
	s := strconv.FormatInt(int64(n), 10) + " "
	if n == 1 {
		return s + word
	}
	return s + plural(word)
}

// plural returns the plural of a regular English noun (the last word of
// word): "es" after s, x, z, ch and sh, "s" after anything else.
func plural(word string) string {
	for _, end := range []string{"s", "x", "z", "ch", "sh"} {
		if strings.HasSuffix(word, end) {
			return word + "es"
		}
	}
	return word + "s"
}

// Counts is Count of one word, made once for small counts: a note written
// for every batch a decoder reads costs no allocation.
type Counts struct {
	word  string
	small []string // Count(i, word) for i below len(small)
}

// NewCounts returns the Counts of word, made for 0 to n-1.
func NewCounts(word string, n int) *Counts {
	c := &Counts{word: word, small: make([]string, n)}
	for i := range c.small {
		c.small[i] = Count(i, word)
	}
	return c
}

// Of returns Count(n, c's word).
func (c *Counts) Of(n int64) string {
	if n >= 0 && n < int64(len(c.small)) {
		return c.small[n]
	}
	return Count(n, c.word)
}
