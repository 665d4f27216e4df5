package jsonr

import (
	"sync"
	"sync/atomic"

	"github.com/manifester/manifester/internal/span"
)

// descFrag is what the tree writer writes for a registered [span.Desc]
// (one per schema field, shared by every tree), escaped once: a frame has
// thousands of nodes of a few hundred Descs, and escaping their names and
// types again for every node was a tenth of the writing.
type descFrag struct {
	name  []byte // the name, escaped, without quotes
	typ   []byte // `,"type":"…"` (empty when the Desc has no type)
	about []byte // `,"about":"…"` (empty when it has no description)
}

// descFrags holds the fragments by Desc number; entries are filled once
// and never change (Descs do not change once registered).
var descFrags struct {
	mu sync.Mutex
	p  atomic.Pointer[[]atomic.Pointer[descFrag]]
}

// fragOf returns d's fragments, nil for a Desc that is not registered (a
// tree's local Desc, made from input: written the slow way).
func fragOf(d *span.Desc) *descFrag {
	id := int(d.ID())
	if id == 0 {
		return nil
	}
	if s := descFrags.p.Load(); s != nil && id < len(*s) {
		if f := (*s)[id].Load(); f != nil {
			return f
		}
	}
	return makeFrag(d, id)
}

func makeFrag(d *span.Desc, id int) *descFrag {
	descFrags.mu.Lock()
	defer descFrags.mu.Unlock()
	s := descFrags.p.Load()
	if s == nil || id >= len(*s) {
		// Grow (by doubling: Descs are numbered densely from 1).
		n := 256
		if s != nil {
			n = 2 * len(*s)
		}
		n = max(n, id+1)
		grown := make([]atomic.Pointer[descFrag], n)
		if s != nil {
			for i := range *s {
				grown[i].Store((*s)[i].Load())
			}
		}
		s = &grown
		descFrags.p.Store(s)
	}
	if f := (*s)[id].Load(); f != nil {
		return f
	}
	f := &descFrag{name: appendStringBody(nil, d.Name)}
	if d.Type != "" {
		f.typ = appendString([]byte(`,"type":`), d.Type)
	}
	if d.About != "" {
		f.about = appendString([]byte(`,"about":`), d.About)
	}
	(*s)[id].Store(f)
	return f
}
