package capture

import (
	"bytes"
	"runtime/debug"
	"testing"

	"github.com/manifester/manifester/internal/hostile"
)

// tinySegments writes a capture of one connection whose client sends n
// one-byte segments, each after a hole of one byte that is never filled
// or acknowledged, in ascending or descending sequence order: every one
// waits in the out-of-order buffer.
func tinySegments(t *testing.T, n int, descending bool) []byte {
	t.Helper()
	buf, c := openCapture(t)
	base := c.Seq(ClientToServer)
	for k := range n {
		if descending {
			k = n - 1 - k
		}
		if err := c.WriteSegment(ClientToServer, t0, base+uint32(2*k+1), []byte{'x'}); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestReadTinySegmentsBounded: one-byte segments after holes cost the
// out-of-order buffer a page each, not a byte, so that their bookkeeping
// (a slice header and a time each, ~64 bytes) stays within the buffer's
// budget. With MaxBuffered 256 pages (486 KB), 100,000 such segments
// held some 10 MB of heap before (and, in descending order, took a
// quadratic time to insert); now a connection holds at most 64. The
// bound leaves room for the garbage the read leaves.
func TestReadTinySegmentsBounded(t *testing.T) {
	opts := Options{Known: known(t), MaxBuffered: 256}
	defer debug.SetGCPercent(debug.SetGCPercent(10)) // garbage is not what is measured
	for _, c := range []struct {
		n          int
		descending bool
	}{{100000, false}, {40000, true}} {
		descending := c.descending
		data := tinySegments(t, c.n, descending)
		var st Stats
		var err error
		u := hostile.Measure(func() {
			st, err = Read(bytes.NewReader(data), opts, func(*Event) error { return nil })
		})
		if err != nil {
			t.Fatal(err)
		}
		if st.Gaps == 0 || st.TCPPackets != int64(c.n+3) {
			t.Fatalf("descending %v: %+v", descending, st)
		}
		if u.Peak > 6<<20 {
			t.Errorf("descending %v: a %d-byte capture of tiny segments peaked at %d bytes of heap", descending, len(data), u.Peak)
		}
	}
}
