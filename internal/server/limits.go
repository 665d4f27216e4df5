package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/manifester/manifester/internal/budget"
)

// Limits of the decode and encode handlers' work (see also MaxDecodeBody
// and MaxDecodeFrames).
const (
	// MaxEncodedFrame is the largest frame /api/encode answers: what the
	// largest /api/decode body (hex) can hold.
	MaxEncodedFrame = MaxDecodeBody / 2
	// MaxSqueezedHex is what the "*" lines of a hex dump sent to decode
	// (hexdump's and xxd's squeezed repeated lines) may stand for in all:
	// a few bytes of "*" lines could otherwise claim gigabytes.
	MaxSqueezedHex = 4 << 20
	// MaxAnswer is the largest answer a decode or encode writes; a larger
	// one is replaced by the frames' summaries and an error.
	MaxAnswer = 64 << 20
	// DecodeTimeout bounds the work of one request; the work stops when
	// it fires or when the client goes away.
	DecodeTimeout = 10 * time.Second
	// RetryAfter is what a request refused for lack of capacity is told.
	RetryAfter = 1
	// MaxQueuedDecodes is how many requests may wait for a decode slot
	// (or a render slot, [Pages]), each for at most QueueWait; beyond
	// either they are answered 503.
	MaxQueuedDecodes = 64
	QueueWait        = 5 * time.Second
	// MaxPendingAnswers bounds the bytes of decode and encode answers
	// that are built and waiting for their clients to read them: answers
	// are written without a decode slot, so that a client that reads
	// slowly holds no slot, and this keeps slow readers from holding
	// memory without bound instead. An answer that would pass it is
	// answered 503 with Retry-After.
	MaxPendingAnswers = 4 * MaxAnswer
	// MaxBodiesInFlight bounds the bytes of request bodies the decode
	// handlers are reading or working on at once (32 bodies of the
	// largest size): room for a body is taken before it is read, for
	// its announced length or MaxDecodeBody when it announces none, and
	// given back once its request is decoded, before the answer is
	// written. A request that finds no room is answered 503 with
	// Retry-After without its body being read. Bodies are read without
	// a decode slot (a slow client holds none), so without this bound
	// the bodies in memory would be bounded only by the connections.
	MaxBodiesInFlight = 32 * MaxDecodeBody
)

// DecodeLimits are the budget of one decode or encode request (all its
// frames together), proportional to the request's bytes like the CLI's
// but with lower ceilings: 1 MiB inflated, 32 Ki nodes of inflated
// records, 64 Ki nodes of the frames' own trees. A page of that many
// tree rows is already more than anyone reads.
var DecodeLimits = budget.Limits{InflateMax: 1 << 20, NodesMax: 32 << 10, TreeNodesMax: 64 << 10}

// MaxConcurrentDecodes is how many decode or encode requests run at once
// by default, and how many pages are rendered on demand ([Pages]); more
// wait in a queue, then are answered 503 with Retry-After.
func MaxConcurrentDecodes() int { return max(2, runtime.GOMAXPROCS(0)) }

// errBusy and errTimeout are answered 503.
var (
	errBusy    = errors.New("the server is decoding as many requests as it allows; retry shortly")
	errTimeout = fmt.Errorf("decoding took longer than %s and was stopped", DecodeTimeout)
	errPending = errors.New("the server is sending as many large answers as it allows; retry shortly")
	errBodies  = errors.New("the server is reading as many request bodies as it allows; retry shortly")
)

// byteBudget counts bytes held at once against a limit.
type byteBudget struct {
	limit int64
	used  atomic.Int64
	peak  atomic.Int64 // the most used has been
}

// take counts n more bytes; false, counting nothing, when that would pass
// the limit.
func (b *byteBudget) take(n int64) bool {
	for {
		u := b.used.Load()
		if u+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			b.raisePeak(u + n)
			return true
		}
	}
}

// give gives back n bytes taken.
func (b *byteBudget) give(n int64) { b.used.Add(-n) }

func (b *byteBudget) raisePeak(u int64) {
	for p := b.peak.Load(); u > p && !b.peak.CompareAndSwap(p, u); p = b.peak.Load() {
	}
}

