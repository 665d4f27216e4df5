package capture

import (
	"bytes"
	"net/netip"
	"testing"
	"time"
)

// BenchmarkRead measures reading, reassembling, splitting and pairing
// (no Kafka decoding) of a capture of about 20 MB on 20 connections.
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
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n := 0
		if _, err := Read(bytes.NewReader(data), opts, func(*Event) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != 20*120*2*len(xs) {
			b.Fatalf("%d frames", n)
		}
	}
}
