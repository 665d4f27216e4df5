package report

import "github.com/manifester/manifester/internal/page"

// SyncLegacy makes the pointer tree (Decoded.Root) and the page tree
// (Tree) that renderers not yet reading [Frame.SpanTree] still read show
// the edits made to the frame's span.Tree: redaction, topic-name notes,
// the round-trip flag, the undecoded bytes. Call it after editing the
// span tree. Transitional: it is deleted with span.Node and page.Node,
// once every renderer reads the span tree.
func (f *Frame) SyncLegacy() {
	t := f.SpanTree()
	if t == nil {
		return
	}
	root := t.ToNode()
	if f.Decoded != nil && f.spans == nil {
		f.Decoded.Root = root
	}
	if f.Tree != nil || f.Decoded == nil || f.spans != nil {
		f.Tree = page.FromSpan(root)
	}
}
