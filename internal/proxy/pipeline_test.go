package proxy

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testframes"
)

// orderTopic is the topic id the Fetch frames of TestPipelineOrder use and
// its Metadata response names "orders".
var orderTopic = [16]byte{0x51, 0x52, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}

// orderExchange returns the request and response of one exchange of api
// (Fetch by topic id, Metadata naming it, or Heartbeat), encoded by kmsg.
func orderExchange(api int16, corr int32) ([]byte, []byte) {
	switch api {
	case 1:
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.ReplicaID = 13, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.TopicID = orderTopic
		req.Topics = append(req.Topics, rt)
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = 13
		pt := kmsg.NewFetchResponseTopic()
		pt.TopicID = orderTopic
		resp.Topics = append(resp.Topics, pt)
		return reqFrame(req, corr), testframes.Response(resp, corr)
	case 3:
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		resp := kmsg.NewPtrMetadataResponse()
		resp.Version = 12
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic, mt.TopicID = kmsg.StringPtr("orders"), orderTopic
		resp.Topics = append(resp.Topics, mt)
		return reqFrame(req, corr), testframes.Response(resp, corr)
	}
	return heartbeat(corr)
}

// orderBroker answers every request of every connection with
// orderExchange's response of its API key and correlation id.
func orderBroker(t *testing.T) string {
	t.Helper()
	return answerBroker(t, func(key int16, corr int32) []byte {
		_, resp := orderExchange(key, corr)
		return resp
	})
}

// reverseBatches makes the proxy's workers finish their decodes in
// reverse: it waits until batch frames are in the workers (all of them,
// each blocked), decodes them last first, then lets them go on. flush
// ends it: what is waiting is decoded (last first), and later frames
// straight away. So with several workers every frame but the last of a
// batch is decoded after the ones submitted after it.
type reverseBatches struct {
	batch   int
	total   int           // frames expected
	all     chan struct{} // closed when total frames reached the workers
	arrived int
	mu      sync.Mutex
	waiting []waitingDecode
	flushed bool
	batches int // full batches decoded in reverse
}

// waitingDecode is a worker's decode, and the channel closed once it ran.
type waitingDecode struct {
	decode func()
	done   chan struct{}
}

func (r *reverseBatches) work(_ *item, decode func()) {
	r.mu.Lock()
	if r.flushed {
		r.mu.Unlock()
		decode()
		return
	}
	if r.arrived++; r.arrived == r.total {
		close(r.all)
	}
	w := waitingDecode{decode, make(chan struct{})}
	r.waiting = append(r.waiting, w)
	var full []waitingDecode
	if len(r.waiting) == r.batch {
		full, r.waiting = r.waiting, nil
		r.batches++
	}
	r.mu.Unlock()
	r.run(full)
	<-w.done
}

// run decodes the batch's frames last first, on the calling goroutine,
// and lets their workers go on.
func (r *reverseBatches) run(full []waitingDecode) {
	for i := len(full) - 1; i >= 0; i-- {
		full[i].decode()
		close(full[i].done)
	}
}

func (r *reverseBatches) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.arrived
}

// awaitAll waits until all the frames expected reached the workers; the
// timeout only keeps a frame that never does from hanging the test.
func (r *reverseBatches) awaitAll(t *testing.T) {
	t.Helper()
	select {
	case <-r.all:
	case <-time.After(time.Minute):
		t.Errorf("only %d of %d frames reached the workers", r.count(), r.total)
	}
}

// runOrderExchanges runs an orderExchange of each API in turn
// (correlation ids from 1) on one connection to addr, reading each
// response whole, and closes it.
func runOrderExchanges(t *testing.T, addr string, apis ...int16) {
	t.Helper()
	c := dial(t, addr)
	defer c.Close()
	for i, api := range apis {
		req, resp := orderExchange(api, int32(i+1))
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, make([]byte, len(resp))); err != nil {
			t.Fatal(err)
		}
	}
}

func (r *reverseBatches) flush() {
	r.mu.Lock()
	full := r.waiting
	r.waiting, r.flushed = nil, true
	r.mu.Unlock()
	r.run(full)
}

