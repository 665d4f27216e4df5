package cli

import (
	"math/bits"
	"sync/atomic"

	"github.com/manifester/manifester/internal/span"
)

// pcapBuffers hands the pipeline's workers the span trees and output
// buffers of the frames in flight and takes them back once a frame's line
// is written: a frame's tree and output live until its line is written,
// and no longer. Unlike a sync.Pool they survive garbage collections, so
// the buffers grow once to the capture's frame sizes and are then reused.
//
// The window holds many small frames beside a few large ones, so what is
// kept is sorted by the size of the frame it served, in powers of two: a
// frame takes a tree and a buffer that served a frame of about its size
// (and grew to what such a frame needs), so that a small frame does not
// pin a large frame's buffers and a large frame does not grow a small
// one's. At most n of each per class are kept, and at most maxPooledBytes
// in all.
type pcapBuffers struct {
	classes [pcapClasses]pcapClass
	kept    atomic.Int64 // bytes of the trees and buffers kept
}

// pcapClass keeps the trees and output buffers of frames of one size
// class.
type pcapClass struct {
	trees chan *span.Tree
	outs  chan []byte
}

// Bounds on what is kept for reuse, so that one huge frame does not pin
// its buffers: larger ones are left to the garbage collector.
const (
	// maxPooled bounds each output buffer kept.
	maxPooled = 8 << 20
	// maxPooledRows bounds the rows of each tree kept.
	maxPooledRows = 1 << 16
	// maxPooledBytes bounds the trees and output buffers kept, together.
	maxPooledBytes = 64 << 20
	// pcapClasses is the number of size classes: frames of up to 2^(c-1)
	// bytes are in class c, the largest class holds every larger frame.
	pcapClasses = 24
)

// outPerByte is about the bytes of output (JSON lines, or text with -v)
// per byte of frame: a frame's output buffer starts that large.
const outPerByte = 16

// newPcapBuffers returns buffers that keep at most n trees and n output
// buffers per size class.
func newPcapBuffers(n int) *pcapBuffers {
	p := &pcapBuffers{}
	for i := range p.classes {
		p.classes[i] = pcapClass{trees: make(chan *span.Tree, n), outs: make(chan []byte, n)}
	}
	return p
}

// class is the size class of a frame of size bytes.
func (p *pcapBuffers) class(size int) *pcapClass {
	return &p.classes[min(bits.Len(uint(size)), pcapClasses-1)]
}

// tree returns a tree to decode a frame of size bytes into.
func (p *pcapBuffers) tree(size int) *span.Tree {
	select {
	case t := <-p.class(size).trees:
		p.kept.Add(-t.Retained())
		return t
	default:
		return new(span.Tree)
	}
}

// out returns an empty output buffer for a frame of size bytes: the output
// is about outPerByte times the frame, and a buffer that large from the
// start saves growing it (and copying) while writing.
func (p *pcapBuffers) out(size int) []byte {
	var b []byte
	select {
	case b = <-p.class(size).outs:
		p.kept.Add(-int64(cap(b)))
	default:
	}
	if need := min(outPerByte*size+4096, maxPooled); cap(b) < need {
		b = make([]byte, 0, need)
	}
	return b[:0]
}

// put takes back the tree and output buffer (either may be nil) of a
// frame of size bytes once its line is written.
func (p *pcapBuffers) put(size int, t *span.Tree, b []byte) {
	c := p.class(size)
	if t != nil && cap(t.Nodes) <= maxPooledRows {
		// Drop the frame's bytes and extras; its inflated batches' trees
		// are kept in it for reuse, and counted.
		t.Reset(nil)
		if n := t.Retained(); p.keep(n) {
			select {
			case c.trees <- t:
			default:
				p.kept.Add(-n)
			}
		}
	}
	if b != nil && cap(b) <= maxPooled && p.keep(int64(cap(b))) {
		select {
		case c.outs <- b[:0]:
		default:
			p.kept.Add(-int64(cap(b)))
		}
	}
}

// keep counts n more bytes kept, unless that would exceed maxPooledBytes.
func (p *pcapBuffers) keep(n int64) bool {
	if p.kept.Add(n) > maxPooledBytes {
		p.kept.Add(-n)
		return false
	}
	return true
}
