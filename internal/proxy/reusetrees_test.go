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
		var mu sync.Mutex
		var lines []map[string]any
		p, _ := start(t, up, func(c *Config) {
			c.NoRewrite, c.DecodeWorkers, c.testWork, c.ReuseTrees = true, 4, rb.work, reuse
			c.Sink = func(e *Event) {
				if e.Kind != EventFrame {
					return
				}
				b, err := AppendJSON(nil, e)
				if err != nil {
					t.Error(err)
					return
				}
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					t.Errorf("%v: %s", err, b)
					return
				}
				mu.Lock()
				lines = append(lines, m)
				mu.Unlock()
			}
		})
		runOrderExchanges(t, p.Addr(), 3, 1, 18, 1, 3, 1, 1, 18, 3, 1, 1, 1)
		rb.awaitAll(t)
		rb.flush()
		p.Close()
		for _, m := range lines {
			for _, k := range []string{"time", "latency_us", "src", "dst", "client", "upstream", "listener"} {
				delete(m, k)
			}
		}
		logs[reuse] = lines
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
