package span

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/manifester/manifester/internal/schema"
)

// ID names a node of a [Tree]: its index in Tree.Nodes. [None] is no node.
type ID int32

// None is the ID of no node (no parent, no child, no sibling).
const None ID = -1

// NoteKind says how an integer value is annotated when it is shown: the
// note is a function of the node's descriptor and value, computed by the
// renderer, so every front end shows the same note for the same bytes.
type NoteKind uint8

// Note kinds.
const (
	NoteNone      NoteKind = iota
	NoteErrorCode          // int16 error code: "NONE", the error's name
	NoteAPIKey             // int16 API key: the API's name in Tree.Reg
	NoteTimestamp          // int64 milliseconds: the UTC date
)

// Desc describes what a node is: its name, its type as shown, its
// description, and the schema descriptors it stands for. Descs are made
// once (when a codec plans a message, or at init for the fixed nodes of
// frames and records) and shared by every tree; a node names its Desc by
// a number, so that nodes hold no pointers.
type Desc struct {
	Name  string
	Type  string
	About string
	// Field is the schema field of a field node and of its array
	// elements; Struct the struct of a struct node or element; Message
	// the message of a body or frame root. Nil for nodes that are not
	// from a spec (sizes, length prefixes, tagged-field sections).
	Field   *schema.Field
	Struct  *schema.Struct
	Message *schema.Message
	// Note is how an integer value of this node is annotated.
	Note NoteKind
	id   uint32
}

// ID returns the number nodes use to name d (0 before d is registered).
func (d *Desc) ID() uint32 { return d.id }

// localBit marks a Desc number as the tree's own (see Tree.LocalDesc).
const localBit = 1 << 31

// registry holds every registered Desc; entry 0 is the empty Desc.
var registry struct {
	mu    sync.Mutex
	descs atomic.Pointer[[]*Desc]
}

func init() {
	s := []*Desc{{}}
	registry.descs.Store(&s)
}

// Register gives d its number and returns d. Register a Desc once, when
// it is made from a schema or at init; never from input bytes (the
// registry lives as long as the process). Registering twice is a no-op.
func Register(d *Desc) *Desc {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if d.id != 0 {
		return d
	}
	s := *registry.descs.Load()
	d.id = uint32(len(s))
	s = append(s, d)
	registry.descs.Store(&s)
	return d
}

// NewDesc registers and returns a Desc for a node that is not from a
// spec.
func NewDesc(name, typ, about string) *Desc {
	return Register(&Desc{Name: name, Type: typ, About: about})
}

// FieldDesc returns a registered Desc for schema field f, with its note
// kind from the field's name and type.
func FieldDesc(f *schema.Field) *Desc {
	d := &Desc{Name: f.Name, About: f.About, Field: f, Note: NoteFor(f)}
	if f.Type != nil {
		d.Type = f.Type.Name
		d.Struct = f.Type.ElemStruct()
	}
	return Register(d)
}

// NoteFor returns how values of field f are annotated: error codes get
// their names, API keys their API names, millisecond timestamps their
// dates.
func NoteFor(f *schema.Field) NoteKind {
	if f == nil || f.Type == nil {
		return NoteNone
	}
	switch {
	case f.Type.Kind == schema.KindInt16 && IsErrorCode(f.Name):
		return NoteErrorCode
	case f.Type.Kind == schema.KindInt16 && (f.Name == "ApiKey" || f.Name == "RequestApiKey"):
		return NoteAPIKey
	case f.Type.Kind == schema.KindInt64 && IsTimestamp(f.Name):
		return NoteTimestamp
	}
	return NoteNone
}

// IsErrorCode reports whether a field name holds a Kafka error code
// ("ErrorCode", "PartitionErrorCode", ...).
func IsErrorCode(name string) bool { return strings.HasSuffix(name, "ErrorCode") }

