package filter

import "testing"

// BenchmarkMatch evaluates a typical expression on a response frame.
func BenchmarkMatch(b *testing.B) {
	f, err := Compile("api == Fetch and (error != NONE or latency_us > 1000) and topic contains ord", apis)
	if err != nil {
		b.Fatal(err)
	}
	fr := frames["fetchResp"]
	b.ReportAllocs()
	for b.Loop() {
		f.Match(fr)
	}
}
