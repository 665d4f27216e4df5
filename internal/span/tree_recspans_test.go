package span

import (
	"reflect"
	"testing"
)

// TestAddRows checks that a group filled by hand in rows from AddRows and
// linked with LinkKids is the tree Add makes for the same rows, after a
// block taken back (Nodes cut to its first ID) left stale rows behind.
func TestAddRows(t *testing.T) {
	d := NewDesc("r", "int32", "")
	build := func(block bool) *Tree {
		tr := &Tree{}
		root := tr.Add(None, d, 0, CatNone)
		tr.Add(root, d, 0, CatRecord)
		if !block {
			g := tr.Add(root, d, 4, CatRecord)
			for i := range 3 {
				k := tr.Add(g, d, 4+i, CatRecord)
				tr.N(k).Len = 1
			}
			tr.N(g).Len = 3
			tr.Add(root, d, 7, CatRecord)
			return tr
		}
		first, rows := tr.AddRows(6)
		for i := range rows {
			rows[i].Int, rows[i].Off = 99, 99 // stale content
		}
		tr.Nodes = tr.Nodes[:first]
		g, rows := tr.AddRows(4)
		fill := func(r *Row, parent, next ID, off, n int) {
			r.Int, r.Prefix = 0, 0
			r.Off, r.Len, r.VOff, r.VLen = int32(off), int32(n), 0, 0
			r.Parent, r.First, r.Last, r.Next = parent, None, None, next
			r.Desc, r.Index, r.Aux = d.ID(), -1, 0
			r.Val, r.Enc, r.Cat, r.Null = ValNone, EncNone, CatRecord, false
		}
		fill(&rows[0], root, None, 4, 3)
		rows[0].First, rows[0].Last = g+1, g+3
		fill(&rows[1], g, g+2, 4, 1)
		fill(&rows[2], g, g+3, 5, 1)
		fill(&rows[3], g, None, 6, 1)
		tr.LinkKids(root, g, g)
		tr.Add(root, d, 7, CatRecord)
		return tr
	}
	want, got := build(false), build(true)
	if !reflect.DeepEqual(got.Nodes, want.Nodes) {
		t.Fatalf("rows differ:\n got %+v\nwant %+v", got.Nodes, want.Nodes)
	}
}