// IsTimestamp reports whether an int64 field name holds a point in time in
// milliseconds ("Timestamp", "ExpiryTimestampMs", "LogAppendTimeMs").
func IsTimestamp(name string) bool {
	return strings.Contains(name, "Timestamp") || strings.HasSuffix(name, "TimeMs") && !strings.Contains(name, "Retention")
}

// Row is one annotated span of bytes, a node of a [Tree]. It holds no
// pointers: names, types and descriptions come from its Desc, values are
// raw scalars or a range of the tree's bytes, and the rare extras (a
// decoder's note, a flag, an error, an inflated tree) sit in a side table.
type Row struct {
	// Int is the integer value (ValInt, ValBool, ValCount, ValArray,
	// ValPresence), the bits of a float (ValFloat, see math.Float64bits).
	Int int64
	// Prefix is the raw value of a length prefix (compact N+1, classic N).
	Prefix int64
	// Off and Len are the node's bytes in Tree.Bytes.
	Off, Len int32
	// VOff and VLen are the value's bytes in Tree.Bytes (strings, bytes,
	// uuids, records), unless the side table holds the value.
	VOff, VLen int32
	// Parent, First, Last and Next link the tree: the parent, the first
	// and last child, the next sibling.
	Parent, First, Last, Next ID
	// Desc names the node's [Desc] (see Tree.Desc).
	Desc uint32
	// Index is the element index of an array element, -1 otherwise.
	Index int32
	// Aux is 1 + the index of the node's extras in the side table, 0 for
	// none.
	Aux int32
	Val ValueKind
	Enc Enc
	Cat Category
	// Null marks a null value.
	Null bool
}

// Aux holds what few nodes have.
type Aux struct {
	// Name, Type and About replace the Desc's when not empty ("tag 3",
	// "message v5").
	Name, Type, About string
	// Note is shown after the value when set: a decoder's note ("1
	// batch", "redacted"); it replaces the note of the Desc's NoteKind.
	Note string
	// Flag is a warning about the node: "unknown tag", "non-canonical".
	Flag string
	// Err is set on the node where decoding failed.
	Err error
	// Detached is a tree of its own over derived bytes (the inflated
	// records of a compressed batch).
	Detached *Tree
	// Value holds value bytes that are not in Tree.Bytes (HasValue).
	Value    []byte
	HasValue bool
}

// Tree is the annotated view of one frame (or one message body, or one
// inflated batch): a flat table of nodes over the bytes they annotate.
// Node 0 is the root. Leaf nodes tile the bytes; groups span the union of
// their children.
type Tree struct {
	Nodes []Row
	// Bytes is what the nodes' offsets index.
	Bytes []byte
	// Reg names API keys in notes (NoteAPIKey); nil leaves them unnamed.
	Reg *schema.Registry
	// Sample marks the tree of a reference page's smallest instance
	// (codec.Options.Sample): the zero values of its spec fields get no
	// note from their NoteKind, so that an all-zero page reads bare.
	Sample bool
	aux    []Aux
	local  []*Desc
	// spare holds the detached trees of t's previous use, for its next
	// one to reuse (SpareTree); spareBytes is what their buffers hold.
	spare      []*Tree
	spareBytes int64
}

// Reset empties t for reuse over b, keeping its buffers, and those of
// its detached trees for [Tree.SpareTree].
func (t *Tree) Reset(b []byte) {
	t.Nodes = t.Nodes[:0]
	for i := range t.aux {
		if d := t.aux[i].Detached; d != nil && d != t {
			t.keepSpare(d)
		}
	}
	clear(t.aux)
	t.aux = t.aux[:0]
	t.local = t.local[:0]
	t.Bytes = b
}

// What a tree keeps of its detached trees for its next use: a capture
// loop decodes thousands of compressed batches, each into a tree of its
// own over its inflated bytes. Larger buffers than these go to the
// collector, so that one batch of megabytes is not kept for good.
const (
	maxSpareTrees = 64
	maxSpareBytes = 2 << 20  // of one spare tree's bytes: a batch of Kafka's default 1 MiB, grown by doubling
	maxSpareRows  = 1 << 14  // of one spare tree's rows
	maxSpareTotal = 16 << 20 // of all of a tree's spare trees' buffers: a Fetch response of a dozen partitions' 1 MiB batches, with their rows
	// maxIdleSpares bounds the spares a tree keeps once a decode into it
	// has taken what it needed of them (TrimSpares): a tree in flight
	// (decoded, its line not written yet) holds no more than this of
	// buffers its frame does not use.
	maxIdleSpares = 4 << 20
)

