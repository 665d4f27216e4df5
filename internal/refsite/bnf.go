package refsite

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/manifester/manifester/internal/schema"
)

// Production is one line of a message grammar: Name => RHS, indented by
// Depth.
type Production struct {
	Depth int
	Name  string
	RHS   string
}

// String formats the production as the protocol guide does.
func (p Production) String() string {
	return strings.Repeat("  ", p.Depth) + p.Name + " => " + p.RHS
}

// maxGrammarDepth bounds the grammar's nesting; checked specs nest far
// less, and a crafted one cannot make the walk run away.
const maxGrammarDepth = 64

// Grammar returns the grammar of message m at version v in the notation of
// Kafka's protocol guide: the first production is "<API> Request (Version:
// v) => fields...", then one production per field (a struct or array field's
// production lists its own fields, indented below it). Field names are
// snake_case; tagged fields are left out, every struct of a flexible version
// ends in _tagged_fields.
func Grammar(api, kind string, m *schema.Message, v int16) []Production {
	if m == nil || m.Body == nil || !m.Valid.Contains(v) {
		return nil
	}
	g := &grammar{m: m, v: v, flexible: m.IsFlexible(v)}
	head := fmt.Sprintf("%s %s (Version: %d)", api, kind, v)
	g.out = append(g.out, Production{})
	g.out[0] = Production{Name: head, RHS: g.structRHS(m.Body, 1)}
	return g.out
}

type grammar struct {
	m        *schema.Message
	v        int16
	flexible bool
	out      []Production
}

// structRHS returns the right-hand side of a struct and appends the
// productions of its fields at depth.
func (g *grammar) structRHS(s *schema.Struct, depth int) string {
	var rhs []string
	for _, f := range s.Fields {
		if !f.Versions.Contains(g.v) || f.IsTagged(g.v) {
			continue
		}
		name := SnakeCase(f.Name)
		if f.Type.Kind == schema.KindArray {
			rhs = append(rhs, "["+name+"]")
		} else {
			rhs = append(rhs, name)
		}
		g.field(f, name, depth)
	}
	if g.flexible {
		rhs = append(rhs, "_tagged_fields")
	}
	if len(rhs) == 0 {
		return "(empty)"
	}
	return strings.Join(rhs, " ")
}

func (g *grammar) field(f *schema.Field, name string, depth int) {
	i := len(g.out)
	g.out = append(g.out, Production{Depth: depth, Name: name})
	if st := f.Type.ElemStruct(); st != nil {
		if depth >= maxGrammarDepth {
			g.out[i].RHS = "(nested too deeply)"
			return
		}
		g.out[i].RHS = g.structRHS(st, depth+1)
		return
	}
	t := f.Type
	if t.Kind == schema.KindArray && t.Elem != nil {
		t = t.Elem
	}
	g.out[i].RHS = g.typeName(f, t)
}

// typeName is the guide's name of a primitive type at the grammar's
// version: COMPACT_ in flexible versions, NULLABLE_ where null is legal.
func (g *grammar) typeName(f *schema.Field, t *schema.Type) string {
	compact := f.IsCompact(g.m.Flexible, g.v)
	nullable := f.IsNullable(g.v) && f.Type.Kind != schema.KindArray
	pre := ""
	if compact {
		pre = "COMPACT_"
	}
	switch t.Kind {
	case schema.KindBool:
		return "BOOLEAN"
	case schema.KindString:
		if nullable {
			return pre + "NULLABLE_STRING"
		}
		return pre + "STRING"
	case schema.KindBytes:
		if nullable {
			return pre + "NULLABLE_BYTES"
		}
		return pre + "BYTES"
	case schema.KindRecords:
		return pre + "RECORDS"
	}
	return strings.ToUpper(t.Kind.String())
}

// SnakeCase turns a spec field name into the guide's form:
// "ResourceName" -> "resource_name", "TopicID" -> "topic_id".
func SnakeCase(name string) string {
	rs := []rune(name)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
				(unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1]))) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// FieldSpan is a field's existence across versions, as a page shows it:
// "since v3", "until v5", "v2-v4" or "" for a field of every version of
// the message.
func FieldSpan(f *schema.Field, m *schema.Message) string {
	fv := f.Versions.Intersect(m.Valid)
	if fv.Empty() || (fv.Lo <= m.Valid.Lo && fv.Hi >= m.Valid.Hi) {
		return ""
	}
	switch {
	case fv.Lo > m.Valid.Lo && fv.Hi >= m.Valid.Hi:
		return fmt.Sprintf("since v%d", fv.Lo)
	case fv.Lo <= m.Valid.Lo:
		return fmt.Sprintf("until v%d", fv.Hi)
	}
	return fmt.Sprintf("v%d-v%d", fv.Lo, fv.Hi)
}
