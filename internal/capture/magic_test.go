package capture

import (
	"bytes"
	"testing"
)

// TestIsCapture recognises what Writer writes and refuses Kafka frames,
// text and short input.
func TestIsCapture(t *testing.T) {
	for _, f := range []Format{PCAP, PCAPNG} {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, f)
		if err != nil {
			t.Fatal(err)
		}
		c := w.Conn(client, server)
		if err := c.Open(t0); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(t0); err != nil {
			t.Fatal(err)
		}
		if fl, ok := any(w).(interface{ Flush() error }); ok {
			if err := fl.Flush(); err != nil {
				t.Fatal(err)
			}
		}
		if !IsCapture(buf.Bytes()) {
			t.Errorf("format %v: the written header % x is not recognised", f, buf.Bytes()[:min(8, buf.Len())])
		}
	}
	for _, m := range [][]byte{{0xd4, 0xc3, 0xb2, 0xa1}, {0xa1, 0xb2, 0xc3, 0xd4}, {0x4d, 0x3c, 0xb2, 0xa1}, {0xa1, 0xb2, 0x3c, 0x4d}, {0x0a, 0x0d, 0x0d, 0x0a, 0xff}} {
		if !IsCapture(m) {
			t.Errorf("% x is not recognised", m)
		}
	}
	for _, b := range [][]byte{nil, {0xa1, 0xb2, 0xc3}, {0, 0, 0, 12, 0, 18}, []byte("00 00 00 0c"), []byte("{\"hex\":1}")} {
		if IsCapture(b) {
			t.Errorf("% x is taken for a capture", b)
		}
	}
}
