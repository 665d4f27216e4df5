package english

import "testing"

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{Count(0, "frame"), "0 frames"},
		{Count(1, "frame"), "1 frame"},
		{Count(-1, "byte"), "-1 bytes"},
		{Count(int64(2), "batch"), "2 batches"},
		{Count(int32(3), "prefix"), "3 prefixes"},
		{Count(int16(4), "bus"), "4 buses"},
		{Count(5, "TCP packet"), "5 TCP packets"},
		{Count(1, "TCP packet"), "1 TCP packet"},
		{Count(12, "crash"), "12 crashes"},
		{Count(2, "key"), "2 keys"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestCounts: the made-once notes are Count's, below their length and
// above it.
func TestCounts(t *testing.T) {
	c := NewCounts("batch", 3)
	for _, n := range []int64{-1, 0, 1, 2, 3, 1000} {
		if got, want := c.Of(n), Count(n, "batch"); got != want {
			t.Errorf("Of(%d) = %q, want %q", n, got, want)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = c.Of(2) }); allocs != 0 {
		t.Errorf("Of a small count allocates %v times", allocs)
	}
}
