// Package span is the annotated view of encoded bytes: a tree of [Node]s,
// each naming a field, its type, its value and the [offset, size] of its
// bytes in the frame, with a [Category] for colouring.
//
// Leaf nodes tile the frame: every byte belongs to exactly one leaf. Group
// nodes (structs, arrays, headers) span the union of their children.
//
// Values are kept raw (an integer, a byte slice that points into the
// input); [Node.ValueText] formats them only when a renderer asks.
package span

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/manifester/manifester/internal/schema"
)

// Category is what a byte is part of, for the colour legend.
type Category uint8

// The categories, in legend order.
const (
	CatNone Category = iota
	CatFrame
	CatHeader
	CatRequestBody
	CatRecordBatch
	CatRecord
	CatResponseBody
	CatTagged
)

// Categories lists the legend entries in order.
var Categories = []Category{CatFrame, CatHeader, CatRequestBody, CatRecordBatch, CatRecord, CatResponseBody, CatTagged}

var catNames = [...]string{"", "frame", "rpc header", "request body", "RecordBatch", "Record", "response body", "tagged_fields"}
var catClasses = [...]string{"", "frame", "hdr", "req", "batch", "rec", "resp", "tag"}

// String returns the legend label ("rpc header").
func (c Category) String() string { return catNames[c] }

// Class returns a short identifier for style sheets ("hdr").
func (c Category) Class() string { return catClasses[c] }

// ValueKind tells how a node's value is to be read.
type ValueKind uint8

// Value kinds.
const (
	ValNone     ValueKind = iota // a group with no value of its own
	ValInt                       // Int
	ValBool                      // Int 0/1
	ValFloat                     // Float
	ValString                    // Bytes, Enc/Int = length prefix
	ValBytes                     // Bytes, Enc/Int = length prefix
	ValUUID                      // Bytes (16)
	ValCount                     // a length or count prefix: Int = raw value
	ValArray                     // Int = element count
	ValStruct                    // a struct element
	ValRecords                   // Bytes, Enc/Int = length prefix; children are batches
	ValPresence                  // nullable-struct marker: Int
	// ValText is bytes that read as text (record keys, values and header
	// values that are UTF-8 without control characters other than tab,
	// newline and carriage return): Bytes, shown quoted and as hex.
	ValText
)

// Enc is how a length prefix was encoded.
type Enc uint8

// Length encodings.
const (
	EncNone    Enc = iota
	EncInt16       // classic string
	EncInt32       // classic bytes/array
	EncCompact     // uvarint N+1
	EncVarint      // zig-zag varint (records)
)

// Node is one annotated span of bytes.
type Node struct {
	// Pointer-bearing fields come first and plain scalars last, so the
	// garbage collector scans only the front of each node; the small
	// scalars share one word.
	Name   string
	Type   string
	Bytes  []byte
	Note   string // shown after the value: "(AlterConfigs)", "(NONE)", a date
	About  string
	Flag   string // a warning about this node: "unknown tag", "non-canonical"
	Err    error  // set on the node where decoding failed
	Parent *Node
	Kids   []*Node
	// Field is the schema field the node stands for (a field or an array
	// element of one), nil for nodes not from a spec.
	Field *schema.Field
	// Detached is a separate tree over derived bytes (the inflated records
	// of a compressed batch); its offsets are within Detached.Bytes.
	Detached *Node
	Int      int64
	Float    float64
	// Prefix is the raw value of a length prefix (compact N+1, classic N).
	Prefix int64
	Off    int
	Len    int
	Index  int32 // element index for array elements, -1 otherwise
	Val    ValueKind
	Enc    Enc
	Null   bool
	Cat    Category
}

// DisplayName is Name, with "[i]" for array elements.
func (n *Node) DisplayName() string {
	if n.Index >= 0 {
		return n.Name + "[" + strconv.Itoa(int(n.Index)) + "]"
	}
	return n.Name
}

// Path is the dotted path from the root's child to n ("Resources[0].Name").
func (n *Node) Path() string {
	// Renderers ask for the path of every node, so it is built with one
	// allocation: collect the ancestors, measure, then write.
	var stack [32]*Node
	up := stack[:0]
	size := -1
	for x := n; x != nil && x.Parent != nil; x = x.Parent {
		up = append(up, x)
		size += len(x.Name) + 1
		if x.Index >= 0 {
			size += 2 + digits(x.Index)
		}
	}
	if size <= 0 {
		return ""
	}
	var sb strings.Builder
	sb.Grow(size)
	var num [12]byte
	for i := len(up) - 1; i >= 0; i-- {
		x := up[i]
		if i < len(up)-1 {
			sb.WriteByte('.')
		}
		sb.WriteString(x.Name)
		if x.Index >= 0 {
			sb.WriteByte('[')
			sb.Write(strconv.AppendInt(num[:0], int64(x.Index), 10))
			sb.WriteByte(']')
		}
	}
	return sb.String()
}

