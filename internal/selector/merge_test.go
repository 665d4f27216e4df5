package selector

import (
	"fmt"
	"slices"
	"testing"
)

// TestMergeTopics: a response's topics follow its request's, each once,
// in the order they first appear.
func TestMergeTopics(t *testing.T) {
	for _, c := range []struct{ a, b, want []string }{
		{nil, []string{"x", "y"}, []string{"x", "y"}},
		{[]string{"a", "b"}, nil, []string{"a", "b"}},
		{[]string{"a", "b"}, []string{"b", "c", "a", "d"}, []string{"a", "b", "c", "d"}},
	} {
		if got := mergeTopics(c.a, c.b); !slices.Equal(got, c.want) {
			t.Errorf("mergeTopics(%q, %q) = %q; want %q", c.a, c.b, got, c.want)
		}
	}
}

// TestMergeManyTopics merges a request's and a response's topics when
// both name tens of thousands (frames of a few hundred KB each), which a
// comparison of every pair made 2.5 billion string comparisons.
func TestMergeManyTopics(t *testing.T) {
	const n = 50000
	var a, b []string
	for i := range n {
		a = append(a, fmt.Sprintf("a%d", i))
		b = append(b, fmt.Sprintf("b%d", i))
	}
	b = append(b, a[n-1])
	got := mergeTopics(a, b)
	if len(got) != 2*n || got[0] != "a0" || got[n] != "b0" || got[2*n-1] != b[n-1] {
		t.Errorf("merged %d topics, %q %q %q", len(got), got[0], got[n], got[len(got)-1])
	}
}
