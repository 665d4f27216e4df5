package report

import (
	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/span"
)

// SyncLegacy makes the pointer tree (Decoded.Root) and the page tree
// (Tree) that renderers not yet reading [Frame.SpanTree] still read show
// the edits made to the frame's span.Tree (redaction, topic-name notes,
// the round-trip flag, the undecoded bytes) and its render-time notes.
// Call it after editing the span tree. Transitional: it is deleted with
// span.Node and page.Node, once every renderer reads the span tree.
func (f *Frame) SyncLegacy() {
	t := f.SpanTree()
	if t == nil {
		return
	}
	root := legacyNode(t, t.Root(), nil)
	if f.Decoded != nil && f.Spans == nil {
		f.Decoded.Root = root
	}
	if f.Tree != nil || f.Decoded == nil || f.Spans != nil {
		f.Tree = page.FromSpan(root)
	}
}

// pageTree is the page tree of t (nil for none).
func pageTree(t *span.Tree) *page.Node {
	if t == nil || t.Root() == span.None {
		return nil
	}
	return page.FromSpan(legacyNode(t, t.Root(), nil))
}

// legacyNode converts the rows under id into the pointer tree, notes
// included (span.Tree.Note: the render-time ones). Rows unlinked by
// CutKids are left out.
func legacyNode(t *span.Tree, id span.ID, parent *span.Node) *span.Node {
	if id == span.None {
		return nil
	}
	r := t.N(id)
	n := &span.Node{Name: t.Name(id), Type: t.Type(id), About: t.About(id), Note: t.Note(id), Flag: t.Flag(id), Err: t.Err(id),
		Parent: parent, Field: t.Desc(id).Field, Int: r.Int, Prefix: r.Prefix, Off: int(r.Off), Len: int(r.Len), Index: r.Index,
		Val: r.Val, Enc: r.Enc, Null: r.Null, Cat: r.Cat}
	switch r.Val {
	case span.ValFloat:
		n.Int, n.Float = 0, r.Float()
	case span.ValString, span.ValBytes, span.ValUUID, span.ValRecords, span.ValText:
		n.Bytes = t.ValueBytes(id)
	}
	if d := t.Detached(id); d != nil {
		if n.Detached = legacyNode(d, d.Root(), nil); n.Detached != nil {
			n.Detached.Bytes = d.Bytes
		}
	}
	for k := r.First; k != span.None; k = t.N(k).Next {
		n.Kids = append(n.Kids, legacyNode(t, k, n))
	}
	return n
}
