package framebufs

import "sync/atomic"

// Budget bounds the bytes that the free lists sharing it keep, together.
type Budget struct {
	kept atomic.Int64
	max  int64
}

// NewBudget returns a budget of max bytes.
func NewBudget(max int64) *Budget { return &Budget{max: max} }

// Kept reports the bytes kept within the budget.
func (b *Budget) Kept() int64 { return b.kept.Load() }

// FreeLists keeps values for reuse by class, each counted at its size
// against a Budget. Unlike a sync.Pool's, what they keep survives
// garbage collections: a buffer let go at each collection and made again
// is cleared and faulted in page by page. Its methods are safe for
// concurrent use.
type FreeLists[T any] struct {
	lists  []chan entry[T]
	budget *Budget
}

// entry is a value kept, with the bytes it is counted at.
type entry[T any] struct {
	v T
	n int64
}

// NewFreeLists returns free lists of classes classes, class k keeping at
// most perClass(k) values, counted against b.
func NewFreeLists[T any](b *Budget, classes int, perClass func(k int) int) *FreeLists[T] {
	l := &FreeLists[T]{lists: make([]chan entry[T], classes), budget: b}
	for k := range l.lists {
		l.lists[k] = make(chan entry[T], perClass(k))
	}
	return l
}

// Get takes a value of class k, or reports that none is kept.
func (l *FreeLists[T]) Get(k int) (v T, ok bool) {
	select {
	case e := <-l.lists[k]:
		l.budget.kept.Add(-e.n)
		return e.v, true
	default:
		return v, false
	}
}

// Put keeps v, of n bytes, in class k, unless that class is full or the
// budget would be exceeded (it reports whether v was kept). v must not be
// used afterwards when it was.
func (l *FreeLists[T]) Put(k int, v T, n int64) bool {
	if l.budget.kept.Add(n) <= l.budget.max {
		select {
		case l.lists[k] <- entry[T]{v, n}:
			return true
		default:
		}
	}
	l.budget.kept.Add(-n)
	return false
}

// Len reports how many values class k keeps.
func (l *FreeLists[T]) Len(k int) int { return len(l.lists[k]) }
