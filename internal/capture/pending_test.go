package capture

import (
	"bytes"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestReadPendingTotal: requests awaiting responses are bounded over all
// connections (Options.MaxPendingTotal), not only per connection: with
// 40 connections each sending 10 requests that are never answered, and
// room for 100 in all, a connection adding one beyond the total drops its
// own oldest; every request is still counted as unanswered once, the
// answered ones are paired, and the reader's count of waiting requests
// is back at zero at the end.
func TestReadPendingTotal(t *testing.T) {
	const conns, each, total = 40, 10, 100
	var buf bytes.Buffer
	w, err := NewWriter(&buf, PCAP)
	if err != nil {
		t.Fatal(err)
	}
	at := t0
	step := func() time.Time { at = at.Add(time.Millisecond); return at }
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version = 4
	hb.Group, hb.MemberID = "g", "m"
	hbr := kmsg.NewPtrHeartbeatResponse()
	hbr.Version = 4
	var cs []*ConnWriter
	for i := range conns {
		c := w.Conn(netip.AddrPortFrom(netip.MustParseAddr("10.0.2.1"), uint16(41000+i)), server)
		if err := c.Open(step()); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	corr := int32(0)
	for range each {
		for _, c := range cs {
			corr++
			if err := c.Write(ClientToServer, step(), reqFrame(hb, corr)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The last connection's newest request is answered: it was kept.
	if err := cs[conns-1].Write(ServerToClient, step(), respFrame(hbr, corr)); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if err := c.Close(step()); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	var paired int
	rd := &reader{}
	opts := Options{Known: known(t), Verify: verify(t), MaxPendingTotal: total, readerHook: func(r *reader) { rd = r }}
	st, err := Read(bytes.NewReader(buf.Bytes()), opts, func(ev *Event) error {
		if ev.Dir == ServerToClient && ev.Request != nil {
			paired++
		}
		if rd.pending.Len() > total+conns {
			return fmt.Errorf("%d requests waiting, more than %d and one a connection", rd.pending.Len(), total)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The last connection's newest request is paired; the nine before it
	// on that connection and all the others are unanswered.
	if paired != 1 || st.Unanswered != conns*each-1 || rd.pending.Len() != 0 {
		t.Errorf("paired %d, unanswered %d, %d still counted waiting; want 1, %d, 0", paired, st.Unanswered, rd.pending.Len(), conns*each-1)
	}
}
