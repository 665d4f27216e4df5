package cli

import (
	"testing"

	"github.com/manifester/manifester/internal/span"
)

// TestUUIDNotes: a note changed, added or taken off a uuid row, or a uuid
// row added, makes the notes differ; notes on other rows do not count.
func TestUUIDNotes(t *testing.T) {
	d := span.NewDesc("TopicId", "uuid", "")
	build := func() *span.Tree {
		tr := &span.Tree{}
		root := tr.Add(span.None, span.NewDesc("Root", "message", ""), 0, span.CatNone)
		for range 3 {
			id := tr.Add(root, d, 0, span.CatNone)
			tr.N(id).Val = span.ValUUID
		}
		other := tr.Add(root, span.NewDesc("Name", "string", ""), 0, span.CatNone)
		tr.N(other).Val = span.ValString
		return tr
	}
	tr := build()
	tr.Extra(2, true).Note = `topic "a"`
	notes := uuidNotes(nil, tr)
	if len(notes) != 3 || notes[1] != `topic "a"` || !sameUUIDNotes(notes, tr) {
		t.Fatalf("notes %q", notes)
	}
	tr.Extra(4, true).Note = "not a uuid row"
	tr.Extra(3, true) // extras without a note
	if !sameUUIDNotes(notes, tr) {
		t.Error("a note on another row, or empty extras, changed the uuid notes")
	}
	for name, change := range map[string]func(*span.Tree){
		"changed":   func(tr *span.Tree) { tr.Extra(2, true).Note = `topic "b"` },
		"added":     func(tr *span.Tree) { tr.Extra(1, true).Note = `topic "c"` },
		"taken off": func(tr *span.Tree) { tr.Extra(2, true).Note = "" },
		"new row":   func(tr *span.Tree) { tr.N(tr.Add(0, d, 0, span.CatNone)).Val = span.ValUUID },
	} {
		tr := build()
		tr.Extra(2, true).Note = `topic "a"`
		change(tr)
		if sameUUIDNotes(notes, tr) {
			t.Errorf("a note %s: the notes are the same", name)
		}
	}
	if !sameUUIDNotes(nil, nil) || sameUUIDNotes([]string{""}, nil) {
		t.Error("nil tree")
	}
}
