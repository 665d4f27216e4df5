package selector

import (
	"fmt"
	"slices"
	"testing"

	"github.com/manifester/manifester/internal/filter"
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

// TestUnansweredResponsesCostLittle: a response whose correlation id
// none of its connection's waiting requests has is refused without
// looking at them; an answer looks at the requests it answers and passes
// over. Before, each such response compared all (up to 4096) of them.
func TestUnansweredResponsesCostLittle(t *testing.T) {
	s := New(nil, nil)
	for c := range int32(maxPendingFacts + 10) {
		s.pair(1, &filter.Frame{Kind: "request", CorrelationID: c, Topics: []string{fmt.Sprint("t", c)}})
	}
	w := s.pending[1]
	if len(w.q) != maxPendingFacts || w.ids[5] != 0 || w.ids[10] != 1 {
		t.Fatalf("%d waiting, ids[5] %d, ids[10] %d; want %d, 0, 1", len(w.q), w.ids[5], w.ids[10], maxPendingFacts)
	}
	for c := range int32(10000) {
		fr := filter.Frame{Kind: "response", CorrelationID: -1 - c}
		s.pair(1, &fr)
		if fr.Topics != nil {
			t.Fatal("an unknown id took a request's facts")
		}
	}
	if w.looked != 0 {
		t.Errorf("10000 unknown ids looked at %d waiting requests; want 0", w.looked)
	}
	fr := filter.Frame{Kind: "response", CorrelationID: 110}
	s.pair(1, &fr)
	if w.looked != 101 || !slices.Equal(fr.Topics, []string{"t110"}) || len(w.q) != maxPendingFacts-101 || w.ids[109] != 0 {
		t.Errorf("answer of 110: looked at %d, topics %q, %d left; want 101, [t110], %d", w.looked, fr.Topics, len(w.q), maxPendingFacts-101)
	}
}
