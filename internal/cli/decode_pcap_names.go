package cli

import (
	"iter"

	"github.com/manifester/manifester/internal/span"
)

// uuidRows yields t's uuid rows, in table order: the rows whose notes
// naming topics selector.Reannotate may change (none for a nil t).
func uuidRows(t *span.Tree) iter.Seq[span.ID] {
	return func(yield func(span.ID) bool) {
		if t == nil {
			return
		}
		for id := span.ID(0); int(id) < t.Len(); id++ {
			if t.N(id).Val == span.ValUUID && !yield(id) {
				return
			}
		}
	}
}

// uuidNotes appends the notes of t's uuid rows ("" for a row without
// one). A frame's line is a function of its tree, so a frame whose uuid
// notes are the same after Reannotate need not be written again.
func uuidNotes(dst []string, t *span.Tree) []string {
	for id := range uuidRows(t) {
		dst = append(dst, t.Note(id))
	}
	return dst
}

// sameUUIDNotes reports whether t's uuid rows have the notes uuidNotes
// listed.
func sameUUIDNotes(notes []string, t *span.Tree) bool {
	i := 0
	for id := range uuidRows(t) {
		if i >= len(notes) || t.Note(id) != notes[i] {
			return false
		}
		i++
	}
	return i == len(notes)
}
