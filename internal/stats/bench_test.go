package stats

import "testing"

// BenchmarkAggregate adds a request and its response per iteration, and
// summarises once.
func BenchmarkAggregate(b *testing.B) {
	a := New()
	id := "client"
	req := &Record{Conn: "1", Client: "c", Server: "s", APIKey: 1, API: "Fetch", Version: 13, Size: 100, ClientID: &id}
	resp := &Record{Conn: "1", Client: "c", Server: "s", Response: true, Paired: true, APIKey: 1, Version: 13, Size: 4000, Errors: []int16{0, 0, 6}}
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		a.Add(req)
		resp.LatencyMicros = i % 5000
		a.Add(resp)
		i++
	}
	a.Summary()
}
