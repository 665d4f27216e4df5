package jsonr

import "github.com/manifester/manifester/internal/span"

// descFrag is what the tree writer writes for a registered [span.Desc]
// (one per schema field, shared by every tree), escaped once: a frame has
// thousands of nodes of a few hundred Descs, and escaping their names and
// types again for every node was a tenth of the writing.
type descFrag struct {
	name  []byte // the name, escaped, without quotes
	typ   []byte // `,"type":"…"` (empty when the Desc has no type)
	about []byte // `,"about":"…"` (empty when it has no description)
}

// descFrags holds the fragments of each registered Desc.
var descFrags span.DescMemo[descFrag]

// fragOf returns d's fragments, nil for a Desc that is not registered (a
// tree's local Desc, made from input: written the slow way).
func fragOf(d *span.Desc) *descFrag { return descFrags.Get(d, makeFrag) }

func makeFrag(d *span.Desc) *descFrag {
	f := &descFrag{name: appendStringBody(nil, d.Name)}
	if d.Type != "" {
		f.typ = appendString([]byte(`,"type":`), d.Type)
	}
	if d.About != "" {
		f.about = appendString([]byte(`,"about":`), d.About)
	}
	return f
}
