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

// ToNode converts t into the pointer tree [Node]. Transitional, like
// [FromNode]: it lets renderers that still read the pointer tree show the
// edits made to a Tree (redaction, topic-name notes, round-trip flags);
// it is deleted with [Node]. Node.Note is [Tree.Note]: the extras' note,
// else the render-time note of the Desc's NoteKind, so the pointer tree
// shows the notes every front end will show.
func (t *Tree) ToNode() *Node {
	if t.Root() == None {
		return nil
	}
	nodes := make([]Node, len(t.Nodes))
	var root *Node
	t.Walk(0, func(id ID, _ int) {
		r := &t.Nodes[id]
		n := &nodes[id]
		d := t.Desc(id)
		*n = Node{Name: t.Name(id), Type: t.Type(id), About: t.About(id), Field: d.Field,
			Int: r.Int, Prefix: r.Prefix, Off: int(r.Off), Len: int(r.Len), Index: r.Index,
			Val: r.Val, Enc: r.Enc, Null: r.Null, Cat: r.Cat}
		if r.Val == ValFloat {
			n.Int, n.Float = 0, r.Float()
		}
		if r.Val == ValString || r.Val == ValBytes || r.Val == ValUUID || r.Val == ValRecords || r.Val == ValText {
			n.Bytes = t.ValueBytes(id)
		}
		n.Note = t.Note(id)
		if a := t.aux0(id); a != nil {
			n.Flag, n.Err = a.Flag, a.Err
			if a.Detached != nil {
				n.Detached = a.Detached.ToNode()
				if n.Detached != nil {
					n.Detached.Bytes = a.Detached.Bytes
				}
			}
		}
		if r.Parent == None {
			root = n
			return
		}
		p := &nodes[r.Parent]
		n.Parent = p
		p.Kids = append(p.Kids, n)
	})
	return root
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
