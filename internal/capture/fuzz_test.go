package capture

import (
	"bytes"
	"testing"
)

// FuzzRead (run: go test -fuzz FuzzRead -fuzzminimizetime 5x ./internal/capture;
// each read sets up a reassembler, so minimising at the default 60s per
// input stalls) feeds arbitrary bytes to the capture reader, seeded with small
// captures written at test time (pcap, pcapng, one starting
// mid-connection). Properties: no panic, no hang, and every frame handed
// out is made of bytes the input carried (their total cannot exceed it).
func FuzzRead(f *testing.F) {
	xs := sampleExchanges()
	t := &testing.T{}
	f.Add(writeCapture(t, PCAP, xs, true, 0, 0))
	f.Add(writeCapture(t, PCAPNG, xs, true, 0, 0))
	f.Add(writeCapture(t, PCAP, xs[:2], false, 5, 7))
	opts := Options{Known: known(f), Verify: verify(f), MaxFrame: 1 << 20, MaxBuffered: 256}
	f.Fuzz(func(t *testing.T, data []byte) {
		var total int
		Read(bytes.NewReader(data), opts, func(ev *Event) error {
			total += len(ev.Data)
			if len(ev.Data) < 4 {
				t.Fatalf("frame of %d bytes", len(ev.Data))
			}
			return nil
		})
		if total > len(data) {
			t.Fatalf("%d frame bytes out of a %d-byte input", total, len(data))
		}
	})
}
