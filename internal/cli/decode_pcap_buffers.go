package cli

import "github.com/manifester/manifester/internal/span"

// pcapBuffers hands the pipeline's workers the span trees and output
// buffers of the frames in flight and takes them back once a frame's line
// is written: a frame's tree and output live until its line is written,
// and no longer, so at most window of each are held (plus the few being
// filled), whatever the capture's size. Unlike a sync.Pool they survive
// garbage collections, so the buffers grow once to the capture's frame
// sizes and are then reused.
type pcapBuffers struct {
	trees chan *span.Tree
	outs  chan []byte
}

// Bounds on what is kept for reuse, so that one huge frame does not pin
// its buffers: larger ones are left to the garbage collector.
const (
	// maxPooled bounds the output buffers kept.
	maxPooled = 8 << 20
	// maxPooledRows bounds the rows of the trees kept.
	maxPooledRows = 1 << 16
)

// outPerByte is about the bytes of output (JSON lines, or text with -v)
// per byte of frame: a frame's output buffer starts that large.
const outPerByte = 16

func newPcapBuffers(n int) *pcapBuffers {
	return &pcapBuffers{trees: make(chan *span.Tree, n), outs: make(chan []byte, n)}
}

// tree returns a tree to decode a frame into.
func (p *pcapBuffers) tree() *span.Tree {
	select {
	case t := <-p.trees:
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
	case b = <-p.outs:
	default:
	}
	if need := min(outPerByte*size+4096, maxPooled); cap(b) < need {
		b = make([]byte, 0, need)
	}
	return b[:0]
}

// put takes back a frame's tree and output buffer (either may be nil)
// once its line is written.
func (p *pcapBuffers) put(t *span.Tree, b []byte) {
	if t != nil && cap(t.Nodes) <= maxPooledRows {
		t.Reset(nil) // drop the frame's bytes and extras
		select {
		case p.trees <- t:
		default:
		}
	}
	if b != nil && cap(b) <= maxPooled {
		select {
		case p.outs <- b[:0]:
		default:
		}
	}
}