// digits returns the number of decimal digits of v >= 0.
func digits(v int32) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// IsLeaf reports whether n has no children.
func (n *Node) IsLeaf() bool { return len(n.Kids) == 0 }

// Walk calls f for n and every descendant, depth first, parents first.
func (n *Node) Walk(f func(*Node, int)) { n.walk(f, 0) }

func (n *Node) walk(f func(*Node, int), depth int) {
	f(n, depth)
	for _, k := range n.Kids {
		k.walk(f, depth+1)
	}
}

// Leaves returns the leaf nodes in byte order.
func (n *Node) Leaves() []*Node {
	var out []*Node
	n.Walk(func(x *Node, _ int) {
		if x.IsLeaf() {
			out = append(out, x)
		}
	})
	return out
}

// maxShown bounds how much of a string or byte value ValueText prints.
const maxShown = 48

// ValueText formats the value the way the object tree shows it:
// "= 33 (AlterConfigs)", `= "" (compact, len+1=1)`, "= 2 (compact, n+1)",
// "= 1 element", "= struct". Groups without a value give "".
func (n *Node) ValueText() string {
	if n.Val == ValNone {
		return ""
	}
	var buf [96]byte
	return string(n.AppendValueText(buf[:0]))
}

// AppendValueText appends [Node.ValueText] to dst, for writers that format
// many nodes into one buffer.
func (n *Node) AppendValueText(dst []byte) []byte { return n.view().appendText(dst) }

// valueView is what value formatting reads from a node, the same for a
// [Node] and a row of a [Tree].
type valueView struct {
	Bytes  []byte
	Note   string
	Int    int64
	Float  float64
	Prefix int64
	Val    ValueKind
	Enc    Enc
	Null   bool
}

func (n *Node) view() valueView {
	return valueView{Bytes: n.Bytes, Note: n.Note, Int: n.Int, Float: n.Float, Prefix: n.Prefix, Val: n.Val, Enc: n.Enc, Null: n.Null}
}

func (n valueView) appendText(dst []byte) []byte {
	switch n.Val {
	case ValNone:
		return dst
	case ValInt:
		dst = strconv.AppendInt(append(dst, "= "...), n.Int, 10)
	case ValBool:
		dst = strconv.AppendBool(append(dst, "= "...), n.Int != 0)
	case ValFloat:
		dst = strconv.AppendFloat(append(dst, "= "...), n.Float, 'g', -1, 64)
	case ValString:
		if n.Null {
			dst = append(dst, "= null"...)
		} else {
			dst = appendQuoted(append(dst, "= "...), n.Bytes)
		}
		dst = appendLenNote(dst, n.Enc, n.Prefix)
	case ValText:
		dst = appendQuoted(append(dst, "= "...), n.Bytes)
		dst = appendHexShort(append(dst, ' '), n.Bytes)
		dst = appendLenNote(dst, n.Enc, n.Prefix)
	case ValBytes, ValRecords:
		switch {
		case n.Null:
			dst = append(dst, "= null"...)
		case n.Val == ValRecords:
			dst = appendPlural(append(dst, "= "...), len(n.Bytes), "byte")
		default:
			dst = appendHexShort(append(dst, "= "...), n.Bytes)
		}
		dst = appendLenNote(dst, n.Enc, n.Prefix)
	case ValUUID:
		dst = append(dst, "= "...)
		if len(n.Bytes) == 16 {
			dst = appendUUID(dst, n.Bytes)
		} else {
			dst = append(dst, FormatUUID(n.Bytes)...)
		}
	case ValCount:
		dst = strconv.AppendInt(append(dst, "= "...), n.Int, 10)
		switch {
		case n.Enc == EncCompact && n.Int == 0:
			dst = append(dst, " (compact, null)"...)
		case n.Enc == EncCompact:
			dst = append(dst, " (compact, n+1)"...)
		case n.Int == -1:
			dst = append(dst, " (null)"...)
		}
	case ValArray:
		if n.Null {
			dst = append(dst, "= null"...)
		} else {
			dst = appendPlural(append(dst, "= "...), int(n.Int), "element")
		}
	case ValStruct:
		if n.Null {
			dst = append(dst, "= null"...)
		} else {
			dst = append(dst, "= struct"...)
		}
	case ValPresence:
		dst = strconv.AppendInt(append(dst, "= "...), n.Int, 10)
		// Int is the wire value: int8 -1 is null; a tagged struct's
		// uvarint marker (Enc == EncCompact) is 0 for null.
		if n.Int < 0 || (n.Enc == EncCompact && n.Int == 0) {
			dst = append(dst, " (null)"...)
		} else {
			dst = append(dst, " (present)"...)
		}
	}
	if n.Note != "" {
		dst = append(append(append(dst, " ("...), n.Note...), ')')
	}
	return dst
}

