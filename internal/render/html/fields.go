package html

import (
	"fmt"
	"strings"

	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// fieldNotes describes what the tree shows beside a field, from its
// descriptor: the versions it exists in and, for an error code, the link
// to its entry.
type fieldNotes struct {
	since   string // "since v3", "until v5", "v2-v4"
	errHref string
}

// bodyFields maps the tree nodes of a message body to their field
// descriptors. The page tree names a field's node after the field and an
// array element's node "<Struct>[i]", so the walk pairs them by name
// below the body node (the node whose path is the message name).
func bodyFields(root *page.Node, m *schema.Message) map[*page.Node]*schema.Field {
	if root == nil || m == nil || m.Body == nil {
		return nil
	}
	out := map[*page.Node]*schema.Field{}
	for _, n := range root.Children {
		if n.Path == m.Name {
			walkFields(n, m.Body, out, 0)
		}
	}
	return out
}

func walkFields(n *page.Node, s *schema.Struct, out map[*page.Node]*schema.Field, depth int) {
	if depth > 64 {
		return
	}
	for _, c := range n.Children {
		f := fieldByName(s, c.Name)
		if f == nil {
			continue
		}
		out[c] = f
		st := f.Type.ElemStruct()
		if st == nil {
			continue
		}
		if f.Type.Kind != schema.KindArray {
			walkFields(c, st, out, depth+1)
			continue
		}
		for _, e := range c.Children {
			if strings.HasPrefix(e.Name, st.Name+"[") {
				walkFields(e, st, out, depth+1)
			}
		}
	}
}

func fieldByName(s *schema.Struct, name string) *schema.Field {
	for _, f := range s.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// notesFor returns the notes of a field of message m shown with value
// text; error codes link to errorsPath when it is set.
func notesFor(f *schema.Field, m *schema.Message, n *page.Node, errorsPath string) fieldNotes {
	var fn fieldNotes
	fv := f.Versions.Intersect(m.Valid)
	switch {
	case fv.Empty() || (fv.Lo <= m.Valid.Lo && fv.Hi >= m.Valid.Hi):
	case fv.Lo > m.Valid.Lo && fv.Hi >= m.Valid.Hi:
		fn.since = fmt.Sprintf("since v%d", fv.Lo)
	case fv.Lo <= m.Valid.Lo:
		fn.since = fmt.Sprintf("until v%d", fv.Hi)
	default:
		fn.since = fmt.Sprintf("v%d-v%d", fv.Lo, fv.Hi)
	}
	if errorsPath != "" && f.Type.Kind == schema.KindInt16 && span.IsErrorCode(f.Name) {
		var code int16
		if _, err := fmt.Sscanf(strings.TrimPrefix(n.Value, "= "), "%d", &code); err == nil {
			fn.errHref = errorsPath + "#" + span.ErrorName(code)
			if span.ErrorName(code) == "unknown error code" {
				fn.errHref = errorsPath
			}
		}
	}
	return fn
}
