package framebufs

import (
	"testing"

	"github.com/manifester/manifester/internal/span"
)

var desc = span.Register(&span.Desc{Name: "test"})

// treeWithSpare returns a tree that, once put back, keeps a detached
// tree over n bytes as a spare.
func treeWithSpare(n int) *span.Tree {
	t := &span.Tree{}
	t.Reset([]byte("frame"))
	root := t.Add(span.None, desc, 0, span.CatFrame)
	d := &span.Tree{}
	d.Reset(make([]byte, n))
	d.Add(span.None, desc, 0, span.CatRecord)
	t.Extra(t.Add(root, desc, 0, span.CatRecord), true).Detached = d
	return t
}

// TestTreeByClass: a tree put back serves the next frame of about the
// same size, with its spare, and not a frame of another size class.
func TestTreeByClass(t *testing.T) {
	p := New(4)
	a := treeWithSpare(1 << 20)
	p.Put(1000, a, nil)
	if p.Kept() != a.Retained() || p.Kept() < 1<<20 {
		t.Fatalf("Kept %d, want the tree's %d (its spare included)", p.Kept(), a.Retained())
	}
	if got := p.Tree(1 << 20); got == a {
		t.Error("a frame of 1 MiB got the tree of a frame of 1000 bytes")
	}
	if got := p.Tree(600); got != a {
		t.Fatal("a frame of 600 bytes did not get the tree of a frame of 1000 bytes")
	}
	if p.Kept() != 0 {
		t.Errorf("Kept %d with nothing kept", p.Kept())
	}
	if d := a.SpareTree(); cap(d.Bytes) != 1<<20 {
		t.Errorf("the tree's spare has room for %d bytes, want %d", cap(d.Bytes), 1<<20)
	}
}

// TestKeptBound: what the pool keeps stays within MaxKept however many
// trees and buffers come back, and trees and buffers over their own
// bounds are let go.
func TestKeptBound(t *testing.T) {
	p := New(64)
	for range 64 {
		p.Put(5000, treeWithSpare(4<<20), make([]byte, 0, 1<<20))
	}
	if k := p.Kept(); k > MaxKept || k < MaxKept/2 {
		t.Errorf("Kept %d, want at most %d (and most of it)", k, MaxKept)
	}
	for range 64 {
		p.Tree(5000)
		p.Out(5000)
	}
	if k := p.Kept(); k != 0 {
		t.Errorf("Kept %d once everything was taken, want 0", k)
	}

	big := &span.Tree{}
	big.Reset(nil)
	root := big.Add(span.None, desc, 0, span.CatFrame)
	for range MaxRows {
		big.Add(root, desc, 0, span.CatRecord)
	}
	p.Put(5000, big, make([]byte, 0, MaxOut+1))
	if k := p.Kept(); k != 0 {
		t.Errorf("a tree of %d rows or a buffer of %d bytes was kept (%d bytes)", MaxRows+1, MaxOut+1, k)
	}
}

// TestOut: an output buffer has room for about OutPerByte times its
// frame, up to MaxOut, and a buffer put back serves the next frame of its
// class.
func TestOut(t *testing.T) {
	p := New(2)
	b := p.Out(1000)
	if len(b) != 0 || cap(b) < OutPerByte*1000 {
		t.Fatalf("Out(1000): len %d cap %d, want empty with room for %d", len(b), cap(b), OutPerByte*1000)
	}
	if c := cap(p.Out(1 << 30)); c != MaxOut {
		t.Errorf("Out(1 GiB) has room for %d bytes, want MaxOut (%d)", c, MaxOut)
	}
	b = append(b, "line"...)
	p.Put(1000, nil, b)
	if got := p.Out(900); len(got) != 0 || &got[:1][0] != &b[0] {
		t.Error("the buffer put back did not serve the next frame of its class, empty")
	}
}
