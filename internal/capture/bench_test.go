package capture

import (
	"bytes"
	"net/netip"
	"testing"
	"time"
)

// BenchmarkRead measures reading, reassembling, splitting and pairing
// (no Kafka decoding) of a capture of about 20 MB on 20 connections: a
// consumer that looks at each frame during its call (count), and one
// that takes every frame for after the call with Event.Keep, as decode
// and stats do (keep).
func BenchmarkRead(b *testing.B) {
	xs := sampleExchanges()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, PCAP)
	if err != nil {
		b.Fatal(err)
	}
	at := t0
	for c := 0; c < 20; c++ {
		conn := w.Conn(netip.AddrPortFrom(client.Addr(), uint16(40000+c)), server)
		if err := conn.Open(at); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < 120; i++ {
			for _, x := range xs {
				conn.Write(ClientToServer, at, x.req)
				conn.Write(ServerToClient, at.Add(time.Millisecond), x.resp)
			}
			at = at.Add(2 * time.Millisecond)
		}
		conn.Close(at)
	}
	data := buf.Bytes()
	opts := Options{Known: known(b)}
	for _, keep := range []bool{false, true} {
		name := "count"
		if keep {
			name = "keep"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				var kept []byte
				if _, err := Read(bytes.NewReader(data), opts, func(ev *Event) error {
					n++
					if keep {
						kept = ev.Keep()
					}
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				if n != 20*120*2*len(xs) || keep && len(kept) == 0 {
					b.Fatalf("%d frames", n)
				}
			}
		})
	}
}
