package span

// Builder side of [Tree]: what the decoders need to build trees in one
// pass.

// FixLen makes every group under id span the union of its children
// (after an error left some groups short), walking without recursion.
func (t *Tree) FixLen(id ID) {
	var order []ID
	t.Walk(id, func(x ID, _ int) { order = append(order, x) })
	for i := len(order) - 1; i >= 0; i-- {
		x := order[i]
		n := &t.Nodes[x]
		if n.First == None {
			continue
		}
		end := n.Off + n.Len
		for k := n.First; k != None; k = t.Nodes[k].Next {
			end = max(end, t.Nodes[k].Off+t.Nodes[k].Len)
		}
		n.Len = end - n.Off
	}
}

// End returns the end of the last leaf under id (its offset when it has
// no leaves).
func (t *Tree) End(id ID) int {
	end := int(t.Nodes[id].Off)
	t.Walk(id, func(x ID, _ int) {
		if n := &t.Nodes[x]; n.First == None {
			end = max(end, int(n.Off+n.Len))
		}
	})
	return end
}

// SetDesc makes node id name Desc d (a registered one).
func (t *Tree) SetDesc(id ID, d *Desc) { t.Nodes[id].Desc = d.id }
