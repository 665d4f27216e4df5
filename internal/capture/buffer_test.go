package capture

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"testing"
)

// TestReserveInProportion: a size prefix reserves room in proportion to
// the bytes that came, never what it claims. A client sends a request
// whose size prefix claims 64 MiB and two packets of it, the server a
// response that claims as much: reading the capture allocates a few
// hundred KB, not 64 MiB.
func TestReserveInProportion(t *testing.T) {
	xs := sampleExchanges()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, PCAP)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Conn(client, server)
	if err := c.Open(t0); err != nil {
		t.Fatal(err)
	}
	for _, x := range xs {
		c.Write(ClientToServer, t0, x.req)
		c.Write(ServerToClient, t0, x.resp)
	}
	huge := bytes.Clone(xs[0].req)
	binary.BigEndian.PutUint32(huge, 64<<20)
	huge = append(huge, make([]byte, 2*mss-len(huge))...)
	c.Write(ClientToServer, t0, huge)
	c.Write(ServerToClient, t0, huge)
	if err := c.Close(t0); err != nil {
		t.Fatal(err)
	}
	opts := Options{Known: known(t)} // the spec loaded before counting
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var cut int
	st, err := Read(bytes.NewReader(buf.Bytes()), opts, func(ev *Event) error {
		if ev.Cut != nil {
			cut++
		}
		return nil
	})
	runtime.ReadMemStats(&after)
	if err != nil || st.Requests != int64(len(xs)) || cut != 2 {
		t.Fatalf("%v; %d cut frames, %+v", err, cut, st)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 2<<20 {
		t.Errorf("reading a %d-byte capture allocated %d bytes", buf.Len(), n)
	}
}
