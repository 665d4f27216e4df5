package english

import "testing"

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{Count(0, "frame"), "0 frames"},
		{Count(1, "frame"), "1 frame"},
		{Count(-1, "byte"), "-1 byte"},
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
