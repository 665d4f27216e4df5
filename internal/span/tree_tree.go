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

// ClearUnread drops the value of every node under id (id included) that
// covers no bytes. Every value the wire carries takes at least a byte, so
// after a failed decode such a node is one whose read failed (or a part
// of it not reached): its value is not known, and is not shown as 0.
//
// A string, bytes or records node whose prefix was read but whose bytes
// are not what the prefix says (the frame ended first, or the prefix is
// negative) keeps the prefix alone, as [ValPrefixOnly]: it is not shown
// as "".
//
// Bytes with no prefix of their own (an unknown tag's data, whose size is
// a row before it) are left as they are: their row is added only once
// all their bytes are there, and a tag of size 0 has empty data.
func (t *Tree) ClearUnread(id ID) {
	t.Walk(id, func(x ID, _ int) {
		n := &t.Nodes[x]
		switch {
		case n.Val == ValNone, n.Val == ValBytes && n.Enc == EncNone: // nothing to clear; bytes known whole
		case n.Len == 0:
			n.Val, n.Int, n.Prefix, n.VOff, n.VLen, n.Null = ValNone, 0, 0, 0, 0, false
		case (n.Val == ValString || n.Val == ValBytes || n.Val == ValText || n.Val == ValRecords) && !n.Null &&
			n.Enc != EncNone && int64(len(t.ValueBytes(x))) != prefixLen(n.Enc, n.Prefix):
			n.Val, n.VOff, n.VLen = ValPrefixOnly, 0, 0
		}
	})
}

// prefixLen is the length a length prefix (raw value prefix, encoding e)
// says follows: -1 for null or a negative length.
func prefixLen(e Enc, prefix int64) int64 {
	if e == EncCompact {
		prefix--
	}
	return max(prefix, -1)
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
