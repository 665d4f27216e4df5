package text

import (
	"strings"
	"testing"
	"time"
)

// TestWrapLongWordLinear: a word far wider than the line (an about of
// 2 MB without a space) is broken in time linear in its length. Each
// piece broken off measured the whole rest again: `manifester show` of
// such a spec on a 60-column terminal took 54 s. The bound is hundreds
// of times the linear time, so load cannot fail it.
func TestWrapLongWordLinear(t *testing.T) {
	word := strings.Repeat("x", 2<<20) + "é"
	start := time.Now()
	lines := wrapCells(word, 60, "", "  ")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("wrapping a word of %d bytes took %s", len(word), d)
	}
	if len(lines) != (len(word)-1)/58+1 || lines[0] != strings.Repeat("x", 60) || lines[1] != "  "+strings.Repeat("x", 58) {
		t.Errorf("%d lines, the first %q...", len(lines), lines[0][:10])
	}
	if got := strings.Join(lines, ""); strings.ReplaceAll(got, " ", "") != word {
		t.Error("the pieces do not make the word")
	}
}
