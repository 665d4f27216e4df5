package schema

import (
	"errors"
	"strings"

	"github.com/manifester/manifester/internal/spec"
)

// ErrRecursive is the cause when a struct type holds itself, directly or
// through other structs: its smallest instance (every struct present, every
// array one element) would never end.
var ErrRecursive = errors.New("recursive struct type")

// ErrTooLarge is the cause when a message's structs nest too deeply or its
// smallest instance would hold too many fields.
var ErrTooLarge = errors.New("message too large")

// Limits on the struct graph of one message. Kafka's own messages stay far
// below them (up to trunk the deepest body nests 6 struct levels and the
// largest smallest instance has 100 fields); a crafted spec that holds a
// struct twice per level would otherwise double its smallest instance at
// every level.
const (
	// MaxStructDepth is how deeply struct fields may nest inside a body.
	MaxStructDepth = 64
	// MaxInstanceFields bounds the fields of a message's smallest instance
	// (counted over all versions: every field, every array one element).
	MaxInstanceFields = 1 << 14
	// InstanceFieldsPerField and InstanceFieldsBase bound the smallest
	// instance in proportion to the spec as well: at most
	// InstanceFieldsBase plus InstanceFieldsPerField per field the message
	// declares (in its body and its structs). Every version's page shows
	// the instance, so 2 KB of structs holding the next twice (8190
	// fields) made a site of 1.8 GB. Kafka's instances hold at most 2.25
	// fields per field declared.
	InstanceFieldsPerField = 8
	InstanceFieldsBase     = 128
)

// structGraph walks the struct references of one message once (each struct
// is visited once, so the walk is linear in the spec), rejecting cycles and
// measuring the depth and smallest-instance size of every struct.
type structGraph struct {
	b       *builder
	typePos map[*Field]spec.Pos
	state   map[*Struct]uint8 // 0 unvisited, 1 on the current path, 2 done
	depth   map[*Struct]int   // struct levels at and below the struct
	size    map[*Struct]int   // fields in its smallest instance
	root    *Struct           // where the current walk started
	path    []edge            // the current path, for the cycle message
	limit   int               // the most fields the smallest instance may hold
	failed  bool
}

type edge struct {
	from  *Struct
	field *Field
}

// checkStructGraph reports the first recursive struct type (at the field
// whose type closes the cycle) or the first struct too deep or too large.
func (b *builder) checkStructGraph(m *Message) {
	g := &structGraph{b: b, typePos: b.typePos, state: map[*Struct]uint8{}, depth: map[*Struct]int{}, size: map[*Struct]int{}}
	roots := append([]*Struct{m.Body}, m.Structs...)
	declared := 0
	for _, s := range roots {
		declared += len(s.Fields)
	}
	g.limit = min(MaxInstanceFields, InstanceFieldsBase+InstanceFieldsPerField*declared)
	for _, s := range roots {
		if g.failed {
			return
		}
		if g.state[s] == 0 {
			g.root = s
			g.visit(s)
		}
	}
}

func (g *structGraph) visit(s *Struct) {
	g.state[s] = 1
	depth, size := 1, 0
	for _, f := range s.Fields {
		if g.failed {
			return
		}
		size++
		if f.Type == nil {
			continue
		}
		t := f.Type.ElemStruct()
		if t == nil {
			continue
		}
		switch g.state[t] {
		case 1:
			g.cycle(s, f, t)
			return
		case 0:
			g.path = append(g.path, edge{s, f})
			g.visit(t)
			g.path = g.path[:len(g.path)-1]
			if g.failed {
				return
			}
		}
		depth = max(depth, 1+g.depth[t])
		size += g.size[t]
		switch {
		case depth > MaxStructDepth:
			g.fail(f, ErrTooLarge, "structs nest more than %d levels deep here (%s holds %s, %d levels)", MaxStructDepth, s.Name, t.Name, g.depth[t])
			return
		case size > g.limit:
			g.fail(f, ErrTooLarge, "the smallest instance of %s would hold more than %d fields (%s adds %d): %d per field the message declares, plus %d",
				s.Name, g.limit, f.Name, g.size[t], InstanceFieldsPerField, InstanceFieldsBase)
			return
		}
	}
	g.state[s], g.depth[s], g.size[s] = 2, depth, size
}

// cycle reports the field of s whose type t closes a cycle, naming the
// whole cycle: "Node.Next -> Node".
func (g *structGraph) cycle(s *Struct, f *Field, t *Struct) {
	start := len(g.path)
	for i := len(g.path) - 1; i >= 0; i-- {
		if g.path[i].from == t {
			start = i
			break
		}
	}
	var names, through []string
	for _, e := range g.path[start:] {
		names = append(names, e.from.Name+"."+e.field.Name)
		if e.from != t {
			through = append(through, e.from.Name)
		}
	}
	if s != t {
		through = append(through, s.Name)
	}
	names = append(names, s.Name+"."+f.Name, t.Name)
	how := "holds itself"
	if len(through) > 0 {
		how += " through " + strings.Join(through, ", ")
	}
	g.fail(f, ErrRecursive, "struct %s %s (%s): its smallest instance would never end", t.Name, how, strings.Join(names, " -> "))
}

func (g *structGraph) fail(f *Field, kind error, format string, args ...any) {
	g.failed = true
	pos, ok := g.typePos[f]
	if !ok {
		pos = f.Pos
	}
	g.b.errf(pos, g.fieldPath(f), kind, format, args...)
}

// fieldPath is the path of f as the builder writes it: the field names
// along the current walk, under the common struct's name when the walk
// started at one.
func (g *structGraph) fieldPath(f *Field) string {
	path := ""
	if g.root.Common {
		path = g.root.Name
	}
	for _, e := range g.path {
		path = join(path, e.field.Name)
	}
	return join(path, f.Name)
}
