package span

import "testing"

// BenchmarkAdd builds a tree shaped like a decoded message (structs of a
// few leaves under arrays) into a reused table.
func BenchmarkAdd(b *testing.B) {
	d := NewDesc("f", "int32", "")
	t := &Tree{}
	b.ReportAllocs()
	for b.Loop() {
		t.Reset(nil)
		root := t.Add(None, d, 0, CatNone)
		for i := 0; i < 1000; i++ {
			e := t.Add(root, d, i, CatResponseBody)
			for j := 0; j < 8; j++ {
				k := t.Add(e, d, i+j, CatResponseBody)
				n := &t.Nodes[k]
				n.Val, n.Int, n.Len = ValInt, int64(j), 4
			}
		}
	}
}

// TestAddKids checks that a run added with AddKids is the tree the same
// rows added one by one with Add make, after rows before and after it.
func TestAddKids(t *testing.T) {
	d := NewDesc("k", "int32", "")
	build := func(run bool) *Tree {
		tr := &Tree{}
		root := tr.Add(None, d, 0, CatNone)
		a := tr.Add(root, d, 0, CatFrame)
		tr.Add(a, d, 0, CatFrame)
		if run {
			first := tr.AddKids(a, 3, CatHeader)
			for i := 0; i < 3; i++ {
				n := tr.N(first + ID(i))
				n.Desc, n.Off, n.Len = d.ID(), int32(4*i), 4
			}
			first = tr.AddKids(root, 2, CatHeader) // a parent with no children yet
			for i := 0; i < 2; i++ {
				tr.N(first + ID(i)).Desc = d.ID()
			}
		} else {
			for i := 0; i < 3; i++ {
				tr.N(tr.Add(a, d, 4*i, CatHeader)).Len = 4
			}
			b := tr.Add(root, d, 0, CatHeader)
			_ = b
			tr.Add(root, d, 0, CatHeader)
		}
		tr.Add(a, d, 12, CatFrame)
		return tr
	}
	// One by one, the second run's rows hang under root after a: build
	// the reference the same way.
	want, got := build(false), build(true)
	if len(want.Nodes) != len(got.Nodes) {
		t.Fatalf("%d rows, want %d", len(got.Nodes), len(want.Nodes))
	}
	for i := range want.Nodes {
		if want.Nodes[i] != got.Nodes[i] {
			t.Errorf("row %d: %+v, want %+v", i, got.Nodes[i], want.Nodes[i])
		}
	}
	var empty Tree
	if id := empty.AddKids(None, 4, CatNone); id != 0 || empty.Len() != 4 || empty.N(3).Next != None || empty.N(0).Next != 1 {
		t.Errorf("AddKids on an empty tree: first %d, %d rows", id, empty.Len())
	}
}
