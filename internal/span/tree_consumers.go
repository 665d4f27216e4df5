package span

import "github.com/manifester/manifester/internal/schema"

// Helpers for the code that reads or edits a decoded tree without
// rendering it (redaction, topic names, round-trip checks).

// Body returns the message body row of a frame tree: the root's child of
// category CatRequestBody or CatResponseBody (None when there is none).
func (t *Tree) Body() ID {
	if t.Root() == None {
		return None
	}
	for k := t.Nodes[0].First; k != None; k = t.Nodes[k].Next {
		if c := t.Nodes[k].Cat; c == CatRequestBody || c == CatResponseBody {
			return k
		}
	}
	return None
}

// KidOf returns the child of id that stands for schema field f (None
// when there is none, or f is nil).
func (t *Tree) KidOf(id ID, f *schema.Field) ID {
	if id == None || f == nil {
		return None
	}
	for k := t.Nodes[id].First; k != None; k = t.Nodes[k].Next {
		if t.Desc(k).Field == f {
			return k
		}
	}
	return None
}

// ValueOff returns where the node's value bytes start in Tree.Bytes: after
// its length prefix, if any (Off for nodes whose value bytes are not in
// Tree.Bytes).
func (t *Tree) ValueOff(id ID) int {
	n := &t.Nodes[id]
	if n.VLen > 0 {
		return int(n.VOff)
	}
	if a := t.aux0(id); a != nil && a.HasValue {
		return int(n.Off+n.Len) - len(a.Value)
	}
	return int(n.Off + n.Len)
}

// AddLocal is Add with a descriptor made from input or for this tree only
// (see [Tree.LocalDesc]): d is not registered.
func (t *Tree) AddLocal(parent ID, d *Desc, off int, cat Category) ID {
	num := t.LocalDesc(d)
	id := t.Add(parent, &Desc{}, off, cat)
	t.Nodes[id].Desc = num
	return id
}

// Varint reports whether the node's bytes start with a varint: a compact
// (uvarint) or zig-zag (varint) length prefix or marker (Row.Enc), or, in
// a tagged-field section, a leaf that is not from a spec field (the
// section's count and each field's tag and size, which Kafka writes as
// uvarints). Schema fields of integer types are fixed-width.
func (t *Tree) Varint(id ID) bool {
	n := &t.Nodes[id]
	switch n.Enc {
	case EncCompact, EncVarint:
		return true
	}
	return n.Cat == CatTagged && (n.Val == ValInt || n.Val == ValCount) && t.Desc(id).Field == nil
}

// Count returns the number of rows under id, id included, counting at most
// limit (limit <= 0: no limit): for output budgets that show only the
// first rows of a large tree. Detached trees are not counted.
func (t *Tree) Count(id ID, limit int) int {
	if id == None {
		return 0
	}
	c := 0
	for x := id; ; {
		c++
		if limit > 0 && c >= limit {
			return c
		}
		if k := t.Nodes[x].First; k != None {
			x = k
			continue
		}
		for x != id && t.Nodes[x].Next == None {
			x = t.Nodes[x].Parent
		}
		if x == id {
			return c
		}
		x = t.Nodes[x].Next
	}
}
