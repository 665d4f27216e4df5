package capture

import (
	"bytes"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/manifester/manifester/internal/tlsdecrypt"
)

// FuzzRead (run: go test -fuzz FuzzRead -fuzzminimizetime 5x ./internal/capture;
// each read sets up a reassembler, so minimising at the default 60s per
// input stalls) feeds arbitrary bytes to the capture reader, seeded with small
// captures written at test time (pcap, pcapng, one starting
// mid-connection, each kind of tunnel). Properties: no panic, no hang, every frame handed
// out is made of bytes the input carried (their total cannot exceed it),
// and the reader never writes to a frame's buffer it gave away (keeper).
func FuzzRead(f *testing.F) {
	xs := sampleExchanges()
	t := &testing.T{}
	f.Add(writeCapture(t, PCAP, xs, true, 0, 0))
	f.Add(writeCapture(t, PCAPNG, xs, true, 0, 0))
	f.Add(writeCapture(t, PCAP, xs[:2], false, 5, 7))
	// pcapng blocks the guard takes out (ngguard.go): a name resolution
	// block, an interface description, a packet block.
	ng := writeCapture(t, PCAPNG, xs[:1], true, 0, 0)
	f.Add(withNgBlocks(ng, ngBlock(4, []byte{1, 0, 6, 0, 10, 0, 0, 1, 'a', 0, 0, 0, 0, 0, 0, 0}),
		ngBlock(1, []byte{1, 0, 0, 0, 0, 0, 0, 0}), ngBlock(6, make([]byte, 20))))
	for _, m := range mutations {
		segs, _ := segments(gapExchanges())
		f.Add(writeSegments(t, m(segs), nil))
	}
	plain := writeCapture(t, PCAP, xs, true, 0, 0)
	for _, tn := range tunnels {
		f.Add(rewrap(t, plain, func(eth []byte) []byte { return tn.wrap(t, eth) }))
	}
	opts := Options{Known: known(f), Verify: verify(f), MaxFrame: 1 << 20, MaxBuffered: 256}
	f.Fuzz(func(t *testing.T, data []byte) {
		var total int
		var k keeper
		Read(bytes.NewReader(data), opts, func(ev *Event) error {
			total += len(ev.Data)
			if len(ev.Data) < 4 && ev.Cut == nil {
				t.Fatalf("frame of %d bytes", len(ev.Data))
			}
			k.keep(ev)
			return nil
		})
		if total > len(data) {
			t.Fatalf("%d frame bytes out of a %d-byte input", total, len(data))
		}
		k.check(t)
	})
}

// keeper keeps every other frame of a read with Event.Keep, and a copy of
// each as it was during its call: the reader must never write to a buffer
// it gave away.
type keeper struct {
	n         int
	kept, was [][]byte
}

func (k *keeper) keep(ev *Event) {
	if k.n++; k.n%2 == 0 {
		k.kept = append(k.kept, ev.Keep())
		k.was = append(k.was, bytes.Clone(ev.Data))
	}
}

func (k *keeper) check(t *testing.T) {
	t.Helper()
	for i := range k.kept {
		if !bytes.Equal(k.kept[i], k.was[i]) {
			t.Fatalf("kept frame %d (%d bytes) changed after its call", i, len(k.was[i]))
		}
	}
}

// mutations are segment lists with a lost segment, duplicates, and
// segments out of order: seeds for FuzzRead and TestReadMutations.
var mutations = []func([]seg) []seg{
	func(s []seg) []seg { s[findSeg(s, 3, 2)].drop = true; return s },
	func(s []seg) []seg { s[findSeg(s, 6, 0)].drop = true; return s },
	func(s []seg) []seg {
		for i := range s {
			s[i].dup = i%2 == 0
		}
		i := findSeg(s, 3, 1)
		s[i], s[i+1] = s[i+1], s[i]
		return s
	},
}

// TestReadMutations flips random bytes of captures with gaps,
// duplicates and reordering (packet headers, sequence numbers, payload)
// and reads them: no panic, no more frame bytes out than came in, and
// no kept frame written to after its call.
func TestReadMutations(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	opts := Options{Known: known(t), Verify: verify(t), MaxFrame: 1 << 20, MaxBuffered: 256}
	for _, m := range mutations {
		segs, _ := segments(gapExchanges())
		base := writeSegments(t, m(segs), nil)
		for i := 0; i < 150; i++ {
			data := bytes.Clone(base)
			for k := 0; k < 1+rng.IntN(8); k++ {
				data[24+rng.IntN(len(data)-24)] = byte(rng.Uint32())
			}
			total := 0
			var k keeper
			Read(bytes.NewReader(data), opts, func(ev *Event) error {
				total += len(ev.Data)
				k.keep(ev)
				return nil
			})
			if total > len(data) {
				t.Fatalf("%d frame bytes out of a %d-byte input", total, len(data))
			}
			k.check(t)
		}
	}
}

// FuzzReadTLS is FuzzRead with TLS secrets: connections are probed,
// decrypted, joined midway; no panic, no frame bytes beyond the input's,
// no kept frame written to after its call.
func FuzzReadTLS(f *testing.F) {
	xs := sampleExchanges()
	t := &testing.T{}
	f.Add(writeCapture(t, PCAP, xs, true, 0, 0))
	f.Add(writeCapture(t, PCAP, xs[:2], false, 5, 7))
	// A connection with no SYN carrying chained application data records.
	rec := func(n int) []byte { return append([]byte{23, 3, 3, 0, byte(n)}, make([]byte, n)...) }
	var recs []byte
	for range 4 {
		recs = append(recs, rec(40)...)
	}
	var b bytes.Buffer
	w, _ := NewWriter(&b, PCAP)
	c := w.Conn(netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:9093"))
	c.Write(ClientToServer, time.Unix(1, 0), recs)
	c.Write(ServerToClient, time.Unix(2, 0), append([]byte{22, 3, 3, 0, 4, 2, 0, 0, 0}, recs...))
	w.Flush()
	f.Add(b.Bytes())
	keys := tlsdecrypt.NewKeyLog()
	r := strings.Repeat("ab", 32)
	keylog := "CLIENT_TRAFFIC_SECRET_0 " + r + " " + strings.Repeat("01", 32) + "\nSERVER_TRAFFIC_SECRET_0 " + r + " " + strings.Repeat("02", 48) +
		"\nCLIENT_RANDOM " + strings.Repeat("cd", 32) + " " + strings.Repeat("03", 48) + "\n"
	if err := keys.Read(strings.NewReader(keylog), "keylog"); err != nil {
		f.Fatal(err)
	}
	// Few trials for joining midway, so that an input costs milliseconds.
	opts := Options{Known: known(f), Verify: verify(f), MaxFrame: 1 << 20, MaxBuffered: 256, TLSKeys: keys, MidwayTrials: 1 << 12}
	f.Fuzz(func(t *testing.T, data []byte) {
		var total int
		var k keeper
		st, _ := Read(bytes.NewReader(data), opts, func(ev *Event) error {
			total += len(ev.Data)
			k.keep(ev)
			return nil
		})
		if total > len(data) || st.TLS.Decrypted > st.TLS.Connections {
			t.Fatalf("%d frame bytes out of a %d-byte input; %+v", total, len(data), st.TLS)
		}
		k.check(t)
	})
}