// takeBody takes room for the body of r in the budget of bodies (its
// announced length, or MaxDecodeBody when it announces none); done gives
// it back and may be called more than once. false: no room.
func (d *Decoder) takeBody(r *http.Request) (done func(), ok bool) {
	d.once.Do(d.init)
	n := r.ContentLength
	if n < 0 || n > MaxDecodeBody {
		n = MaxDecodeBody
	}
	if !d.bodies.take(n) {
		return nil, false
	}
	given := false
	return func() {
		if !given {
			given = true
			d.bodies.give(n)
		}
	}, true
}

// hold counts an answer of n bytes as waiting for its client until done
// is called; false, when it would pass the pending limit (MaxPending),
// says to refuse it.
func (d *Decoder) hold(n int) (done func(), ok bool) {
	limit := int64(d.MaxPending)
	if limit <= 0 {
		limit = MaxPendingAnswers
	}
	if d.pending.Add(int64(n)) > limit {
		d.pending.Add(-int64(n))
		return nil, false
	}
	return func() { d.pending.Add(-int64(n)) }, true
}

// acquire claims a decode slot (see [gate.acquire]).
func (d *Decoder) acquire(ctx context.Context) bool {
	d.once.Do(d.init)
	return d.gate.acquire(ctx)
}

func (d *Decoder) init() {
	if d.Timeout <= 0 {
		d.Timeout = DecodeTimeout
	}
	d.gate.init(d.MaxConcurrent, d.MaxQueued, d.QueueWait)
	d.bodies.limit = int64(d.MaxBodies)
	if d.MaxBodies <= 0 {
		d.bodies.limit = MaxBodiesInFlight
	}
}

// busy answers 503 with Retry-After.
func busy(w http.ResponseWriter, err error) {
	w.Header().Set("Retry-After", strconv.Itoa(RetryAfter))
	writeJSON(w, http.StatusServiceUnavailable, Answer{Error: err.Error()})
}

// work runs f with a decode slot and a context that ends when the client
// goes away or the timeout fires; the answer f returns is built with the
// slot too, and written after the slot is released (a client that reads
// slowly holds its connection, not the decoding). bodyDone, which gives
// back the room of the request's body, is called once the body and what
// f decoded from it are no longer needed: before the answer is written.
// It answers 503 itself when no slot is free or the timeout fired, and
// nothing when the client went away.
func (d *Decoder) work(w http.ResponseWriter, r *http.Request, bodyDone func(), f func(ctx context.Context) (answer func() (int, []byte))) {
	defer bodyDone()
	if !d.acquire(r.Context()) {
		bodyDone()
		busy(w, errBusy)
		return
	}
	status, body, err := d.workSlot(r, f)
	bodyDone()
	if err != nil {
		busy(w, err)
		return
	}
	if body == nil {
		return // the client went away: nobody to answer
	}
	done, ok := d.hold(len(body))
	if !ok {
		busy(w, errPending)
		return
	}
	defer done()
	writeJSONBytes(w, status, body)
}

// workSlot is work's part with the slot, which it releases: the answer's
// status and JSON, no JSON when the client went away, or errTimeout.
func (d *Decoder) workSlot(r *http.Request, f func(ctx context.Context) (answer func() (int, []byte))) (int, []byte, error) {
	defer d.release()
	ctx, cancel := context.WithTimeout(r.Context(), d.Timeout)
	defer cancel()
	answer := f(ctx)
	switch {
	case r.Context().Err() != nil:
		return 0, nil, nil
	case ctx.Err() != nil:
		return 0, nil, errTimeout
	}
	status, body := answer()
	return status, body, nil
}

// serveAPIMethod answers requests to /api/ paths that no POST handler
// took: 405 with Allow for the API's own paths, 404 for others.
func serveAPIMethod(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api/decode", "/api/encode":
		w.Header().Set("Allow", "POST")
		writeJSON(w, http.StatusMethodNotAllowed, Answer{Error: r.Method + " is not allowed on " + r.URL.Path + "; use POST"})
	default:
		writeJSON(w, http.StatusNotFound, Answer{Error: "no API at " + r.URL.Path})
	}
}
