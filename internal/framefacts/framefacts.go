// Package framefacts reads what a decoded frame names that filters and
// statistics ask about: the topics it carries (by name, and by id where
// the id's name is known) and every error code in it, however deeply
// nested. It walks the decoded values with their schema, so it works on
// frames decoded without span trees.
package framefacts

import (
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// Facts are the topics and error codes of one frame.
type Facts struct {
	// Topics are the distinct topic names, in the order they first appear.
	Topics []string
	// Errors are the error codes, one per error-code field, in order.
	Errors []int16
}

// TopicName resolves a topic id to its name (false when unknown).
type TopicName func(id [16]byte) (string, bool)

// maxDepth bounds the walk, as the codec bounds nesting.
const maxDepth = 64

// Of returns the facts of f (nil-safe: a frame without a body has none).
// names resolves topic ids; nil leaves ids unresolved.
func Of(f *codec.Frame, names TopicName) Facts {
	var out Facts
	if f == nil || f.API == nil {
		return out
	}
	m := f.Message()
	if m == nil || m.Body == nil {
		return out
	}
	w := walker{v: f.Version, names: names, out: &out}
	w.structValue(m.Body, &f.Body, 0)
	return out
}

type walker struct {
	v     int16
	names TopicName
	out   *Facts
	seen  map[string]bool
}

func (w *walker) topic(name string) {
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if !w.seen[name] {
		w.seen[name] = true
		w.out.Topics = append(w.out.Topics, name)
	}
}

func (w *walker) structValue(s *schema.Struct, val *codec.Value, depth int) {
	if depth > maxDepth || val.IsNull() || len(val.Kids()) != len(s.Fields) {
		return
	}
	for _, f := range s.Fields {
		if f.Versions.Contains(w.v) {
			w.value(f, f.Type, &val.Kids()[f.Index], depth)
		}
	}
}

func (w *walker) value(f *schema.Field, t *schema.Type, val *codec.Value, depth int) {
	switch t.Kind {
	case schema.KindInt16:
		if span.IsErrorCode(f.Name) {
			w.out.Errors = append(w.out.Errors, int16(val.Int()))
		}
	case schema.KindString:
		if f.EntityType == "topicName" && !val.IsNull() && len(val.Bytes()) > 0 {
			w.topic(string(val.Bytes()))
		}
	case schema.KindUUID:
		if IsTopicID(f) && w.names != nil && len(val.Bytes()) == 16 {
			if name, ok := w.names([16]byte(val.Bytes())); ok {
				w.topic(name)
			}
		}
	case schema.KindArray:
		if t.Elem == nil || val.IsNull() {
			return
		}
		switch t.Elem.Kind {
		case schema.KindStruct, schema.KindString, schema.KindUUID, schema.KindInt16:
			for i := range val.Kids() {
				w.value(f, t.Elem, &val.Kids()[i], depth+1)
			}
		}
	case schema.KindStruct:
		if t.Struct != nil {
			w.structValue(t.Struct, val, depth+1)
		}
	}
}

// IsTopicID reports whether a field holds a topic id.
func IsTopicID(f *schema.Field) bool { return f.Type.Kind == schema.KindUUID && f.Name == "TopicId" }

// OfTree returns the facts of a frame read from its tree t (the rows of
// its body, each known by its field's descriptor), for front ends that
// decode once, with spans. It finds what [Of] finds in the frame's
// values.
func OfTree(t *span.Tree, names TopicName) Facts {
	var out Facts
	if t == nil {
		return out
	}
	body := t.Body()
	if body == span.None {
		return out
	}
	w := walker{names: names, out: &out}
	t.Walk(body, func(id span.ID, _ int) {
		f := t.Desc(id).Field
		n := t.N(id)
		if f == nil || f.Type == nil || n.First != span.None || n.Null {
			return
		}
		kind := f.Type.Kind
		if n.Index >= 0 && kind == schema.KindArray && f.Type.Elem != nil {
			kind = f.Type.Elem.Kind // an element of an array field
		} else if n.Index >= 0 {
			return
		}
		switch {
		case n.Val == span.ValInt && kind == schema.KindInt16 && span.IsErrorCode(f.Name):
			out.Errors = append(out.Errors, int16(n.Int))
		case n.Val == span.ValString && kind == schema.KindString && f.EntityType == "topicName":
			if b := t.ValueBytes(id); len(b) > 0 {
				w.topic(string(b))
			}
		case n.Val == span.ValUUID && kind == schema.KindUUID && IsTopicID(f) && names != nil:
			if b := t.ValueBytes(id); len(b) == 16 {
				if name, ok := names([16]byte(b)); ok {
					w.topic(name)
				}
			}
		}
	})
	return out
}
