package span

// AppendSampleValueText appends the node's value as a reference page of a
// smallest instance shows it: as [Tree.AppendValueText], except that a
// zero integer whose note would come from its descriptor's NoteKind is
// left bare ("= 0", not "= 0 (NONE)" or "= 0 (Produce)"), as Kafka's
// reference pages show the all-zero instances. A decoder's own note (the
// side table's) is kept.
func (t *Tree) AppendSampleValueText(dst []byte, id ID) []byte {
	n := &t.Nodes[id]
	if n.Val == ValInt && n.Int == 0 && t.Desc(id).Note != NoteNone {
		if a := t.aux0(id); a == nil || a.Note == "" {
			v := t.view(id)
			v.Note = ""
			return v.appendText(dst)
		}
	}
	return t.AppendValueText(dst, id)
}
