package term

import (
	"bytes"
	"testing"
	"time"
)

func TestProgress(t *testing.T) {
	var out bytes.Buffer
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &Progress{W: &out, Name: "big.pcap", Total: 200 << 20, Now: func() time.Time { return at }}
	p.Done() // never drawn: nothing to clear
	if out.Len() != 0 {
		t.Fatalf("Done before drawing wrote %q", out.String())
	}
	p.Update(90 << 20)
	want := "\rbig.pcap [#############                 ]  45%  90/200 MB"
	if out.String() != want {
		t.Fatalf("bar %q, want %q", out.String(), want)
	}
	at = at.Add(100 * time.Millisecond)
	p.Update(100 << 20) // too soon: not drawn
	if out.String() != want {
		t.Fatalf("redrawn after 100 ms: %q", out.String())
	}
	at = at.Add(100 * time.Millisecond)
	p.Update(300 << 20) // past the end: full
	want += "\rbig.pcap [##############################] 100%  300/200 MB"
	if out.String() != want {
		t.Fatalf("bar %q, want %q", out.String(), want)
	}
	p.Done()
	p.Done()
	if want += "\r\033[K"; out.String() != want {
		t.Fatalf("after Done %q, want %q", out.String(), want)
	}
}
