package jsonr

import (
	"sync/atomic"

	"github.com/manifester/manifester/internal/hexout"
	"github.com/manifester/manifester/internal/span"
)

// treeWriter writes the nodes of a [span.Tree]. path holds the escaped
// path of the node being written; it grows and shrinks as the walk goes
// down and up, so no path is built twice.
type treeWriter struct {
	b       []byte
	path    []byte
	scratch []byte
	about   bool
	// limit is the length of b past which no more nodes are written (0:
	// no limit); cutNodes, cutTrees and cutValues count what was left out.
	limit                         int
	cutNodes, cutTrees, cutValues int
	// hexTree, when set, is the tree whose Bytes' hex is hex (a frame
	// line's "hex"): its values' hex is copied from there rather than
	// made again.
	hexTree *span.Tree
	hex     []byte
	// spill, when set, takes the line's bytes in pieces between nodes;
	// spilled counts the bytes it took (positions in the line are
	// spilled+len(b)), err is its first error.
	spill   *Spill
	spilled int
	err     error
}

// appendHex appends the hex of vb, the value bytes of node id of t.
func (w *treeWriter) appendHex(b []byte, t *span.Tree, id span.ID, vb []byte) []byte {
	if t == w.hexTree && len(vb) > 0 {
		if a := t.Extra(id, false); a == nil || !a.HasValue {
			// vb is t.Bytes[off:off+len(vb)] (checked: the same memory)
			if off := t.ValueOff(id); off >= 0 && off+len(vb) <= len(t.Bytes) && &t.Bytes[off] == &vb[0] {
				return append(b, w.hex[2*off:2*(off+len(vb))]...)
			}
		}
	}
	return hexout.AppendEncode(b, vb)
}

// at is the position in the line of the end of b, the line's last
// piece.
func (w *treeWriter) at(b []byte) int { return w.spilled + len(b) }

// full reports whether the output budget is spent.
func (w *treeWriter) full() bool { return w.limit > 0 && w.at(w.b) >= w.limit }

// spillNow hands the bytes made so far to the spill's Write and empties
// the buffer (after an error, the bytes are dropped).
func (w *treeWriter) spillNow() {
	w.put(w.b)
	w.b = w.b[:0]
}

// put hands b to the spill's Write, unless an earlier Write failed.
func (w *treeWriter) put(b []byte) {
	if w.err == nil {
		w.err = w.spill.Write(b)
	}
	w.spilled += len(b)
}

// tree writes the tree of t under id (its root when id is the root), the
// path starting afresh: node paths are relative to the tree they are in,
// inflated trees included.
func (w *treeWriter) tree(t *span.Tree, id span.ID) {
	saved := len(w.path)
	if t.N(id).Parent != span.None {
		w.path = span.AppendJSONStringBody(w.path, t.Path(id))
	}
	d := t.Desc(id)
	w.node(t, id, saved, -1, d, fragOf(d))
	w.path = w.path[:saved]
}

