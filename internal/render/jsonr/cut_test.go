package jsonr

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/span"
)

// TestCutFramesShowNoUnreadValue cuts corpus frames at every offset of
// their first 300 bytes (the size prefix fixed to the cut): no node that
// covers no bytes (a read that failed) carries a value, and no array
// count that failed is described as "0 elements follow" (the JSON line
// and the text write a value only for a node that has one).
func TestCutFramesShowNoUnreadValue(t *testing.T) {
	c, fs, _ := corpusFrames(t)
	var walk func(tr *span.Tree, id span.ID)
	walk = func(tr *span.Tree, id span.ID) {
		r := tr.N(id)
		if a := tr.About(id); r.Len == 0 && (r.Val != span.ValNone || strings.HasSuffix(a, "elements follow") || strings.HasSuffix(a, "element follows")) {
			t.Errorf("%s: no bytes, but value kind %v, about %q", tr.Path(id), r.Val, a)
		}
		for _, k := range tr.Kids(id) {
			walk(tr, k)
		}
	}
	cuts := 0
	for _, f := range fs[:min(len(fs), 80)] {
		for cut := 4; cut < len(f.b) && cut < 300; cut++ {
			b := append([]byte(nil), f.b[:cut]...)
			binary.BigEndian.PutUint32(b, uint32(cut-4))
			r := report.Decode(c, b, f.o)
			if r.OK() {
				continue
			}
			cuts++
			if tr := r.SpanTree(); tr != nil && tr.Root() != span.None {
				walk(tr, tr.Root())
			}
		}
	}
	if cuts < 1000 {
		t.Fatalf("only %d cut frames failed to decode", cuts)
	}
}
