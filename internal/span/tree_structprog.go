package span

import (
	"encoding/binary"
	"slices"
)

// AddIntElems appends n leaves (n > 0) as the last children of parent:
// the elements 0..n-1 of an array of fixed-width big-endian integers,
// size bytes each (1, 2, 4 or 8; signed or not), read from b (which
// holds at least n*size bytes) and placed at offset off, with Desc d and
// value kind ValInt. It is [Tree.AddElems] and the elements' values in
// one pass. It returns the first one's ID (the others follow it).
func (t *Tree) AddIntElems(parent ID, d *Desc, b []byte, off, size, n int, cat Category, signed bool) ID {
	first := ID(len(t.Nodes))
	if cap(t.Nodes)-len(t.Nodes) < n {
		t.Nodes = slices.Grow(t.Nodes, n)
	}
	t.Nodes = t.Nodes[:int(first)+n]
	rows := t.Nodes[first:]
	desc := d.id
	b = b[:n*size]
	switch {
	case size == 4 && signed:
		for i := range rows {
			rows[i].setElem(int64(int32(binary.BigEndian.Uint32(b[4*i:]))), parent, desc, off, size, i, first, cat)
		}
	case size == 8:
		for i := range rows {
			rows[i].setElem(int64(binary.BigEndian.Uint64(b[8*i:])), parent, desc, off, size, i, first, cat)
		}
	case size == 2 && signed:
		for i := range rows {
			rows[i].setElem(int64(int16(binary.BigEndian.Uint16(b[2*i:]))), parent, desc, off, size, i, first, cat)
		}
	case size == 1:
		for i := range rows {
			rows[i].setElem(int64(int8(b[i])), parent, desc, off, size, i, first, cat)
		}
	case size == 4:
		for i := range rows {
			rows[i].setElem(int64(binary.BigEndian.Uint32(b[4*i:])), parent, desc, off, size, i, first, cat)
		}
	default:
		for i := range rows {
			rows[i].setElem(int64(binary.BigEndian.Uint16(b[2*i:])), parent, desc, off, size, i, first, cat)
		}
	}
	rows[n-1].Next = None
	t.link(parent, first, first+ID(n)-1)
	return first
}

// setElem fills row r as element i of AddIntElems's array.
func (r *Row) setElem(v int64, parent ID, desc uint32, off, size, i int, first ID, cat Category) {
	r.Int, r.Prefix = v, 0
	r.Off, r.Len, r.VOff, r.VLen = int32(off+i*size), int32(size), 0, 0
	r.Parent, r.First, r.Last, r.Next = parent, None, None, first+ID(i)+1
	r.Desc, r.Index, r.Aux = desc, int32(i), 0
	r.Val, r.Enc, r.Cat, r.Null = ValInt, EncNone, cat, false
}

// Set sets every field of r (a row taken with [Tree.AddRows]): a row with no children, no extras, no
// prefix and no value bytes, the given links, place, descriptor, index
// (-1 for none) and value.
func (r *Row) Set(parent, next ID, desc uint32, off, n int32, index int32, cat Category, val ValueKind, v int64) {
	r.Int, r.Prefix = v, 0
	r.Off, r.Len, r.VOff, r.VLen = off, n, 0, 0
	r.Parent, r.First, r.Last, r.Next = parent, None, None, next
	r.Desc, r.Index, r.Aux = desc, index, 0
	r.Val, r.Enc, r.Cat, r.Null = val, EncNone, cat, false
}