// node writes node id, whose escaped path is w.path[base:]. When nameAt
// >= 0, w.path[nameAt:] is the node's escaped name (the path's last
// segment), written once for both. d is the node's Desc and frag its
// fragments (fragOf(d)), which the parent looked up for the path.
func (w *treeWriter) node(t *span.Tree, id span.ID, base, nameAt int, d *span.Desc, frag *descFrag) {
	if w.spill != nil && len(w.b) >= w.spill.At {
		w.spillNow()
	}
	n := t.N(id)
	a := t.Extra(id, false)
	name, typ, about := d.Name, d.Type, d.About
	var flag, note string
	var err error
	var det *span.Tree
	if a != nil {
		if a.Name != "" {
			name = a.Name
		}
		if a.Type != "" {
			typ = a.Type
		}
		if a.About != "" {
			about = a.About
		}
		flag, err, det, note = a.Flag, a.Err, a.Detached, a.Note
		if a.Name != "" || a.Type != "" || a.About != "" {
			frag = nil
		}
	}
	b := append(w.b, `{"name":"`...)
	switch {
	case nameAt >= 0:
		b = append(b, w.path[nameAt:]...)
	case frag != nil:
		b = append(b, frag.name...)
	default:
		b = appendStringBody(b, name)
	}
	if n.Index >= 0 {
		b = append(appendInt(append(b, '['), int64(n.Index)), ']')
	}
	b = append(b, `","path":"`...)
	b = append(append(b, w.path[base:]...), '"')
	switch {
	case frag != nil:
		b = append(b, frag.typ...)
	case typ != "":
		b = appendString(append(b, `,"type":`...), typ)
	}
	if n.Val == span.ValInt && note == "" && d.Note == span.NoteNone {
		// The commonest node, written directly: the text is "= N" and
		// the value N (what AppendValueText and AppendValueJSON write for
		// an integer without a note).
		b = appendInt(append(appendInt(append(b, `,"text":"= `...), n.Int), `","value":`...), n.Int)
	} else if n.Val == span.ValBytes && !n.Null && note == "" {
		// Bytes: the text is "= 0x" and the first bytes' hex, the value
		// all of the hex (as AppendValueText and AppendValueJSON write
		// them, the hex faster).
		vb := t.ValueBytes(id)
		b = append(b, `,"text":"= 0x`...)
		if len(vb) > span.ShownHex {
			b = append(w.appendHex(b, t, id, vb[:span.ShownHex]), "..."...)
		} else {
			b = w.appendHex(b, t, id, vb)
		}
		b = append(span.AppendLenNote(b, n.Enc, n.Prefix), '"')
		if w.limit > 0 && w.at(b)+2*len(vb)+32 > w.limit {
			w.cutValues++
		} else {
			b = append(w.appendHex(append(b, `,"value":"`...), t, id, vb), '"')
		}
	} else if (n.Val == span.ValText || n.Val == span.ValString && !n.Null) && note == "" && plainShown(t.ValueBytes(id)) {
		// Text whose shown start is printable ASCII: strconv.Quote
		// leaves it as it is, so the text is written without quoting
		// and escaping it twice.
		vb := t.ValueBytes(id)
		shown := vb[:min(len(vb), span.ShownText)]
		b = append(appendStringBody(append(b, `,"text":"= \"`...), shown), `\"`...)
		if len(vb) > span.ShownText {
			b = append(b, "..."...)
		}
		if n.Val == span.ValText {
			b = append(b, " 0x"...)
			if len(vb) > span.ShownHex {
				b = append(w.appendHex(b, t, id, vb[:span.ShownHex]), "..."...)
			} else {
				b = w.appendHex(b, t, id, vb)
			}
		}
		b = append(span.AppendLenNote(b, n.Enc, n.Prefix), '"')
		if n.Val == span.ValString && w.limit > 0 && w.at(b)+2*len(vb)+32 > w.limit {
			w.cutValues++
		} else {
			b = span.AppendJSONString(append(b, `,"value":`...), vb)
		}
		if n.Val == span.ValText && len(vb) > 0 {
			b = append(w.appendHex(append(b, `,"hex":"`...), t, id, vb), '"')
		}
	} else if (n.Val == span.ValCount || n.Val == span.ValArray && !n.Null) && note == "" {
		// Counts and array lengths: "= N" and a note, the value N.
		b = append(b, `,"text":"= `...)
		if n.Val == span.ValArray {
			b = span.AppendPlural(b, int(n.Int), "element")
		} else {
			b = span.AppendCountNote(appendInt(b, n.Int), n.Enc, n.Int)
		}
		b = appendInt(append(b, `","value":`...), n.Int)
	} else if n.Val != span.ValNone {
		// Format in place; escape (through scratch) only when needed.
		at := len(b)
		b = t.AppendValueText(append(b, `,"text":"`...), id)
		v := b[at+len(`,"text":"`):]
		switch {
		case len(v) == 0:
			b = b[:at]
		case span.NeedsJSONEscape(v):
			w.scratch = append(w.scratch[:0], v...)
			b = append(appendStringBody(b[:len(b)-len(v)], w.scratch), '"')
		default:
			b = append(b, '"')
		}
		at = len(b)
		if w.limit > 0 && (n.Val == span.ValBytes || n.Val == span.ValString) && w.at(b)+2*len(t.ValueBytes(id))+32 > w.limit {
			// A value that would pass the output budget (the hex of
			// inflated megabytes) is left out; "text" shows its start.
			w.cutValues++
		} else if n.Val == span.ValBytes && !n.Null {
			// What AppendValueJSON writes for bytes, with the faster hex.
			b = append(hexout.AppendEncode(append(b, `,"value":"`...), t.ValueBytes(id)), '"')
		} else if nb, ok := t.AppendValueJSON(append(b, `,"value":`...), id); ok {
			b = nb
		} else {
			b = b[:at]
		}
		if n.Val == span.ValText {
			// the text is the value; its bytes are kept as hex
			if vb := t.ValueBytes(id); len(vb) > 0 {
				b = append(w.appendHex(append(b, `,"hex":"`...), t, id, vb), '"')
			}
		}
	}
	b = appendInt(append(b, `,"offset":`...), int64(n.Off))
	b = appendInt(append(b, `,"size":`...), int64(n.Len))
	if n.Cat != span.CatNone {
		b = append(b, catFrag(n.Cat)...)
	}
	if w.about {
		switch {
		case frag != nil:
			b = append(b, frag.about...)
		case about != "":
			b = appendString(append(b, `,"about":`...), about)
		}
	}
	if flag != "" {
		b = appendString(append(b, `,"flag":`...), flag)
	}
	if err != nil {
		if msg := err.Error(); msg != "" {
			b = appendString(append(b, `,"error":`...), msg)
		}
	}
	if first := n.First; first != span.None {
		w.b = append(b, `,"children":[`...)
		// Children's paths: this node's path and their own segment, a
		// dot and the name or "[i]" for elements of arrays and records
		// fields; the root's
		// children start afresh (the root is not in paths).
		end := len(w.path)
		root := n.Parent == span.None
		for k := first; k != span.None; k = t.N(k).Next {
			if w.full() {
				for r := k; r != span.None; r = t.N(r).Next {
					w.cutNodes += count(t, r)
				}
				break
			}
			if k != first {
				w.b = append(w.b, ',')
			}
			kn := t.N(k)
			w.path = w.path[:end]
			nameAt := -1
			kd := t.Desc(k)
			kf := fragOf(kd)
			if kn.Index >= 0 && (n.Val == span.ValArray || n.Val == span.ValRecords) {
				w.path = append(appendInt(append(w.path, '['), int64(kn.Index)), ']')
			} else {
				if !root {
					w.path = append(w.path, '.')
				}
				nameAt = len(w.path)
				if kf != nil && !hasName(t, k) {
					w.path = append(w.path, kf.name...)
				} else {
					w.path = appendStringBody(w.path, t.Name(k))
				}
				if kn.Index >= 0 { // a Record of a batch: named, then indexed (as span.Tree.Path)
					w.path = append(appendInt(append(w.path, '['), int64(kn.Index)), ']')
					nameAt = -1
				}
			}
			w.node(t, k, base, nameAt, kd, kf)
		}
		w.path = w.path[:end]
		b = append(w.b, ']')
	}
	if det != nil && det.Root() != span.None {
		if w.full() {
			w.cutTrees++
		} else {
			w.b = append(b, `,"detached":`...)
			w.tree(det, det.Root())
			b = w.b
		}
	}
	w.b = append(b, '}')
}