func appendLenNote(dst []byte, e Enc, prefix int64) []byte {
	switch e {
	case EncInt16:
		return append(strconv.AppendInt(append(dst, " (int16 len="...), prefix, 10), ')')
	case EncInt32:
		return append(strconv.AppendInt(append(dst, " (int32 len="...), prefix, 10), ')')
	case EncCompact:
		if prefix == 0 {
			return append(dst, " (compact, 0)"...)
		}
		return append(strconv.AppendInt(append(dst, " (compact, len+1="...), prefix, 10), ')')
	case EncVarint:
		return append(strconv.AppendInt(append(dst, " (varint len="...), prefix, 10), ')')
	}
	return dst
}

func appendPlural(dst []byte, n int, word string) []byte {
	dst = append(strconv.AppendInt(dst, int64(n), 10), ' ')
	dst = append(dst, word...)
	if n != 1 {
		dst = append(dst, 's')
	}
	return dst
}

func appendQuoted(dst, b []byte) []byte {
	if len(b) > maxShown {
		return append(strconv.AppendQuote(dst, string(b[:maxShown])), "..."...)
	}
	return strconv.AppendQuote(dst, string(b))
}

func appendHexShort(dst, b []byte) []byte {
	dst = append(dst, "0x"...)
	if len(b) > maxShown/2 {
		return append(hex.AppendEncode(dst, b[:maxShown/2]), "..."...)
	}
	return hex.AppendEncode(dst, b)
}

func appendUUID(dst, b []byte) []byte {
	dst = hex.AppendEncode(dst, b[0:4])
	dst = hex.AppendEncode(append(dst, '-'), b[4:6])
	dst = hex.AppendEncode(append(dst, '-'), b[6:8])
	dst = hex.AppendEncode(append(dst, '-'), b[8:10])
	return hex.AppendEncode(append(dst, '-'), b[10:16])
}

// FormatUUID prints 16 bytes in the usual 8-4-4-4-12 form.
func FormatUUID(b []byte) string {
	if len(b) != 16 {
		return fmt.Sprintf("invalid uuid %x", b)
	}
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Builder allocates nodes in chunks, so a tree of n nodes costs about n/256
// allocations instead of n (chunks start small and grow to 256 nodes).
type Builder struct {
	chunk []Node
	kids  []*Node // the unused rest of the Kids slab (see Reserve)
	next  int     // size of the last node chunk
	nextK int     // size of the last Kids slab
	// Count is the number of nodes New has returned, for budgets.
	Count int64
}

const chunkSize = 256

// New returns a fresh node attached under parent (when parent is not nil).
func (b *Builder) New(parent *Node, name, typ string, off int, cat Category) *Node {
	if len(b.chunk) == 0 {
		// Chunks grow from 16 nodes to chunkSize, so that a small frame
		// does not pay for a whole chunk.
		b.next = min(max(2*b.next, 16), chunkSize)
		b.chunk = make([]Node, b.next)
	}
	n := &b.chunk[0]
	b.chunk = b.chunk[1:]
	b.Count++
	n.Name, n.Type, n.Off, n.Cat, n.Index = name, typ, off, cat, -1
	if parent != nil {
		n.Parent = parent
		parent.Kids = append(parent.Kids, n)
	}
	return n
}

// kidChunk is the size of the slab that Reserve carves Kids slices from.
const kidChunk = 1024

// Reserve makes room for k more children of n, so that appending them
// does not grow n.Kids one reallocation at a time. The room is carved
// from a slab shared by the builder's nodes (capped, so that appending
// past it reallocates rather than overwrite a neighbour). Reserving too
// little or too much is harmless.
func (b *Builder) Reserve(n *Node, k int) {
	if n == nil || k <= 0 || cap(n.Kids)-len(n.Kids) >= k {
		return
	}
	need := len(n.Kids) + k
	var s []*Node
	if need > kidChunk/4 {
		s = make([]*Node, len(n.Kids), need)
	} else {
		if need > len(b.kids) {
			b.nextK = min(max(2*b.nextK, 64, need), kidChunk)
			b.kids = make([]*Node, b.nextK)
		}
		s = b.kids[:len(n.Kids):need]
		b.kids = b.kids[need:]
	}
	copy(s, n.Kids)
	n.Kids = s
}
