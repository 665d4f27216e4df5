package capture

import (
	"bytes"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestReadEvictsQuietest: with more connections open at once than
// Options.MaxConns, the quietest are finished early and counted; one that
// stays busy keeps its connection throughout; every frame is still
// delivered; Closed is called once per connection, after its last frame;
// and an evicted connection that sends again is read as a new connection
// joined midway.
func TestReadEvictsQuietest(t *testing.T) {
	const maxConns, others = 8, 20
	var buf bytes.Buffer
	w, err := NewWriter(&buf, PCAP)
	if err != nil {
		t.Fatal(err)
	}
	at := t0
	step := func() time.Time { at = at.Add(time.Millisecond); return at }
	exchange := func(c *ConnWriter, corr int32) {
		t.Helper()
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Version = 4
		hb.Group, hb.MemberID = "g", fmt.Sprint("m", corr)
		hbr := kmsg.NewPtrHeartbeatResponse()
		hbr.Version = 4
		if err := c.Write(ClientToServer, step(), reqFrame(hb, corr)); err != nil {
			t.Fatal(err)
		}
		if err := c.Write(ServerToClient, step(), respFrame(hbr, corr)); err != nil {
			t.Fatal(err)
		}
	}
	busy := w.Conn(client, server)
	if err := busy.Open(step()); err != nil {
		t.Fatal(err)
	}
	var quiet []*ConnWriter
	corr := int32(1)
	for i := range others {
		c := w.Conn(netip.AddrPortFrom(netip.MustParseAddr("10.0.1.1"), uint16(40000+i)), server)
		if err := c.Open(step()); err != nil {
			t.Fatal(err)
		}
		exchange(c, corr)
		corr++
		exchange(busy, corr)
		corr++
		quiet = append(quiet, c)
	}
	exchange(quiet[0], corr) // long after it was evicted
	for _, c := range append(quiet, busy) {
		if err := c.Close(step()); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}

	closed := map[int]int{}
	var frames, busyIDs, lateIDs []int
	var lateMidway bool
	opts := Options{Known: known(t), Verify: verify(t), MaxConns: maxConns, Closed: func(c *Conn) { closed[c.ID]++ }}
	st, err := Read(bytes.NewReader(buf.Bytes()), opts, func(ev *Event) error {
		if closed[ev.Conn.ID] > 0 {
			t.Errorf("a frame of connection %d after it was closed", ev.Conn.ID)
		}
		frames = append(frames, ev.Conn.ID)
		switch ev.Conn.Client {
		case client:
			busyIDs = append(busyIDs, ev.Conn.ID)
		case netip.MustParseAddrPort("10.0.1.1:40000"):
			lateIDs = append(lateIDs, ev.Conn.ID)
			lateMidway = !ev.Conn.SawSYN
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * (2*others + 1); len(frames) != want {
		t.Errorf("%d frames, want %d", len(frames), want)
	}
	for _, id := range busyIDs {
		if id != busyIDs[0] {
			t.Errorf("the busy connection's frames on connections %v: it was evicted", busyIDs)
			break
		}
	}
	if len(lateIDs) != 4 || lateIDs[0] != lateIDs[1] || lateIDs[2] != lateIDs[3] || lateIDs[2] == lateIDs[0] || !lateMidway {
		t.Errorf("the connection that sent again: frames on connections %v (the last joined midway: %v), want two then two on a new one", lateIDs, lateMidway)
	}
	if st.Connections != others+2 || len(closed) != others+2 {
		t.Errorf("%d connections, %d closed; want %d", st.Connections, len(closed), others+2)
	}
	for id, n := range closed {
		if n != 1 {
			t.Errorf("connection %d closed %d times", id, n)
		}
	}
	// The busy connection and the newest quiet ones fit; the rest went,
	// in passes that each free a quarter of the table.
	if st.Evicted < others+1-maxConns || st.Evicted > others {
		t.Errorf("%d connections evicted, want between %d and %d", st.Evicted, others+1-maxConns, others)
	}
	if st.Requests != 2*others+1 || st.Responses != 2*others+1 || st.Unpaired != 0 {
		t.Errorf("stats %+v", st)
	}
}
