package report

import (
	"encoding/hex"

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

// pageTree is the page tree of t (nil for none), made from its rows as
// page.FromSpan makes it from the pointer tree: the same names, paths,
// values and notes (the render-time ones), with no pointer tree between.
func pageTree(t *span.Tree) *page.Node {
	if t == nil || t.Root() == span.None {
		return nil
	}
	return pageNode(t, t.Root(), nil)
}

// pageNode makes the page node of row id, whose parent's path is path
// (the pointer tree's syntax: display names from the root's child down).
func pageNode(t *span.Tree, id span.ID, path []byte) *page.Node {
	r := t.N(id)
	name := t.DisplayName(id)
	if r.Parent != span.None {
		if len(path) > 0 {
			path = append(path, '.')
		}
		path = append(path, name...)
	}
	out := &page.Node{Name: name, Path: string(path), Type: t.Type(id), Value: t.ValueText(id),
		Offset: int(r.Off), Size: int(r.Len), Cat: r.Cat, Category: r.Cat.String(), About: t.About(id), Flag: t.Flag(id)}
	if v, ok := t.AppendValueJSON(nil, id); ok {
		out.Typed = v
	}
	if err := t.Err(id); err != nil {
		out.Error = err.Error()
	}
	if r.Val == span.ValText {
		if b := t.ValueBytes(id); len(b) > 0 {
			out.Hex = hex.EncodeToString(b)
		}
	}
	if d := t.Detached(id); d != nil && d.Root() != span.None {
		out.Detached = pageNode(d, d.Root(), nil)
		out.Detached.Bytes = d.Bytes
	}
	if r.First != span.None {
		kids := 0
		for k := r.First; k != span.None; k = t.N(k).Next {
			kids++
		}
		out.Children = make([]*page.Node, 0, kids)
		for k := r.First; k != span.None; k = t.N(k).Next {
			out.Children = append(out.Children, pageNode(t, k, path))
		}
	}
	return out
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
