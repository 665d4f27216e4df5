package span

import "unsafe"

// FromNode converts a pointer tree into a [Tree] over b, the bytes the
// tree's offsets index. It is the bridge while front ends move from
// [Node] to [Tree]; the codec will build Trees directly.
func FromNode(root *Node, b []byte) *Tree {
	t := &Tree{Bytes: b}
	if root == nil {
		return t
	}
	memo := map[descKey]uint32{}
	t.bridge(root, None, memo)
	return t
}

type descKey struct {
	field            any
	name, typ, about string
}

func (t *Tree) bridge(n *Node, parent ID, memo map[descKey]uint32) {
	k := descKey{name: n.Name, typ: n.Type, about: n.About}
	if n.Field != nil {
		k.field = n.Field
	}
	num, ok := memo[k]
	if !ok {
		d := &Desc{Name: n.Name, Type: n.Type, About: n.About, Field: n.Field}
		if n.Field != nil {
			d.Note = NoteFor(n.Field)
			if n.Field.Type != nil {
				d.Struct = n.Field.Type.ElemStruct()
			}
		}
		num = t.LocalDesc(d)
		memo[k] = num
	}
	id := t.Add(parent, &Desc{}, n.Off, n.Cat)
	r := &t.Nodes[id]
	r.Desc, r.Len, r.Index = num, int32(n.Len), n.Index
	r.Int, r.Prefix, r.Val, r.Enc, r.Null = n.Int, n.Prefix, n.Val, n.Enc, n.Null
	if n.Val == ValFloat {
		r.SetFloat(n.Float)
	}
	if n.Bytes != nil {
		if off, ok := within(t.Bytes, n.Bytes); ok {
			r.VOff, r.VLen = int32(off), int32(len(n.Bytes))
		} else {
			a := t.Extra(id, true)
			a.Value, a.HasValue = n.Bytes, true
		}
	}
	if n.Note != "" || n.Flag != "" || n.Err != nil || n.Detached != nil {
		a := t.Extra(id, true)
		a.Note, a.Flag, a.Err = n.Note, n.Flag, n.Err
		if n.Detached != nil {
			a.Detached = FromNode(n.Detached, n.Detached.Bytes)
		}
	}
	for _, k := range n.Kids {
		t.bridge(k, id, memo)
	}
}

// within returns the offset of sub in b when sub's bytes lie inside b's.
func within(b, sub []byte) (int, bool) {
	if len(sub) == 0 || len(b) == 0 {
		return 0, len(sub) == 0
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(sub)))
	if p < base || p+uintptr(len(sub)) > base+uintptr(len(b)) {
		return 0, false
	}
	return int(p - base), true
}
