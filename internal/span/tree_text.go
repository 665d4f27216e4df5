package span

// AppendSampleValueText appends the node's value as a reference page of a
// smallest instance shows it: as [Tree.AppendValueText], except that a
// zero value of a spec field whose note would come from its descriptor's
// NoteKind is left bare ("= 0", not "= 0 (NONE)"), as Kafka's reference
// pages show the all-zero instances. The fixed nodes of frames (the
// header's request_api_key: "= 0 (Produce)") and a decoder's own note
// (the side table's) keep theirs.
func (t *Tree) AppendSampleValueText(dst []byte, id ID) []byte {
	n := &t.Nodes[id]
	if d := t.Desc(id); n.Val == ValInt && n.Int == 0 && d.Note != NoteNone && d.Field != nil {
		if a := t.aux0(id); a == nil || a.Note == "" {
			v := t.view(id)
			v.Note = ""
			return v.appendText(dst)
		}
	}
	return t.AppendValueText(dst, id)
}
