// Package framebufs keeps the span trees and output buffers of the frames
// a decoding pipeline has in flight, for reuse by the frames after them:
// `decode --pcap`'s workers and the proxy's decoding side take a tree (and
// an output buffer) per frame and give them back once the frame's line is
// written.
//
// A frame's tree and output live until its line is written, and no
// longer. Unlike a sync.Pool, what is kept survives garbage collections, so
// the buffers grow once to the traffic's frame sizes and are then reused:
// a tree keeps its inflated batches' trees and their bytes' room (see
// [span.Tree.SpareTree]), which a frame of compressed batches would
// otherwise allocate, clear and fault in afresh.
//
// They are kept in [FreeLists], bounded free lists by class counted
// against a [Budget], which the proxy's held responses' buffers use too.
//
// Many small frames pass beside a few large ones, so what is kept is
// sorted by the size of the frame it served, in powers of two: a frame
// takes a tree and a buffer that served a frame of about its size (and
// grew to what such a frame needs), so that a small frame does not pin a
// large frame's buffers and a large frame does not grow a small one's. At
// most n of each are kept per class, and at most [MaxKept] bytes in all;
// anything larger than the bounds below is left to the garbage collector.
package framebufs

import (
	"math/bits"

	"github.com/manifester/manifester/internal/span"
)

// Bounds on what is kept for reuse, so that one huge frame does not pin
// its buffers.
const (
	// MaxOut bounds each output buffer kept.
	MaxOut = 8 << 20
	// MaxRows bounds the rows of each tree kept.
	MaxRows = 1 << 16
	// MaxKept bounds the trees (with their spare trees) and output
	// buffers kept, together.
	MaxKept = 64 << 20
	// classes is the number of size classes: frames of up to 2^(c-1)
	// bytes are in class c, the largest class holds every larger frame.
	classes = 24
)

// OutPerByte is about the bytes of output (JSON lines, or text) per byte
// of frame: a frame's output buffer starts that large.
const OutPerByte = 16

// Pool keeps trees and output buffers by frame size class. Its methods
// are safe for concurrent use.
type Pool struct {
	budget *Budget
	trees  *FreeLists[*span.Tree]
	outs   *FreeLists[[]byte]
}

// New returns a pool that keeps at most n trees and n output buffers per
// size class (the frames a pipeline has in flight), MaxKept bytes in all.
func New(n int) *Pool {
	b := NewBudget(MaxKept)
	perClass := func(int) int { return n }
	return &Pool{budget: b, trees: NewFreeLists[*span.Tree](b, classes, perClass), outs: NewFreeLists[[]byte](b, classes, perClass)}
}

// class is the size class of a frame of size bytes.
func class(size int) int {
	return min(bits.Len(uint(max(size, 0))), classes-1)
}

// Tree returns a tree to decode a frame of size bytes into.
func (p *Pool) Tree(size int) *span.Tree {
	if t, ok := p.trees.Get(class(size)); ok {
		return t
	}
	return new(span.Tree)
}

// Out returns an empty output buffer for a frame of size bytes: the
// output is about OutPerByte times the frame, and a buffer that large
// from the start saves growing it (and copying) while writing.
func (p *Pool) Out(size int) []byte {
	b, _ := p.outs.Get(class(size))
	if need := min(OutPerByte*size+4096, MaxOut); cap(b) < need {
		b = make([]byte, 0, need)
	}
	return b[:0]
}

// Put takes back the tree and output buffer (either may be nil) of a
// frame of size bytes once its line is written. Nothing of the frame may
// be read through them afterwards.
func (p *Pool) Put(size int, t *span.Tree, b []byte) {
	k := class(size)
	if t != nil && cap(t.Nodes) <= MaxRows {
		// Drop the frame's bytes and extras; its inflated batches' trees
		// are kept in it for reuse, and counted.
		t.Reset(nil)
		p.trees.Put(k, t, t.Retained())
	}
	if b != nil && cap(b) <= MaxOut {
		p.outs.Put(k, b[:0], int64(cap(b)))
	}
}

// Kept reports the bytes the pool keeps.
func (p *Pool) Kept() int64 { return p.budget.Kept() }
