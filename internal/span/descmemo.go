package span

import (
	"sync"
	"sync/atomic"
)

// DescMemo holds one value per registered [Desc], made on first use and
// never changed after: what a renderer derives from a Desc alone (its
// name escaped, its struct's JSON keys), so that it is derived once per
// Desc, not once per row. Lookups take no lock. The zero value is ready;
// a DescMemo is safe for concurrent use.
type DescMemo[T any] struct {
	mu sync.Mutex
	p  atomic.Pointer[[]atomic.Pointer[T]]
}

// Get returns d's value, made by make(d) on first use; nil for a Desc
// that is not registered (a tree's local Desc, made from input), which
// the caller derives each time.
func (m *DescMemo[T]) Get(d *Desc, make func(*Desc) *T) *T {
	id := int(d.ID())
	if id == 0 {
		return nil
	}
	if s := m.p.Load(); s != nil && id < len(*s) {
		if v := (*s)[id].Load(); v != nil {
			return v
		}
	}
	return m.fill(d, id, make)
}

func (m *DescMemo[T]) fill(d *Desc, id int, make func(*Desc) *T) *T {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.p.Load()
	if s == nil || id >= len(*s) {
		// Grow by doubling: Descs are numbered densely from 1.
		n := 256
		if s != nil {
			n = 2 * len(*s)
		}
		grown := newSlots[T](max(n, id+1))
		if s != nil {
			for i := range *s {
				grown[i].Store((*s)[i].Load())
			}
		}
		s = &grown
		m.p.Store(s)
	}
	if v := (*s)[id].Load(); v != nil {
		return v
	}
	v := make(d)
	(*s)[id].Store(v)
	return v
}

func newSlots[T any](n int) []atomic.Pointer[T] { return make([]atomic.Pointer[T], n) }
