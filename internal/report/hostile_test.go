package report

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/records"
)

// allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc),
// an upper bound of the heap it needs at its peak.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func inflating(t testing.TB) *codec.Codec {
	c := load(t)
	c.Decompress = compress.Decompressor()
	c.DecompressLimit = compress.LimitDecompressor()
	return c
}

func codecName(c int) string { return records.CompressionName(c) }

func TestHostileExplore(t *testing.T) {
	c := inflating(t)
	for _, sh := range hostile.Shapes {
		for _, cd := range hostile.Codecs {
			b := sh.Build(cd, 100<<10)
			var text, js bytes.Buffer
			var f *Frame
			n := allocated(func() {
				f = Decode(c, b, Options{})
				Text(&text, f, true)
			})
			m := allocated(func() {
				g := Decode(c, b, Options{Lean: true})
				JSONLine(&js, g)
			})
			fmt.Printf("%-22s %-6s in %7d  text %9d alloc %5d MiB  json %9d alloc %5d MiB  inflated %d  err=%q budget=%q\n", sh.Name, codecName(cd), len(b), text.Len(), n>>20, js.Len(), m>>20, f.bud.Inflated(), f.Error, f.Budget)
		}
	}
	_ = strings.Repeat
	_ = budget.Size
}