// rowBytes is the size of one Row.
const rowBytes = int64(unsafe.Sizeof(Row{}))

func (t *Tree) keepSpare(d *Tree) {
	if len(t.spare) >= maxSpareTrees {
		return
	}
	if cap(d.Bytes) > maxSpareBytes {
		d.Bytes = nil
	}
	if cap(d.Nodes) > maxSpareRows {
		d.Nodes = nil
	}
	d.spare, d.spareBytes = nil, 0 // its own are not kept (Kafka nests one level)
	n := d.buffers()
	if t.spareBytes+n > maxSpareTotal {
		return
	}
	t.spare = append(t.spare, d)
	t.spareBytes += n
}

// buffers is the size of t's node table and bytes' room.
func (t *Tree) buffers() int64 { return int64(cap(t.Nodes))*rowBytes + int64(cap(t.Bytes)) }

// Retained reports the bytes t's buffers hold for its next use: its node
// table and its spare detached trees' (see [Tree.SpareTree]), but not
// its own Bytes, which are the caller's. A pool of trees counts it
// against its bound.
func (t *Tree) Retained() int64 { return int64(cap(t.Nodes))*rowBytes + t.spareBytes }

// SpareTree returns a tree to hang on a node of t as a detached tree:
// one of the detached trees of t's previous use (until its Reset), with
// its buffers, or else a new one. Its Bytes, the bytes it was last over,
// are not read again: the caller may reuse their room (Bytes[:0]) for
// the new tree's bytes before it resets the tree over them.
//
// It is the spare with the most room for bytes: a frame's batches come
// in no order of size, and a small batch's room handed to a large one
// would be let go and a new one made (allocated, cleared and faulted in),
// while a large room serves a small batch as well. So the spares grow to
// the traffic's large batches and are then reused (within the bounds
// Reset keeps them by).
func (t *Tree) SpareTree() *Tree {
	if k := len(t.spare); k > 0 {
		best := k - 1
		for i := range k - 1 {
			if cap(t.spare[i].Bytes) > cap(t.spare[best].Bytes) {
				best = i
			}
		}
		t.spare[best], t.spare[k-1] = t.spare[k-1], t.spare[best]
		d := t.spare[k-1]
		t.spare[k-1] = nil
		t.spare = t.spare[:k-1]
		t.spareBytes -= d.buffers()
		return d
	}
	return &Tree{}
}

// TrimSpares lets go of t's spares beyond maxIdleSpares bytes, those
// with the least room for bytes first: a decode calls it once it has
// taken what it needed, so that a tree whose last frame needed many
// spares and whose frame now needs few does not hold the rest while its
// frame waits to be written (a capture pipeline has dozens in flight).
func (t *Tree) TrimSpares() {
	if t.spareBytes <= maxIdleSpares {
		return
	}
	slices.SortFunc(t.spare, func(a, b *Tree) int { return cap(b.Bytes) - cap(a.Bytes) })
	var keep int64
	k := 0
	for ; k < len(t.spare); k++ {
		n := t.spare[k].buffers()
		if keep+n > maxIdleSpares {
			break
		}
		keep += n
	}
	clear(t.spare[k:])
	t.spare, t.spareBytes = t.spare[:k], keep
}

// ReturnSpare gives back d, a tree from [Tree.SpareTree] that was not
// hung on t after all (its batch did not inflate), for t's next
// SpareTree, within the bounds that Reset keeps spares by.
func (t *Tree) ReturnSpare(d *Tree) {
	if d != nil && d != t {
		t.keepSpare(d)
	}
}

