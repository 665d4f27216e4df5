package text

import (
	"errors"

	"github.com/manifester/manifester/internal/span"
)

// TNode is a hand-made node of a test tree (see BuildTree).
type TNode struct {
	Name, Type, About string
	Val               span.ValueKind
	Int               int64
	Bytes             []byte
	Enc               span.Enc
	Prefix            int64
	Null              bool
	// Elem is 1 + the node's index in its array, 0 for a node that is
	// not an array element.
	Elem     int
	Off, Len int
	Cat      span.Category
	Flag     string
	Err      string
	Kids     []TNode
}

// BuildTree makes a span.Tree of root, with descriptors of the tree's
// own (never registered) and value bytes in the side table.
func BuildTree(root TNode) *span.Tree {
	size := 0
	var measure func(n TNode)
	measure = func(n TNode) {
		size = max(size, n.Off+n.Len)
		for _, k := range n.Kids {
			measure(k)
		}
	}
	measure(root)
	t := &span.Tree{Bytes: make([]byte, size)}
	var add func(n TNode, parent span.ID)
	add = func(n TNode, parent span.ID) {
		id := t.Add(parent, &span.Desc{}, n.Off, n.Cat)
		num := t.LocalDesc(&span.Desc{Name: n.Name, Type: n.Type, About: n.About})
		r := t.N(id)
		r.Desc, r.Len, r.Index = num, int32(n.Len), int32(n.Elem-1)
		r.Val, r.Int, r.Enc, r.Prefix, r.Null = n.Val, n.Int, n.Enc, n.Prefix, n.Null
		if n.Bytes != nil || n.Flag != "" || n.Err != "" {
			a := t.Extra(id, true)
			a.Value, a.HasValue, a.Flag = n.Bytes, n.Bytes != nil, n.Flag
			if n.Err != "" {
				a.Err = errors.New(n.Err)
			}
		}
		for _, k := range n.Kids {
			add(k, id)
		}
	}
	add(root, span.None)
	return t
}
