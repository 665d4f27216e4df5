package records

import "testing"

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