// Len returns the number of nodes.
func (t *Tree) Len() int { return len(t.Nodes) }

// Root returns the root (None for an empty tree).
func (t *Tree) Root() ID {
	if t == nil || len(t.Nodes) == 0 {
		return None
	}
	return 0
}

// N returns node id. The pointer is good until the next Add.
func (t *Tree) N(id ID) *Row { return &t.Nodes[id] }

// Add appends a node with Desc d under parent (None for the root) at
// offset off and returns its ID. Len, the value and the extras are set by
// the caller.
func (t *Tree) Add(parent ID, d *Desc, off int, cat Category) ID {
	id := ID(len(t.Nodes))
	if len(t.Nodes) == cap(t.Nodes) {
		t.grow()
	}
	t.Nodes = t.Nodes[:id+1] // only the length is stored
	nodes := t.Nodes
	// Filling the row in place, field by field, is faster than storing a
	// composite literal (which is built on the stack and copied).
	n := &nodes[id]
	n.Int, n.Prefix = 0, 0
	n.Off, n.Len, n.VOff, n.VLen = int32(off), 0, 0, 0
	n.Parent, n.First, n.Last, n.Next = parent, None, None, None
	n.Desc, n.Index, n.Aux = d.id, -1, 0
	n.Val, n.Enc, n.Cat, n.Null = ValNone, EncNone, cat, false
	if parent != None {
		p := &nodes[parent]
		if p.Last == None {
			p.First = id
		} else {
			nodes[p.Last].Next = id
		}
		p.Last = id
	}
	return id
}

// AddLeaf is Add for a leaf whose length and integer value are known: it
// sets the row's Len, Val and Int too.
func (t *Tree) AddLeaf(parent ID, d *Desc, off, n int, cat Category, val ValueKind, v int64) ID {
	id := ID(len(t.Nodes))
	if len(t.Nodes) == cap(t.Nodes) {
		t.grow()
	}
	t.Nodes = t.Nodes[:id+1]
	nodes := t.Nodes
	r := &nodes[id]
	r.Int, r.Prefix = v, 0
	r.Off, r.Len, r.VOff, r.VLen = int32(off), int32(n), 0, 0
	r.Parent, r.First, r.Last, r.Next = parent, None, None, None
	r.Desc, r.Index, r.Aux = d.id, -1, 0
	r.Val, r.Enc, r.Cat, r.Null = val, EncNone, cat, false
	if parent != None {
		p := &nodes[parent]
		if p.Last == None {
			p.First = id
		} else {
			nodes[p.Last].Next = id
		}
		p.Last = id
	}
	return id
}

// AddKids appends n rows (n > 0) as the last children of parent, in
// order, and returns the first one's ID (the others follow it). Each row
// is as Add leaves it, with Desc 0 and offset 0: the caller sets Desc
// (with [Tree.SetDesc] or Row.Desc = d.ID()), Off, Len and the value. It
// is for runs of leaves whose bytes are known to be there (the elements
// of an integer array, a struct's fixed-width fields), added in one pass.
func (t *Tree) AddKids(parent ID, n int, cat Category) ID {
	first := ID(len(t.Nodes))
	if cap(t.Nodes)-len(t.Nodes) < n {
		t.Nodes = slices.Grow(t.Nodes, n)
	}
	t.Nodes = t.Nodes[:int(first)+n]
	rows := t.Nodes[first:]
	for i := range rows {
		r := &rows[i]
		r.Int, r.Prefix = 0, 0
		r.Off, r.Len, r.VOff, r.VLen = 0, 0, 0, 0
		r.Parent, r.First, r.Last, r.Next = parent, None, None, first+ID(i)+1
		r.Desc, r.Index, r.Aux = 0, -1, 0
		r.Val, r.Enc, r.Cat, r.Null = ValNone, EncNone, cat, false
	}
	rows[n-1].Next = None
	t.link(parent, first, first+ID(n)-1)
	return first
}

