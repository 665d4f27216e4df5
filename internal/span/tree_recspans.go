package span

import "slices"

// AddRows appends n rows (n > 0) and returns the first one's ID and the
// rows, for a caller that fills every field of each itself, links
// included (the rows hold whatever a reused table left there). It is for
// a group of known shape (a record and its fields) filled as its bytes
// are read: a caller that finds they are not of that shape takes the
// rows back with t.Nodes = t.Nodes[:first] (nothing links to them until
// [Tree.LinkKids] links the group to its parent).
func (t *Tree) AddRows(n int) (ID, []Row) {
	first := ID(len(t.Nodes))
	if cap(t.Nodes)-len(t.Nodes) < n {
		t.Nodes = slices.Grow(t.Nodes, n)
	}
	t.Nodes = t.Nodes[:int(first)+n]
	return first, t.Nodes[first:]
}

// LinkKids makes first..last, siblings already linked through Next (the
// last one's Next None) and with Parent set, the last children of parent.
func (t *Tree) LinkKids(parent, first, last ID) { t.link(parent, first, last) }

// ReserveRows makes room for n more rows at once, for a caller that
// knows about how many it will add (the records of an inflated batch),
// so that the table is not regrown, and copied, as they come.
func (t *Tree) ReserveRows(n int) {
	if n > cap(t.Nodes)-len(t.Nodes) {
		t.Nodes = slices.Grow(t.Nodes, n)
	}
}
