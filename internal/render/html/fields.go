package html

import (
	"fmt"

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

// sinceNote says in which versions of message m field f exists, when not
// in all of them: "since v3", "until v5", "v2-v4".
func sinceNote(f *schema.Field, m *schema.Message) string {
	fv := f.Versions.Intersect(m.Valid)
	switch {
	case fv.Empty() || (fv.Lo <= m.Valid.Lo && fv.Hi >= m.Valid.Hi):
		return ""
	case fv.Lo > m.Valid.Lo && fv.Hi >= m.Valid.Hi:
		return fmt.Sprintf("since v%d", fv.Lo)
	case fv.Lo <= m.Valid.Lo:
		return fmt.Sprintf("until v%d", fv.Hi)
	default:
		return fmt.Sprintf("v%d-v%d", fv.Lo, fv.Hi)
	}
}

// errorHref links the value of an error-code node (a descriptor whose
// note is span.NoteErrorCode) to its entry on the errors page at
// errorsPath: the entry named after the code, or the page itself for a
// code Kafka does not define. "" for other nodes or when errorsPath is
// empty.
func errorHref(t *span.Tree, id span.ID, errorsPath string) string {
	n := t.N(id)
	if errorsPath == "" || n.Val != span.ValInt || t.Desc(id).Note != span.NoteErrorCode {
		return ""
	}
	name := span.ErrorName(int16(n.Int))
	if name == "unknown error code" {
		return errorsPath
	}
	return errorsPath + "#" + name
}

// notesFor returns the notes of node id, a field of message m, from its
// descriptor.
func notesFor(t *span.Tree, id span.ID, m *schema.Message, errorsPath string) fieldNotes {
	fn := fieldNotes{errHref: errorHref(t, id, errorsPath)}
	if f := t.Desc(id).Field; f != nil && t.N(id).Index < 0 {
		fn.since = sinceNote(f, m)
	}
	return fn
}
