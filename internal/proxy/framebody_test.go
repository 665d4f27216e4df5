package proxy

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/manifester/manifester/internal/framebufs"
)

// TestFrameBody: a frame collected in pieces of any size comes back byte
// for byte, small ones in one slice and large ones through pooled chunks,
// whatever the size prefix claims.
func TestFrameBody(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{4, 100, smallFrame, smallFrame + 1, chunkSize * 3, chunkSize*5 + 17, 1 << 20} {
		for _, claim := range []int{n, n * 2, 8} {
			want := make([]byte, n)
			for i := range want {
				want[i] = byte(rng.Uint32())
			}
			var fb frameBody
			for rest := want; len(rest) > 0; {
				k := min(len(rest), 1+rng.IntN(3*chunkSize))
				fb.add(claim, rest[:k])
				rest = rest[k:]
			}
			if fb.len() != n {
				t.Fatalf("%d bytes (claimed %d): len %d", n, claim, fb.len())
			}
			chunked := fb.chunks != nil
			if chunked != (claim > smallFrame) {
				t.Errorf("%d bytes claimed %d: chunked %v", n, claim, chunked)
			}
			got := fb.take()
			if !bytes.Equal(got, want) {
				t.Fatalf("%d bytes (claimed %d): the bytes differ", n, claim)
			}
			if fb.len() != 0 || fb.chunks != nil || fb.small != nil {
				t.Fatalf("take left %d bytes", fb.len())
			}
		}
	}
}

// TestFrameBodyAllocations: once the pool is warm, collecting a large
// frame allocates only the list of its chunks on the forwarding side.
func TestFrameBodyAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops chunks at random under the race detector")
	}
	piece := make([]byte, 64<<10)
	var fb frameBody
	collect := func() {
		for range 16 { // 1 MiB
			fb.add(1<<20, piece)
		}
	}
	collect()
	fb.drop()
	allocs := testing.AllocsPerRun(20, func() {
		collect()
		fb.drop()
	})
	// The chunk list grows by doubling to 64 entries: 7 allocations
	// (the pool may also lose chunks to a collection in between).
	if allocs > 10 {
		t.Errorf("collecting 1 MiB allocates %.0f times, want at most 10", allocs)
	}
}

// TestHeldBuffers: a held frame's buffer, pooled or not, holds what
// arrived in order and never more than twice it (or the first room of
// at most initialBuf), whatever its size prefix claims; a small frame
// takes exactly its size.
func TestHeldBuffers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, size := range []int{100, 40 << 10, initialBuf, 70000, 1 << 20, 5 << 20} {
		for _, arrive := range []int{size, min(size, 300000)} { // the whole frame, or a lying prefix's first bytes
			want := make([]byte, arrive)
			for i := range want {
				want[i] = byte(rng.Uint32())
			}
			b := newFrameBuf(size, want[:min(8, arrive)])
			if size < initialBuf/2 && cap(b) != size {
				t.Errorf("size %d: a small frame's buffer of %d bytes", size, cap(b))
			}
			for got := min(8, arrive); got < arrive; {
				n := min(arrive-got, 1+rng.IntN(readBuf))
				b = appendHeld(b, want[got:got+n], size)
				got += n
				if limit := max(2*len(b), min(size, initialBuf)); cap(b) > limit {
					t.Fatalf("size %d: %d bytes held in %d of room, over %d", size, len(b), cap(b), limit)
				}
			}
			if !bytes.Equal(b, want) {
				t.Errorf("size %d, %d bytes arrived: the buffer holds other bytes", size, arrive)
			}
			putHeld(b)
		}
	}
}

// drainHeld empties the held pools.
func drainHeld() {
	for k := range heldClasses {
		for {
			if _, ok := heldPools.Get(k); !ok {
				break
			}
		}
	}
}

// TestHeldPoolsKeep: a held buffer given back is the next one of its
// class handed out, whatever collections ran in between, and the pools
// keep at most maxHeldPooled bytes.
func TestHeldPoolsKeep(t *testing.T) {
	drainHeld()
	defer drainHeld()
	b := getHeld(initialBuf<<3, initialBuf<<3)
	putHeld(b)
	runtime.GC()
	runtime.GC()
	if got := getHeld(initialBuf<<3, initialBuf<<3); cap(got) != cap(b) || &got[:1][0] != &b[:1][0] {
		t.Error("the buffer given back was not handed out again after two collections")
	}
	for range 2 * maxHeldPooled / (initialBuf << 3) {
		putHeld(make([]byte, 0, initialBuf<<3))
	}
	if n := heldBudget.Kept(); n > maxHeldPooled || n < maxHeldPooled/2 {
		t.Errorf("the pools keep %d bytes, want at most %d (and most of it)", n, maxHeldPooled)
	}
	putHeld(make([]byte, 0, initialBuf<<3+1)) // no class's capacity
	if n := heldBudget.Kept(); n > maxHeldPooled {
		t.Errorf("the pools keep %d bytes after a buffer of no class", n)
	}
}

// TestEmitGivesHeldBack: a held response decoded in the proxy's own
// process goes back to its pool once its event is delivered when the
// Sink keeps nothing of events (Config.ReuseTrees), and not otherwise,
// when the Sink may keep the frame's bytes.
func TestEmitGivesHeldBack(t *testing.T) {
	k, _ := heldClass(initialBuf << 3)
	emitHeld := func(reuse bool) []byte {
		var delivered int
		p := &Proxy{cfg: Config{Sink: func(*Event) { delivered++ }, ReuseTrees: reuse}}
		if reuse {
			p.trees = framebufs.New(1)
		}
		held := getHeld(initialBuf<<3, initialBuf<<3)[:100]
		it := &item{kind: kindResponse, held: held, data: held}
		// (An event with no frame report: no topics to name.)
		if err := p.emit(&job{it: it, ev: &Event{Kind: EventFrame, Data: held}, data: held}); err != nil || delivered != 1 {
			t.Fatalf("emit: %v, %d events delivered", err, delivered)
		}
		return held
	}
	drainHeld()
	defer drainHeld()
	emitHeld(false)
	if heldPools.Len(k) != 0 {
		t.Error("a held buffer went back to its pool while the Sink may keep the frame")
	}
	held := emitHeld(true)
	if heldPools.Len(k) != 1 {
		t.Fatal("the held buffer of a delivered event did not go back to its pool")
	}
	if b, _ := heldPools.Get(k); &b[:1][0] != &held[0] {
		t.Error("another buffer than the event's went back to its pool")
	}
}