// AddElems appends n leaves (n > 0) as the last children of parent: the
// elements 0..n-1 of an array of fixed-width values, size bytes each
// from offset off, with Desc d and value kind val. It returns the first
// one's ID (the others follow it); the caller sets their values.
func (t *Tree) AddElems(parent ID, d *Desc, off, size, n int, cat Category, val ValueKind) ID {
	first := ID(len(t.Nodes))
	if cap(t.Nodes)-len(t.Nodes) < n {
		t.Nodes = slices.Grow(t.Nodes, n)
	}
	t.Nodes = t.Nodes[:int(first)+n]
	rows := t.Nodes[first:]
	desc := d.id
	for i := range rows {
		r := &rows[i]
		r.Int, r.Prefix = 0, 0
		r.Off, r.Len, r.VOff, r.VLen = int32(off+i*size), int32(size), 0, 0
		r.Parent, r.First, r.Last, r.Next = parent, None, None, first+ID(i)+1
		r.Desc, r.Index, r.Aux = desc, int32(i), 0
		r.Val, r.Enc, r.Cat, r.Null = val, EncNone, cat, false
	}
	rows[n-1].Next = None
	t.link(parent, first, first+ID(n)-1)
	return first
}

// link makes first..last (siblings already linked) the last children of
// parent.
func (t *Tree) link(parent, first, last ID) {
	if parent == None {
		return
	}
	p := &t.Nodes[parent]
	if p.Last == None {
		p.First = first
	} else {
		t.Nodes[p.Last].Next = first
	}
	p.Last = last
}

// grow makes room for more rows (out of line, so that Add stays small).
//
//go:noinline
func (t *Tree) grow() {
	id := len(t.Nodes)
	t.Nodes = append(t.Nodes, Row{})[:id]
}

// CutKids unlinks the children of id (their rows stay in the table but
// are no longer reachable), so that others can be added in their place.
func (t *Tree) CutKids(id ID) {
	n := &t.Nodes[id]
	n.First, n.Last = None, None
}

// LocalDesc gives d a number valid in t only, for descriptors made from
// input (a name read from the bytes), which must not be registered.
func (t *Tree) LocalDesc(d *Desc) uint32 {
	t.local = append(t.local, d)
	return localBit | uint32(len(t.local)-1)
}

// Desc returns the descriptor of node id.
func (t *Tree) Desc(id ID) *Desc {
	n := t.Nodes[id].Desc
	if n&localBit != 0 {
		return t.local[n&^localBit]
	}
	s := *registry.descs.Load()
	if int(n) < len(s) {
		return s[n]
	}
	return s[0]
}

// Extra returns the extras of node id, creating them when make is true;
// nil when the node has none and make is false.
func (t *Tree) Extra(id ID, make bool) *Aux {
	n := &t.Nodes[id]
	if n.Aux == 0 {
		if !make {
			return nil
		}
		t.aux = append(t.aux, Aux{})
		n.Aux = int32(len(t.aux))
	}
	return &t.aux[n.Aux-1]
}

func (t *Tree) aux0(id ID) *Aux {
	if a := t.Nodes[id].Aux; a != 0 {
		return &t.aux[a-1]
	}
	return nil
}

// Name returns the node's name ("Resources", "AlterConfigsResource").
func (t *Tree) Name(id ID) string {
	if a := t.aux0(id); a != nil && a.Name != "" {
		return a.Name
	}
	return t.Desc(id).Name
}

// DisplayName is Name, with "[i]" for array elements.
func (t *Tree) DisplayName(id ID) string {
	if t.Nodes[id].Index < 0 {
		return t.Name(id)
	}
	return string(t.AppendDisplayName(nil, id))
}

// AppendDisplayName appends the node's DisplayName to dst.
func (t *Tree) AppendDisplayName(dst []byte, id ID) []byte {
	dst = append(dst, t.Name(id)...)
	if i := t.Nodes[id].Index; i >= 0 {
		dst = append(strconv.AppendInt(append(dst, '['), int64(i), 10), ']')
	}
	return dst
}

