package proxy

import (
	"encoding/json"
	"sync"
	"testing"
)

// TestReuseTreesSameLog runs the same exchanges through a proxy that
// reuses span trees (Config.ReuseTrees, with a Sink that writes each
// event out at once, as the CLI's does) and one that does not, with four
// workers that finish each batch in reverse (so several trees are in
// flight at once), and checks that the JSON lines are the same, but for
// what differs between two runs (times, addresses). A tree handed back
// before its event is written, or to two frames at once, changes lines.
func TestReuseTreesSameLog(t *testing.T) {
	logs := map[bool][]map[string]any{}
	for _, reuse := range []bool{false, true} {
		up := orderBroker(t)
		rb := &reverseBatches{batch: 4, total: 24, all: make(chan struct{})}
		jl := &jsonLines{t: t, frames: true}
		p, _ := start(t, up, func(c *Config) {
			c.NoRewrite, c.DecodeWorkers, c.testWork, c.ReuseTrees = true, 4, rb.work, reuse
			c.Sink = jl.sink
		})
		runOrderExchanges(t, p.Addr(), 3, 1, 18, 1, 3, 1, 1, 18, 3, 1, 1, 1)
		rb.awaitAll(t)
		rb.flush()
		p.Close()
		logs[reuse] = jl.runFree("time", "latency_us", "src", "dst", "client", "upstream", "listener")
	}
	if len(logs[false]) != 24 || len(logs[true]) != 24 {
		t.Fatalf("%d and %d frame lines, want 24 each", len(logs[false]), len(logs[true]))
	}
	for i := range logs[false] {
		a, _ := json.Marshal(logs[false][i])
		b, _ := json.Marshal(logs[true][i])
		if string(a) != string(b) {
			t.Errorf("line %d differs with reused trees:\n%s\nwithout:\n%s", i, b, a)
		}
	}
}

// jsonLines is a Sink that keeps each event's JSON line (frames only,
// with frames set) as a map, for comparing the logs of two runs.
type jsonLines struct {
	t      *testing.T
	frames bool
	mu     sync.Mutex
	lines  []map[string]any
}

func (j *jsonLines) sink(e *Event) {
	if j.frames && e.Kind != EventFrame {
		return
	}
	b, err := AppendJSON(nil, e)
	if err != nil {
		j.t.Error(err)
		return
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		j.t.Errorf("%v: %s", err, b)
		return
	}
	j.mu.Lock()
	j.lines = append(j.lines, m)
	j.mu.Unlock()
}

// runFree returns the lines without the keys that differ from run to
// run (times, addresses).
func (j *jsonLines) runFree(keys ...string) []map[string]any {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, m := range j.lines {
		for _, k := range keys {
			delete(m, k)
		}
	}
	return j.lines
}