// TestPipelineOrder: with several workers, whose decodes the test makes
// finish in reverse order within each batch, every connection's events
// still arrive in frame order, and a topic id is named in exactly the
// frames delivered after the Metadata response that names it, as with one
// worker.
func TestPipelineOrder(t *testing.T) {
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			up := orderBroker(t)
			rb := &reverseBatches{batch: workers, total: 16, all: make(chan struct{})}
			p, ev := start(t, up, func(c *Config) { c.NoRewrite, c.DecodeWorkers, c.testWork = true, workers, rb.work })
			// In batches of 4 frames on one connection: Fetch, Heartbeat |
			// Metadata, Fetch | Fetch, Fetch: the Fetch after the Metadata
			// is decoded before its response is. Then a second connection.
			runOrderExchanges(t, p.Addr(), 1, 18, 3, 1, 1, 1)
			runOrderExchanges(t, p.Addr(), 1, 1)
			// All 16 frames in full batches.
			rb.awaitAll(t)
			rb.flush()
			p.Close()
			checkPipelineOrder(t, ev, map[int]int{1: 6, 2: 2})
			if rb.batches != 16/workers {
				t.Errorf("%d batches of %d decoded in reverse, want %d", rb.batches, workers, 16/workers)
			}
		})
	}
}

// checkPipelineOrder checks the events of TestPipelineOrder: each
// connection's open, its frames in order in each direction (index and
// correlation id), each response after its request, its close; and
// Fetch frames named exactly when a Metadata response came before.
func checkPipelineOrder(t *testing.T, ev *events, exchanges map[int]int) {
	t.Helper()
	ev.mu.Lock()
	all := append([]*Event(nil), ev.all...)
	ev.mu.Unlock()
	type state struct {
		open, closed bool
		next         map[string]int // direction → next index
	}
	conns := map[int]*state{}
	learnt := false
	named, unnamed := 0, 0
	for n, e := range all {
		if e.Conn == 0 {
			continue
		}
		s := conns[e.Conn]
		if s == nil {
			s = &state{next: map[string]int{}}
			conns[e.Conn] = s
		}
		switch e.Kind {
		case EventOpen:
			s.open = true
		case EventClose:
			s.closed = true
		case EventFrame:
			if !s.open || s.closed {
				t.Errorf("event %d: frame of connection %d outside open and close", n, e.Conn)
			}
			f := e.Frame
			if f.Index != s.next[e.Dir] || int(f.CorrelationID) != s.next[e.Dir]+1 {
				t.Errorf("event %d: connection %d %s %d (correlation id %d), want %d", n, e.Conn, e.Dir, f.Index, f.CorrelationID, s.next[e.Dir])
			}
			if e.Dir == "response" && s.next["request"] <= f.Index {
				t.Errorf("event %d: connection %d response %d before its request", n, e.Conn, f.Index)
			}
			s.next[e.Dir]++
			if f.API == "Fetch" {
				if topicNamed(f.SpanTree()) != learnt {
					t.Errorf("event %d: connection %d Fetch %s %d named %v, want %v", n, e.Conn, e.Dir, f.Index, !learnt, learnt)
				}
				if learnt {
					named++
				} else {
					unnamed++
				}
			}
			if f.API == "Metadata" && e.Dir == "response" {
				learnt = true
			}
		default:
			t.Errorf("event %d: %s on connection %d: %s", n, e.Kind, e.Conn, e.Detail)
		}
	}
	for id, want := range exchanges {
		s := conns[id]
		if s == nil || !s.open || !s.closed || s.next["request"] != want || s.next["response"] != want {
			t.Errorf("connection %d: %+v, want %d exchanges between open and close", id, s, want)
		}
	}
	if named == 0 || unnamed == 0 {
		t.Errorf("%d Fetch frames named, %d not: want some of each", named, unnamed)
	}
}

// topicNamed reports whether a tree shows orderTopic's name.
func topicNamed(tr *span.Tree) bool {
	if tr == nil || tr.Root() == span.None {
		return false
	}
	found := false
	tr.Walk(tr.Root(), func(id span.ID, _ int) {
		found = found || strings.Contains(tr.ValueText(id), `(topic "orders")`)
	})
	return found
}
