package records

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestIsText(t *testing.T) {
	for in, want := range map[string]bool{
		"":                       true,
		"plain":                  true,
		"tab\tnl\ncr\r":          true,
		"Zürich-日本":              true,
		"emoji 👍\u200d":          true,
		"nul\x00":                false,
		"esc\x1b[31m":            false,
		"del\x7f":                false,
		"c1 \u0085":              false,
		"\xff\xfe":               false,
		"cut \xe6\x97":           false,
		"overlong \xc0\xaf":      false,
		"surrogate \xed\xa0\x80": false,
	} {
		if got := IsText([]byte(in)); got != want {
			t.Errorf("IsText(%q) = %v, want %v", in, got, want)
		}
	}
}

// isTextRef is IsText byte by byte, the definition the word-at-a-time
// loop must agree with.
func isTextRef(b []byte) bool {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n <= 1, r < 0x20 && r != '\t' && r != '\n' && r != '\r', r >= 0x7f && r <= 0x9f:
			return false
		}
		b = b[n:]
	}
	return true
}

// TestIsTextWords puts every byte value at every position of printable
// ASCII runs of 1 to 24 bytes (across the eight-byte words).
func TestIsTextWords(t *testing.T) {
	for size := 1; size <= 24; size++ {
		for pos := 0; pos < size; pos++ {
			for c := 0; c < 256; c++ {
				b := []byte(strings.Repeat("a~ Z", 6)[:size])
				b[pos] = byte(c)
				if got, want := IsText(b), isTextRef(b); got != want {
					t.Fatalf("IsText(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}

// TestIsTextSequences compares IsText with the reference on every byte
// pair, every triple that starts with a byte of 0xc0 or more (the UTF-8
// leads and the bytes that cannot start a sequence), after ASCII and
// alone, and on random four-byte strings.
func TestIsTextSequences(t *testing.T) {
	check := func(b []byte) {
		if got, want := IsText(b), isTextRef(b); got != want {
			t.Fatalf("IsText(%q) = %v, want %v", b, got, want)
		}
	}
	for x := 0; x < 1<<16; x++ {
		check([]byte{byte(x >> 8), byte(x)})
		check([]byte{'a', byte(x >> 8), byte(x), 'z'})
	}
	for x := 0xc0 << 16; x < 1<<24; x++ {
		check([]byte{byte(x >> 16), byte(x >> 8), byte(x)})
	}
	rng := uint64(1)
	for range 1 << 20 {
		rng = rng*6364136223846793005 + 1442695040888963407
		check([]byte{byte(rng >> 24), byte(rng >> 32), byte(rng >> 40), byte(rng >> 48)})
	}
}
