package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/render/jsonr"
	rtext "github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
)

// TestHostileFrameLogBounded sends the proxy frame of issue 9 (a few KB
// of gzip batches of many small records, which took the proxy to 2.7 GB
// and wrote a 297 MB log line) and hostile frames of every shape through
// the proxy with decompression on: each is forwarded byte for byte, and
// its log line, as `proxy --log` writes it (JSON or text), is bounded by
// the frame's output budget, as is the heap the decode and the line take.
func TestHostileFrameLogBounded(t *testing.T) {
	frames := [][]byte{hostile.Example(3 << 10), hostile.DenseExample(3 << 10)}
	for _, sh := range hostile.Shapes {
		frames = append(frames, sh.Build(hostile.Zstd, 64<<10))
	}
	for i, frame := range frames {
		got := make(chan []byte, 1)
		up := fakeBroker(t, func(c net.Conn) {
			b := make([]byte, len(frame))
			io.ReadFull(c, b)
			got <- b
		})
		var u hostile.Usage
		var ev *events
		u = hostile.Measure(func() {
			var p *Proxy
			p, ev = start(t, up, func(cfg *Config) {
				cfg.Codec.Decompress = compress.Decompressor()
				cfg.Codec.DecompressLimit = compress.LimitDecompressor()
			})
			c := dial(t, p.Addr())
			c.Write(frame)
			if b := <-got; !bytes.Equal(b, frame) {
				t.Errorf("frame %d: the broker got %d bytes, not the client's %d", i, len(b), len(frame))
			}
			c.Close()
			p.Close()
		})
		fs := ev.of(EventFrame)
		if len(fs) != 1 {
			t.Fatalf("frame %d: %d frame events", i, len(fs))
		}
		f := fs[0].Frame
		limit := budget.Limits{}.For(nil, len(frame)).MaxOutput
		var js, text bytes.Buffer
		if err := jsonr.Line(&js, f); err != nil {
			t.Fatal(err)
		}
		if err := rtext.Frame(&text, f, true, rtext.Style{}); err != nil {
			t.Fatal(err)
		}
		t.Logf("frame %d: %d bytes, JSON line %d bytes, text %d bytes, peak heap %d MiB; %.160s", i, len(frame), js.Len(), text.Len(), u.Peak>>20, f.Budget)
		if int64(js.Len()) > limit+8<<10 || int64(text.Len()) > limit+8<<10 {
			t.Errorf("frame %d: log of %d (JSON) and %d (text) bytes, budget %d", i, js.Len(), text.Len(), limit)
		}
		if strings.Count(js.String(), "\n") != 1 || !json.Valid(js.Bytes()) {
			t.Errorf("frame %d: the JSON log line is not one valid line", i)
		}
		if u.Peak > 256<<20 {
			t.Errorf("frame %d: peak heap %d MiB", i, u.Peak>>20)
		}
		if f.Budget == "" && i < 2 {
			t.Errorf("frame %d: no budget note", i)
		}
	}
}

// FuzzProxyDecode feeds frames to the proxy's decoding (as a request, and
// as the response of a Produce request) with decompression on and a small
// budget, and checks that the log lines stay within the budget's output
// and valid, and inflation within its limits.
func FuzzProxyDecode(f *testing.F) {
	for _, cd := range hostile.Codecs {
		f.Add(hostile.Produce(hostile.Batch(cd, hostile.DenseRecords(300), 300), hostile.Batch(cd, make([]byte, 64<<10), 1)))
	}
	f.Add(hostile.Example(2 << 10))
	c := testCodec(f)
	c.Decompress = compress.Decompressor()
	c.DecompressLimit = compress.LimitDecompressor()
	p, err := New(Config{Listen: "127.0.0.1:0", Upstream: "127.0.0.1:1", Codec: c, Roundtrip: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { p.Close() })
	saved := frameLimits
	frameLimits = budget.Limits{Inflate: 128 << 10, Nodes: 2048, Output: 128 << 10}
	f.Cleanup(func() { frameLimits = saved })
	produce, _ := p.reg.API(0)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, opts := range []report.Options{
			{Limits: frameLimits},
			{Limits: frameLimits, Kind: schema.TypeResponse, API: produce, Version: 7},
		} {
			fr := p.decode(b, opts)
			var js, text bytes.Buffer
			if err := jsonr.Line(&js, fr); err != nil {
				t.Fatal(err)
			}
			if err := rtext.Frame(&text, fr, true, rtext.Style{}); err != nil {
				t.Fatal(err)
			}
			if js.Len() > 128<<10+8<<10 || text.Len() > 128<<10+8<<10 {
				t.Fatalf("log of %d (JSON) and %d (text) bytes for a budget of 128 KiB", js.Len(), text.Len())
			}
			if !json.Valid(js.Bytes()) {
				t.Fatalf("invalid JSON line")
			}
		}
	})
}