// Type returns the node's type as shown ("int16", "[]AlterConfigsResource").
func (t *Tree) Type(id ID) string {
	if a := t.aux0(id); a != nil && a.Type != "" {
		return a.Type
	}
	return t.Desc(id).Type
}

// About returns the node's description.
func (t *Tree) About(id ID) string {
	if a := t.aux0(id); a != nil && a.About != "" {
		return a.About
	}
	return t.Desc(id).About
}

// Flag returns the node's warning, if any.
func (t *Tree) Flag(id ID) string {
	if a := t.aux0(id); a != nil {
		return a.Flag
	}
	return ""
}

// Err returns the error set on the node, if any.
func (t *Tree) Err(id ID) error {
	if a := t.aux0(id); a != nil {
		return a.Err
	}
	return nil
}

// Detached returns the inflated tree hung on the node, if any.
func (t *Tree) Detached(id ID) *Tree {
	if a := t.aux0(id); a != nil {
		return a.Detached
	}
	return nil
}

// ValueBytes returns the value bytes of a string, bytes, uuid or records
// node (nil for others).
func (t *Tree) ValueBytes(id ID) []byte {
	if a := t.aux0(id); a != nil && a.HasValue {
		return a.Value
	}
	n := &t.Nodes[id]
	if n.VLen == 0 || int(n.VOff)+int(n.VLen) > len(t.Bytes) {
		return nil
	}
	return t.Bytes[n.VOff : n.VOff+n.VLen : n.VOff+n.VLen]
}

// Note returns the note shown after the node's value: the extras' note
// when set, else the note of the Desc's NoteKind for the value.
func (t *Tree) Note(id ID) string {
	if a := t.aux0(id); a != nil && a.Note != "" {
		return a.Note
	}
	n := &t.Nodes[id]
	if n.Val != ValInt {
		return ""
	}
	d := t.Desc(id)
	if t.Sample && n.Int == 0 && d.Field != nil {
		return ""
	}
	switch d.Note {
	case NoteErrorCode:
		return ErrorName(int16(n.Int))
	case NoteAPIKey:
		if t.Reg != nil {
			if api, ok := t.Reg.API(int16(n.Int)); ok {
				return api.Name
			}
		}
		return "unknown API"
	case NoteTimestamp:
		return TimestampNote(n.Int)
	}
	return ""
}

// Kids returns the children of id in order.
func (t *Tree) Kids(id ID) []ID {
	var out []ID
	for k := t.Nodes[id].First; k != None; k = t.Nodes[k].Next {
		out = append(out, k)
	}
	return out
}

// IsLeaf reports whether id has no children.
func (t *Tree) IsLeaf(id ID) bool { return t.Nodes[id].First == None }

// Walk calls f for id and every descendant, depth first, parents first.
// The walk keeps its own stack, so deep trees do not grow the goroutine's.
func (t *Tree) Walk(id ID, f func(id ID, depth int)) {
	if id == None {
		return
	}
	depth := 0
	for x := id; ; {
		f(x, depth)
		if k := t.Nodes[x].First; k != None {
			x, depth = k, depth+1
			continue
		}
		for x != id && t.Nodes[x].Next == None {
			x, depth = t.Nodes[x].Parent, depth-1
		}
		if x == id {
			return
		}
		x = t.Nodes[x].Next
	}
}

// Leaves returns the leaves under id in byte order.
func (t *Tree) Leaves(id ID) []ID {
	var out []ID
	t.Walk(id, func(x ID, _ int) {
		if t.IsLeaf(x) {
			out = append(out, x)
		}
	})
	return out
}

// LeafAt returns the leaf under id whose bytes hold offset off, or None.
func (t *Tree) LeafAt(id ID, off int) ID {
	found := None
	t.Walk(id, func(x ID, _ int) {
		n := &t.Nodes[x]
		if found == None && n.First == None && int(n.Off) <= off && off < int(n.Off+n.Len) {
			found = x
		}
	})
	return found
}

