package jsonr

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestAppendIntMatchesStrconv compares appendInt with strconv.AppendInt at
// every digit count's edges, for negative and large values (strconv's
// path), at random, and into buffers with and without spare capacity.
func TestAppendIntMatchesStrconv(t *testing.T) {
	vs := []int64{0, 1, 9, -1, -9, math.MinInt64, math.MaxInt64}
	for p := int64(10); p > 0 && p <= 1e18; p *= 10 {
		vs = append(vs, p-1, p, p+1, -p)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		vs = append(vs, r.Int64N(1<<uint(r.IntN(62)+1)))
	}
	for _, v := range vs {
		want := strconv.AppendInt([]byte("x:"), v, 10)
		for _, room := range []int{0, 3, 9, 10, 64} {
			dst := append(make([]byte, 0, 2+room), "x:"...)
			if got := appendInt(dst, v); string(got) != string(want) {
				t.Fatalf("appendInt(%d) with %d spare = %q, want %q", v, room, got, want)
			}
		}
	}
}
