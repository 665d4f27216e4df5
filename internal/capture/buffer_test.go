package capture

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// keepExchanges are gapExchanges (frames of one and of several segments)
// and a Metadata response of about 75 KB, twice over, with correlation
// ids 1, 2, ... in order: the half's buffers grow, are given away and
// start again at every size.
func keepExchanges() []exchange {
	mdr := kmsg.NewPtrMetadataResponse()
	mdr.Version = 12
	topic := "big"
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic = &topic
	for p := int32(0); p < 2000; p++ {
		mp := kmsg.NewMetadataResponseTopicPartition()
		mp.Partition, mp.Replicas, mp.ISR = p, []int32{1, 2, 3}, []int32{1, 2}
		mt.Partitions = append(mt.Partitions, mp)
	}
	mdr.Topics = append(mdr.Topics, mt)
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: &topic}}
	xs := gapExchanges()
	xs = append(xs[:2:2], append([]exchange{{reqFrame(md, 0), respFrame(mdr, 0)}}, xs[2:]...)...)
	xs = append(xs, xs...)
	out := make([]exchange, len(xs))
	for i, x := range xs {
		req, resp := bytes.Clone(x.req), bytes.Clone(x.resp)
		binary.BigEndian.PutUint32(req[8:], uint32(i+1))
		binary.BigEndian.PutUint32(resp[4:], uint32(i+1))
		out[i] = exchange{req, resp}
	}
	return out
}

// openCapture starts a pcap capture in memory with one connection
// opened, from client to server, at t0.
func openCapture(t *testing.T) (*bytes.Buffer, *ConnWriter) {
	t.Helper()
	buf := &bytes.Buffer{}
	w, err := NewWriter(buf, PCAP)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Conn(client, server)
	if err := c.Open(t0); err != nil {
		t.Fatal(err)
	}
	return buf, c
}

// TestKeep keeps every frame of three captures with Event.Keep and
// checks them after the whole read against the frames sent: the reader
// must never write again to a buffer it gave away. Each direction's
// frames are sent in writes cut into packets of mss bytes: a write per
// frame (every frame starts a packet); one write for all (packets end
// inside frames and hold the end of one and the start of the next); a
// write ending two bytes into each frame (every size prefix is cut in
// two). A frame that spans packets must be given without a copy (it was
// assembled in the half's buffer); with a write per frame, one that lies
// in a packet is copied (the packet is the pcap reader's).
func TestKeep(t *testing.T) {
	xs := keepExchanges()
	for _, mode := range []string{"a write per frame", "one write", "prefixes cut"} {
		buf, c := openCapture(t)
		// sent holds each direction's frames; spans says whether each
		// spans packets.
		var sent [2][][]byte
		var spans [2][]bool
		for d := range 2 {
			var all []byte
			var starts []int
			for _, x := range xs {
				f := [2][]byte{x.req, x.resp}[d]
				starts = append(starts, len(all))
				all = append(all, f...)
				sent[d] = append(sent[d], f)
			}
			var cuts []int // where writes start
			switch mode {
			case "a write per frame":
				cuts = starts
			case "one write":
				cuts = []int{0}
			case "prefixes cut":
				cuts = []int{0}
				for _, at := range starts[1:] {
					cuts = append(cuts, at+2)
				}
			}
			var packets []int // where packets start
			for i, at := range cuts {
				end := len(all)
				if i+1 < len(cuts) {
					end = cuts[i+1]
				}
				for p := at; p < end; p += mss {
					packets = append(packets, p)
				}
				if err := c.Write(Dir(d), t0, all[at:end]); err != nil {
					t.Fatal(err)
				}
			}
			for i, f := range sent[d] {
				k, _ := slices.BinarySearch(packets, starts[i]+1)
				spans[d] = append(spans[d], k < len(packets) && packets[k] < starts[i]+len(f))
			}
		}
		if err := c.Close(t0); err != nil {
			t.Fatal(err)
		}
		var kept [2][][]byte
		var given [2][]bool
		st, err := Read(bytes.NewReader(buf.Bytes()), Options{Known: known(t)}, func(ev *Event) error {
			k := ev.Keep()
			kept[ev.Dir] = append(kept[ev.Dir], k)
			given[ev.Dir] = append(given[ev.Dir], &k[0] == &ev.Data[0])
			if again := ev.Keep(); &again[0] == &k[0] || !bytes.Equal(again, k) {
				t.Errorf("%s: %v frame %d: a second Keep gives the same buffer or other bytes", mode, ev.Dir, len(kept[ev.Dir])-1)
			}
			return nil
		})
		if err != nil || st.Requests != int64(len(xs)) || st.Responses != int64(len(xs)) || st.Unpaired != 0 || st.SkippedBytes != 0 {
			t.Fatalf("%s: %v, %+v", mode, err, st)
		}
		for d := range 2 {
			if len(kept[d]) != len(sent[d]) {
				t.Fatalf("%s, %v: %d frames, want %d", mode, Dir(d), len(kept[d]), len(sent[d]))
			}
			n := 0
			for i := range sent[d] {
				if !bytes.Equal(kept[d][i], sent[d][i]) {
					t.Errorf("%s, %v frame %d (%d bytes): the kept bytes changed after the call", mode, Dir(d), i, len(sent[d][i]))
				}
				switch {
				case spans[d][i] && !given[d][i]:
					t.Errorf("%s, %v frame %d spans packets but was copied", mode, Dir(d), i)
				case mode == "a write per frame" && !spans[d][i] && given[d][i]:
					t.Errorf("%s, %v frame %d lies in one packet but was not copied", mode, Dir(d), i)
				}
				if given[d][i] {
					n++
				}
			}
			if n == 0 {
				t.Errorf("%s, %v: no frame given without a copy", mode, Dir(d))
			}
		}
	}
}

// TestReserveInProportion: a size prefix reserves room in proportion to
// the bytes that came, never what it claims. A client sends a request
// whose size prefix claims 64 MiB and two packets of it, the server a
// response that claims as much after a 75 KB response that the consumer
// kept (its half may reserve that much again): reading the capture
// allocates a few hundred KB, not 64 MiB.
func TestReserveInProportion(t *testing.T) {
	xs := keepExchanges()[:3]
	buf, c := openCapture(t)
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
		ev.Keep()
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
