package cli

import (
	"bytes"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/manifester/manifester/bench/corpus"
	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/schema"
)

// BenchmarkDecodePcapJSON measures `decode --pcap FILE --format json` end
// to end (reading, reassembly, decoding on every core, JSON lines in
// capture order, output discarded) on a capture of the benchmark corpus's
// exchanges (bench/corpus) eight times over, on four connections: about 19 MB (the spec is loaded
// on each run, as the command does).
func BenchmarkDecodePcapJSON(b *testing.B) {
	reg, err := schema.Load(spec43)
	if err != nil {
		b.Fatal(err)
	}
	xs := corpus.Exchanges(func(key int16) (int16, int16, bool) {
		api, ok := reg.API(key)
		if !ok || api.Reserved() {
			return 0, 0, false
		}
		return api.Request.Valid.Lo, api.Request.Valid.Hi, true
	})
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.PCAP)
	if err != nil {
		b.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for c := 0; c < 4; c++ {
		conn := w.Conn(netip.MustParseAddrPort("10.0.0.2:"+strconv.Itoa(40000+c)), netip.MustParseAddrPort("10.0.0.1:9092"))
		if err := conn.Open(at); err != nil {
			b.Fatal(err)
		}
		for i := c; i < 8*len(xs); i += 4 {
			x := xs[i%len(xs)]
			// kmsg fills tagged fields at versions that do not define
			// them; such frames are not counted here (pcapgen drops them
			// too), but still decoded.
			if err := conn.Write(capture.ClientToServer, at, x.Request.Bytes); err != nil {
				b.Fatal(err)
			}
			if err := conn.Write(capture.ServerToClient, at.Add(time.Millisecond), x.Response.Bytes); err != nil {
				b.Fatal(err)
			}
			at = at.Add(2 * time.Millisecond)
		}
		if err := conn.Close(at); err != nil {
			b.Fatal(err)
		}
	}
	path := filepath.Join(b.TempDir(), "bench.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
		Main(env, []string{"decode", "--spec", spec43, "--pcap", path, "--format", "json"})
	}
}
