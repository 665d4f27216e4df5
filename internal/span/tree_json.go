package span

// AppendValueJSONBare is [Tree.AppendValueJSON] without working out the
// node's note, which the typed value does not carry: for writers that
// ask for the value of every node (package jsonr), after its text.
func (t *Tree) AppendValueJSONBare(dst []byte, id ID) (_ []byte, ok bool) {
	n := &t.Nodes[id]
	v := valueView{Int: n.Int, Prefix: n.Prefix, Val: n.Val, Enc: n.Enc, Null: n.Null}
	switch n.Val {
	case ValNone:
		return dst, false
	case ValFloat:
		v.Float = n.Float()
	case ValString, ValBytes, ValUUID, ValRecords, ValText:
		v.Bytes = t.ValueBytes(id)
	}
	return v.appendJSON(dst)
}
