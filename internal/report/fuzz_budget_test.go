package report

import (
	"runtime"
	"testing"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/schema"
)

// fuzzLimits are small, so that fuzzed frames reach every limit.
var fuzzLimits = budget.Limits{Inflate: 256 << 10, Nodes: 4096, Output: 256 << 10}

// budgetAllocBound is the most one fuzzed decode and rendering may
// allocate: a bounded cost per input byte (allocBound), per inflated
// byte, per node and per output byte, within the fuzz limits.
func budgetAllocBound(n int) uint64 {
	return allocBound(n) + 8*uint64(fuzzLimits.Inflate) + 4096*uint64(fuzzLimits.Nodes) + 8*uint64(fuzzLimits.Output) + 32<<20
}

// FuzzDecodeBudget decodes request frames with decompression on, under a
// small budget, and checks the property of issue 9: allocation is bounded
// by the budget, inflation and nodes stay within it. Seeds are the hostile
// frames, small. (The renderings' output bounds are checked by
// render/text's FuzzFrameBudget and package jsonr.)
func FuzzDecodeBudget(f *testing.F) {
	c := inflating(f)
	for _, cd := range hostile.Codecs {
		f.Add(hostile.Produce(hostile.Batch(cd, hostile.DenseRecords(300), 300), hostile.Batch(cd, make([]byte, 100<<10), 1)))
		f.Add(hostile.Produce(hostile.Batch(cd, hostile.DenseRecords(40), 40), hostile.Batch(cd, hostile.DenseRecords(40), 40), hostile.Batch(cd, hostile.DenseRecords(40), 40)))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, lean := range []bool{false, true} {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			fr := Decode(c, b, Options{Kind: schema.TypeRequest, Limits: fuzzLimits, Lean: lean})
			runtime.ReadMemStats(&after)
			bud := fr.bud
			if d := after.TotalAlloc - before.TotalAlloc; d > budgetAllocBound(len(b)) {
				t.Fatalf("%d bytes in: allocated %d, bound %d", len(b), d, budgetAllocBound(len(b)))
			}
			if bud.Inflated() > bud.MaxInflate {
				t.Fatalf("inflated %d, budget %d", bud.Inflated(), bud.MaxInflate)
			}
			// A record may hold up to 255 headers between two checks.
			if bud.InflatedNodes > bud.MaxNodes+1024 {
				t.Fatalf("%d nodes of inflated records, budget %d", bud.InflatedNodes, bud.MaxNodes)
			}
		}
	})
}