// count counts the nodes of the subtree under id (inflated trees aside).
func count(t *span.Tree, id span.ID) int {
	c := 0
	t.Walk(id, func(span.ID, int) { c++ })
	return c
}

// appendString appends s as a JSON string, quotes included, escaped as
// encoding/json escapes it.
func appendString[T []byte | string](dst []byte, s T) []byte {
	return append(span.AppendJSONStringBody(append(dst, '"'), s), '"')
}

// appendStringBody appends s escaped as encoding/json escapes strings,
// without the quotes.
func appendStringBody[T []byte | string](dst []byte, s T) []byte {
	return span.AppendJSONStringBody(dst, s)
}

// hasName reports whether node id has a name of its own (in its extras),
// not its Desc's.
func hasName(t *span.Tree, id span.ID) bool {
	a := t.Extra(id, false)
	return a != nil && a.Name != ""
}

// plainShown reports whether the start of a string that its text shows
// is printable ASCII other than the quote and the backslash, which
// strconv.Quote leaves as they are.
func plainShown(b []byte) bool {
	for _, c := range b[:min(len(b), span.ShownText)] {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// catFrags holds `,"category":"…"` per category, made once each.
var catFrags [256]atomic.Pointer[[]byte]

// catFrag returns `,"category":"…"` for c (not CatNone).
func catFrag(c span.Category) []byte {
	if f := catFrags[c].Load(); f != nil {
		return *f
	}
	f := append(append([]byte(`,"category":"`), c.String()...), '"')
	catFrags[c].Store(&f)
	return f
}
