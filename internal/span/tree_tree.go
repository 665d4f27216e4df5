package span

// Builder side of [Tree]: what the decoders need to build trees in one
// pass, and the transitional conversion to the pointer tree.

// ToNode converts t into the pointer tree of [Node]s that front ends not
// yet reading Trees use. Notes are the render-time ones ([Tree.Note]), so
// both trees show the same notes. Rows that are not reachable from the
// root (unlinked by [Tree.CutKids]) are left out. It is transitional and
// goes with [Node].
func (t *Tree) ToNode() *Node {
	if t.Root() == None {
		return nil
	}
	nodes := make([]Node, len(t.Nodes))
	kids := make([]*Node, len(t.Nodes))
	var conv func(id ID, parent *Node) *Node
	conv = func(id ID, parent *Node) *Node {
		r := &t.Nodes[id]
		n := &nodes[id]
		*n = Node{Name: t.Name(id), Type: t.Type(id), About: t.About(id), Note: t.Note(id), Parent: parent,
			Int: r.Int, Prefix: r.Prefix, Off: int(r.Off), Len: int(r.Len), Index: r.Index, Val: r.Val, Enc: r.Enc, Null: r.Null, Cat: r.Cat}
		n.Field = t.Desc(id).Field
		if r.Val == ValFloat {
			n.Int, n.Float = 0, r.Float()
		}
		switch r.Val {
		case ValString, ValBytes, ValUUID, ValRecords, ValText:
			n.Bytes = t.ValueBytes(id)
		}
		if a := t.aux0(id); a != nil {
			n.Flag, n.Err = a.Flag, a.Err
			if a.Detached != nil {
				n.Detached = a.Detached.ToNode()
				if n.Detached != nil && n.Detached.Bytes == nil {
					n.Detached.Bytes = a.Detached.Bytes
				}
			}
		}
		k := 0
		for c := r.First; c != None; c = t.Nodes[c].Next {
			k++
		}
		if k > 0 {
			n.Kids, kids = kids[:0:k], kids[k:]
			for c := r.First; c != None; c = t.Nodes[c].Next {
				n.Kids = append(n.Kids, conv(c, n))
			}
		}
		return n
	}
	return conv(0, nil)
}

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
