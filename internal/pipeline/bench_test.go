package pipeline

import (
	"context"
	"testing"
)

// BenchmarkOverhead is the pipeline's own cost per item: Work and Emit do
// nothing, so what is measured is handing an item to a worker and back in
// order.
func BenchmarkOverhead(b *testing.B) {
	type item struct{ n int }
	var sum int
	p := New(context.Background(), Config{}, Stages[*item]{
		Work: func(*item) error { return nil },
		Emit: func(it *item) error { sum += it.n; return nil },
	})
	items := make([]item, 64)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		it := &items[i%len(items)]
		it.n = i
		if err := p.Submit(it); err != nil {
			b.Fatal(err)
		}
		i++
	}
	if err := p.Close(); err != nil {
		b.Fatal(err)
	}
}
