package span

import "testing"

// hangDetached hangs a new detached tree over b, of rows rows, on a new
// child of parent in t, and returns it.
func hangDetached(t *Tree, parent ID, b []byte, rows int) *Tree {
	d := &Tree{}
	d.Reset(b)
	desc := Register(&Desc{Name: "inflated"})
	root := d.Add(None, desc, 0, CatRecord)
	for range rows - 1 {
		d.Add(root, desc, 0, CatRecord)
	}
	id := t.Add(parent, desc, 0, CatRecord)
	t.Extra(id, true).Detached = d
	return d
}

// TestSpareTrees: Reset keeps a tree's detached trees, with their
// buffers, for SpareTree to hand out, and counts them in Retained;
// buffers too large for a spare are dropped, and so are spares past the
// total; a tree with no spares hands out new trees.
func TestSpareTrees(t *testing.T) {
	tr := &Tree{}
	tr.Reset([]byte("frame"))
	root := tr.Add(None, Register(&Desc{Name: "root"}), 0, CatFrame)
	small := hangDetached(tr, root, make([]byte, 1000), 10)
	big := hangDetached(tr, root, make([]byte, maxSpareBytes+1), maxSpareRows+1)
	base := int64(cap(tr.Nodes)) * rowBytes
	if got := tr.Retained(); got != base {
		t.Fatalf("before Reset: Retained %d, want the node table's %d", got, base)
	}
	tr.Reset(nil)
	want := base + small.buffers() + big.buffers()
	if big.Bytes != nil || big.Nodes != nil {
		t.Error("a spare's buffers over the bounds were kept")
	}
	if got := tr.Retained(); got != want || small.buffers() < 1000 {
		t.Fatalf("after Reset: Retained %d, want %d", got, want)
	}
	// The most room for bytes first: big's were let go.
	if got := tr.SpareTree(); got != small || cap(got.Bytes) < 1000 || cap(got.Nodes) < 10 {
		t.Error("the first spare is not the one with room for bytes, with its buffers")
	}
	if got := tr.SpareTree(); got != big {
		t.Error("the second spare is not the other tree")
	}
	if got := tr.Retained(); got != base {
		t.Errorf("with no spares: Retained %d, want %d", got, base)
	}
	fresh := tr.SpareTree()
	if fresh == nil || fresh == small || fresh == big || fresh.Len() != 0 {
		t.Error("with no spares: not a new, empty tree")
	}
	// A spare given back (its batch did not inflate) is the next one.
	tr.ReturnSpare(small)
	if got := tr.SpareTree(); got != small {
		t.Error("a spare given back is not handed out again")
	}

	// The total bound: spares of maxSpareBytes each, at most maxSpareTotal.
	tr.Reset(nil)
	root = tr.Add(None, Register(&Desc{Name: "root"}), 0, CatFrame)
	for range 2 * maxSpareTotal / maxSpareBytes {
		hangDetached(tr, root, make([]byte, maxSpareBytes), 1)
	}
	tr.Reset(nil)
	if got := tr.Retained() - int64(cap(tr.Nodes))*rowBytes; got > maxSpareTotal || got < maxSpareTotal/2 {
		t.Errorf("spares hold %d bytes, want at most %d (and most of it)", got, maxSpareTotal)
	}
	if len(tr.spare) > maxSpareTrees {
		t.Errorf("%d spares, want at most %d", len(tr.spare), maxSpareTrees)
	}
}

// TestSpareTreeMostRoom: spares are handed out by their room for bytes,
// the most first, whatever order their batches came in, so that a large
// batch after small ones finds a large room.
func TestSpareTreeMostRoom(t *testing.T) {
	tr := &Tree{}
	tr.Reset(nil)
	root := tr.Add(None, Register(&Desc{Name: "root"}), 0, CatFrame)
	sizes := []int{10, 300, 50, 4000, 20}
	for _, n := range sizes {
		hangDetached(tr, root, make([]byte, n), 1)
	}
	tr.Reset(nil)
	var got []int
	for range sizes {
		got = append(got, cap(tr.SpareTree().Bytes))
	}
	want := []int{4000, 300, 50, 20, 10}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("spares handed out with room %v, want %v", got, want)
		}
	}
}

// TestDetachedSize sums the bytes and nodes of every tree hung below a
// tree, at every depth, and not of the tree itself (nor of a node that
// points back at it).
func TestDetachedSize(t *testing.T) {
	tr := &Tree{}
	tr.Reset(make([]byte, 50))
	root := tr.Add(None, &Desc{}, 0, CatNone)
	if b, n := tr.DetachedSize(); b != 0 || n != 0 {
		t.Fatalf("no detached tree: %d bytes, %d nodes", b, n)
	}
	a := hangDetached(tr, root, make([]byte, 1000), 10)
	hangDetached(tr, root, make([]byte, 300), 4)
	inner := hangDetached(a, a.Root(), make([]byte, 70), 2)
	tr.Extra(tr.Add(root, &Desc{}, 0, CatNone), true).Detached = tr
	want := [2]int{1000 + 300 + 70, a.Len() + 4 + inner.Len()}
	if b, n := tr.DetachedSize(); [2]int{b, n} != want {
		t.Errorf("DetachedSize = %d bytes, %d nodes; want %v", b, n, want)
	}
}

// TestTrimSpares: once a decode has taken what it needed, the spares left
// beyond maxIdleSpares are let go, the least room first, and those within
// it stay for the next decode.
func TestTrimSpares(t *testing.T) {
	tr := &Tree{}
	tr.Reset(nil)
	root := tr.Add(None, Register(&Desc{Name: "root"}), 0, CatFrame)
	const room = 1 << 20
	n := maxSpareTotal/room - 2 // within maxSpareTotal with their rows
	// The least room first: TrimSpares keeps the most.
	for i := range n {
		hangDetached(tr, root, make([]byte, room-(n-1-i)), 1)
	}
	tr.Reset(nil)
	if len(tr.spare) != n {
		t.Fatalf("%d spares kept, want %d", len(tr.spare), n)
	}
	tr.TrimSpares()
	idle := tr.Retained() - int64(cap(tr.Nodes))*rowBytes
	if idle > maxIdleSpares || idle < maxIdleSpares/2 {
		t.Errorf("after TrimSpares the spares hold %d bytes, want at most %d (and most of it)", idle, maxIdleSpares)
	}
	for i, d := range tr.spare {
		if cap(d.Bytes) != room-i {
			t.Errorf("spare %d kept has room for %d bytes, want the largest rooms (%d)", i, cap(d.Bytes), room-i)
		}
	}
	// Within the bound nothing is let go.
	small := &Tree{}
	small.Reset(nil)
	hangDetached(small, small.Add(None, Register(&Desc{Name: "root"}), 0, CatFrame), make([]byte, 100), 1)
	small.Reset(nil)
	small.TrimSpares()
	if len(small.spare) != 1 {
		t.Errorf("a spare of 100 bytes was let go: %d kept", len(small.spare))
	}
}
