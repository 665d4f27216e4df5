package cli

import "github.com/manifester/manifester/internal/span"

// uuidNotes appends the notes of t's uuid rows, in table order ("" for a
// row without one): the rows whose notes naming topics
// selector.Reannotate may change. A frame's line is a function of its
// tree, so a frame whose uuid notes are the same after Reannotate need
// not be written again.
func uuidNotes(dst []string, t *span.Tree) []string {
	if t == nil {
		return dst
	}
	for id := span.ID(0); int(id) < t.Len(); id++ {
		if t.N(id).Val == span.ValUUID {
			dst = append(dst, t.Note(id))
		}
	}
	return dst
}

// sameUUIDNotes reports whether t's uuid rows have the notes uuidNotes
// listed.
func sameUUIDNotes(notes []string, t *span.Tree) bool {
	if t == nil {
		return len(notes) == 0
	}
	i := 0
	for id := span.ID(0); int(id) < t.Len(); id++ {
		if t.N(id).Val != span.ValUUID {
			continue
		}
		if i >= len(notes) || t.Note(id) != notes[i] {
			return false
		}
		i++
	}
	return i == len(notes)
}
