package framebufs

import (
	"runtime"
	"testing"
)

// TestFreeLists: a value put back is the next one of its class handed
// out, after collections too; a class keeps at most its count; lists
// sharing a budget keep no more than it together; an empty class hands
// out nothing.
func TestFreeLists(t *testing.T) {
	b := NewBudget(1000)
	a := NewFreeLists[*int](b, 2, func(k int) int { return k + 1 })
	c := NewFreeLists[*int](b, 1, func(int) int { return 10 })
	if _, ok := a.Get(0); ok {
		t.Fatal("an empty class handed out a value")
	}
	v := new(int)
	if !a.Put(1, v, 300) {
		t.Fatal("a value within the budget was not kept")
	}
	runtime.GC()
	runtime.GC()
	if got, ok := a.Get(1); !ok || got != v || b.Kept() != 0 {
		t.Fatalf("after two collections: %p, %v, %d bytes counted; want the value put back, none counted", got, ok, b.Kept())
	}
	if !a.Put(0, new(int), 100) || a.Put(0, new(int), 100) {
		t.Error("class 0 keeps other than one value")
	}
	if !c.Put(0, new(int), 800) || c.Put(0, new(int), 200) {
		t.Error("lists sharing a budget of 1000 bytes kept more than it")
	}
	if b.Kept() != 900 || a.Len(0) != 1 || c.Len(0) != 1 {
		t.Errorf("%d bytes counted, %d and %d values kept; want 900, 1 and 1", b.Kept(), a.Len(0), c.Len(0))
	}
}
