package span

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestDescMemo: a registered Desc's value is made once however many
// goroutines ask, each Desc has its own, and an unregistered Desc gets
// nil without make being called.
func TestDescMemo(t *testing.T) {
	var m DescMemo[string]
	var made atomic.Int64
	mk := func(d *Desc) *string { made.Add(1); s := d.Name + "!"; return &s }
	a, b := NewDesc("memo-a", "int8", ""), NewDesc("memo-b", "int8", "")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if v := m.Get(a, mk); v == nil || *v != "memo-a!" {
					t.Errorf("a: %v", v)
				}
				if v := m.Get(b, mk); v == nil || *v != "memo-b!" {
					t.Errorf("b: %v", v)
				}
			}
		}()
	}
	wg.Wait()
	if n := made.Load(); n != 2 {
		t.Errorf("make ran %d times for two Descs", n)
	}
	if v := m.Get(&Desc{Name: "local"}, mk); v != nil || made.Load() != 2 {
		t.Errorf("an unregistered Desc got %v", v)
	}
}