// Path is the node's path in the one syntax errors and nodes share: the
// names from the root's child down, dotted, with an array element written
// as its array's path and "[i]" ("AlterConfigsRequest.Resources[0].ResourceName").
// An indexed node whose parent is not an array or a records field (a
// Record of a RecordBatch) keeps its name: "Records[0].Record[1].key".
// The root's path is "".
func (t *Tree) Path(id ID) string {
	return string(t.AppendPath(nil, id))
}

// AppendPath appends [Tree.Path] to dst.
func (t *Tree) AppendPath(dst []byte, id ID) []byte {
	var stack [64]ID
	up := stack[:0]
	for x := id; x != None && t.Nodes[x].Parent != None; x = t.Nodes[x].Parent {
		up = append(up, x)
	}
	first := true
	for i := len(up) - 1; i >= 0; i-- {
		x := up[i]
		n := &t.Nodes[x]
		if n.Index >= 0 && inArray(t.Nodes[n.Parent].Val) {
			dst = append(strconv.AppendInt(append(dst, '['), int64(n.Index), 10), ']')
			first = false
			continue
		}
		if !first {
			dst = append(dst, '.')
		}
		first = false
		dst = append(dst, t.Name(x)...)
		if n.Index >= 0 { // an element of a struct, not of an array: a record of a batch
			dst = append(strconv.AppendInt(append(dst, '['), int64(n.Index), 10), ']')
		}
	}
	return dst
}

// inArray reports whether the children of a node of kind v are written
// as bare indexes in paths: those of arrays and records fields.
func inArray(v ValueKind) bool { return v == ValArray || v == ValRecords }

// value is the row's value for formatting, without its note (a typed
// JSON value carries none); view adds the note for the text.
func (t *Tree) value(id ID) valueView {
	n := &t.Nodes[id]
	v := valueView{Int: n.Int, Prefix: n.Prefix, Val: n.Val, Enc: n.Enc, Null: n.Null}
	switch n.Val {
	case ValFloat:
		v.Float = math.Float64frombits(uint64(n.Int))
	case ValString, ValBytes, ValUUID, ValRecords, ValText:
		v.Bytes = t.ValueBytes(id)
	}
	return v
}

func (t *Tree) view(id ID) valueView {
	v := t.value(id)
	v.Note = t.Note(id)
	return v
}

// ValueText formats the node's value the way the object tree shows it,
// note included: "= 33 (AlterConfigs)", `= "" (compact, len+1=1)`,
// "= 1 element". Groups without a value give "".
func (t *Tree) ValueText(id ID) string {
	if t.Nodes[id].Val == ValNone {
		return ""
	}
	var buf [96]byte
	return string(t.AppendValueText(buf[:0], id))
}

// AppendValueText appends [Tree.ValueText] to dst.
func (t *Tree) AppendValueText(dst []byte, id ID) []byte { return t.view(id).appendText(dst) }

// AppendValueJSON appends the node's value as typed JSON (numbers, booleans,
// strings, hex for bytes, uuids, null; notes are left to the text); ok is false for nodes with no value of their
// own.
func (t *Tree) AppendValueJSON(dst []byte, id ID) (_ []byte, ok bool) {
	return t.value(id).appendJSON(dst)
}

// SetFloat stores f as the node's value.
func (n *Row) SetFloat(f float64) { n.Val, n.Int = ValFloat, int64(math.Float64bits(f)) }

// Float returns the node's float value.
func (n *Row) Float() float64 { return math.Float64frombits(uint64(n.Int)) }

// DetachedSize reports the bytes and nodes of the trees detached from t
// (the inflated records of its compressed batches), and theirs in turn:
// what a rendering of t writes beyond t's own bytes and nodes.
func (t *Tree) DetachedSize() (bytes, nodes int) {
	for i := range t.aux {
		if d := t.aux[i].Detached; d != nil && d != t {
			b, n := d.DetachedSize()
			bytes += len(d.Bytes) + b
			nodes += d.Len() + n
		}
	}
	return bytes, nodes
}
