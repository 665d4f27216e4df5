package proxy

import (
	"sync"

	"github.com/manifester/manifester/internal/framebufs"
)

// smallFrame is the largest frame collected for decoding in one slice
// allocated by the forwarding goroutine; a larger one goes into pooled
// chunks of chunkSize bytes.
const (
	smallFrame = 16 << 10
	chunkSize  = 16 << 10
)

// chunkPool holds the chunks of large frames given back by the decoding
// goroutine.
var chunkPool = sync.Pool{New: func() any { return new([chunkSize]byte) }}

// frameBody collects a copy of a frame's bytes for the decoding goroutine
// as they pass. A large frame is kept in chunks taken from a pool, and
// the decoding goroutine copies it out into a slice of its own and gives
// the chunks back (take): so the forwarding goroutines allocate nothing
// for it once the pool is warm, and are never made to assist the garbage
// collector for the decoding's copies (an allocating goroutine pays for
// marking in proportion to what it allocates, and may be parked until
// the collector has work for it: milliseconds). The decoding goroutine,
// which allocates the copy, pays instead.
//
// Like the slice it replaces, a frameBody grows with the bytes that
// arrive, never with what a size prefix claims.
type frameBody struct {
	small  []byte
	chunks []*[chunkSize]byte
	n      int // bytes in chunks
}

// add appends b, a part of a frame whose size prefix says size bytes.
func (fb *frameBody) add(size int, b []byte) {
	if fb.small != nil || (fb.chunks == nil && size <= smallFrame) {
		if fb.small == nil {
			fb.small = make([]byte, 0, min(size, initialBuf))
		}
		fb.small = append(fb.small, b...)
		return
	}
	for len(b) > 0 {
		at := fb.n % chunkSize
		if at == 0 {
			fb.chunks = append(fb.chunks, chunkPool.Get().(*[chunkSize]byte))
		}
		k := copy(fb.chunks[len(fb.chunks)-1][at:], b)
		fb.n += k
		b = b[k:]
	}
}

// len is the number of bytes collected.
func (fb *frameBody) len() int { return len(fb.small) + fb.n }

// take returns the frame's bytes, in a slice of the caller's, gives the
// chunks back to the pool and empties fb.
func (fb *frameBody) take() []byte {
	if fb.chunks == nil {
		b := fb.small
		*fb = frameBody{}
		return b
	}
	return fb.appendTo(make([]byte, 0, fb.n))
}

// appendTo appends the frame's bytes to b, gives the chunks back to the
// pool and empties fb: take without a slice of its own.
func (fb *frameBody) appendTo(b []byte) []byte {
	b = append(b, fb.small...)
	for i, c := range fb.chunks {
		b = append(b, c[:min(chunkSize, fb.n-i*chunkSize)]...)
		chunkPool.Put(c)
	}
	*fb = frameBody{}
	return b
}

// drop gives the chunks back without copying (a frame given up).
func (fb *frameBody) drop() {
	for _, c := range fb.chunks {
		chunkPool.Put(c)
	}
	*fb = frameBody{}
}

// Held responses' buffers (conn.respState.hold) come from heldPools, by
// capacity: class k holds buffers of initialBuf << k bytes. A held
// frame grows by taking a buffer of a larger class and giving the old one
// back; once its record is written to a decoding process (the sending
// feeder copies the bytes out and keeps nothing) the feeder gives it back
// too, so that a proxy holding megabytes of Fetch responses a second does
// not allocate them, clear them and have them collected. A buffer that
// is decoded in this process is given back by the emitter once its event
// is delivered, when the Sink keeps nothing of events
// (Config.ReuseTrees); else its report may keep it, and it is not. A
// decoding process reads the job stream's records into them too
// (streamReader.job), given back the same way.
//
// They are free lists, which garbage collections leave alone (a buffer
// let go at each collection and made again was faulted in page by page
// by the copy into it: a tenth of the forwarding process's CPU, in
// proxybench), keeping at most maxHeldPooled bytes in all.
var heldPools = framebufs.NewFreeLists[[]byte](heldBudget, heldClasses,
	func(k int) int { return max(1, maxHeldPooled/(initialBuf<<k)) })

// heldBudget counts what the held pools keep.
var heldBudget = framebufs.NewBudget(maxHeldPooled)

// maxHeldPooled bounds what the held pools keep.
const maxHeldPooled = 32 << 20

// heldClasses is the number of pooled capacities: initialBuf to 64 MiB.
const heldClasses = 11

// heldClass returns the smallest class whose buffers hold n bytes, and
// false when n is beyond the largest.
func heldClass(n int) (int, bool) {
	for k := range heldClasses {
		if initialBuf<<k >= n {
			return k, true
		}
	}
	return 0, false
}

// getHeld returns an empty buffer of at least n bytes' capacity: a pooled
// one of n's class when n is at least half initialBuf and that class is
// at most limit bytes, else one of n bytes (a small frame, a Metadata
// response or an empty fetch, takes no more than it needs).
func getHeld(n, limit int) []byte {
	if k, ok := heldClass(n); ok && n >= initialBuf/2 && initialBuf<<k <= limit {
		if b, ok := heldPools.Get(k); ok {
			return b
		}
		return make([]byte, 0, initialBuf<<k)
	}
	return make([]byte, 0, n)
}

// putHeld gives b back to its class's pool (a buffer of another
// capacity, or one beyond what the pools keep, is left to the
// collector). b must not be used afterwards.
func putHeld(b []byte) {
	if k, ok := heldClass(cap(b)); ok && initialBuf<<k == cap(b) {
		heldPools.Put(k, b[:0], int64(cap(b)))
	}
}
