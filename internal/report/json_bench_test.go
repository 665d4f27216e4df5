package report

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"

	"github.com/manifester/manifester/bench/corpus"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/schema"
)

// benchFrame is one frame of the benchmark corpus with the options that
// decode it (responses need their API and version).
type benchFrame struct {
	b []byte
	o Options
}

var (
	benchOnce   sync.Once
	benchCodec  *codec.Codec
	benchFrames []benchFrame
	benchBytes  int64
)

// corpusFrames returns every request and response of the benchmark corpus
// (bench/corpus: Produce with batches of 100 1 KiB records, Fetch with
// several batches, 1,000-partition Metadata, OffsetCommit, every API) with
// a codec prepared as the CLI prepares it (annotations, decompression).
func corpusFrames(tb testing.TB) (*codec.Codec, []benchFrame, int64) {
	tb.Helper()
	benchOnce.Do(func() {
		c := load(tb)
		c.Decompress = compress.Decompressor()
		xs := corpus.Exchanges(func(key int16) (int16, int16, bool) {
			api, ok := c.Reg.API(key)
			if !ok || api.Reserved() {
				return 0, 0, false
			}
			return api.Request.Valid.Lo, api.Request.Valid.Hi, true
		})
		for _, x := range xs {
			api, ok := c.Reg.API(x.Request.Key)
			if !ok {
				continue
			}
			benchFrames = append(benchFrames,
				benchFrame{b: x.Request.Bytes},
				benchFrame{b: x.Response.Bytes, o: Options{Kind: schema.TypeResponse, API: api, Version: x.Response.Version}})
			benchBytes += int64(len(x.Request.Bytes) + len(x.Response.Bytes))
		}
		benchCodec = c
	})
	return benchCodec, benchFrames, benchBytes
}

// BenchmarkJSONLines measures what `decode --pcap --format json` does per
// frame, on one core: Decode and write the JSON line, for every frame of
// the benchmark corpus. "encoding-json" is the original path (page.Node
// tree, hex string, encoding/json); "fast" is Options.Lean with AppendJSON
// into a reused buffer.
func BenchmarkJSONLines(b *testing.B) {
	c, frames, size := corpusFrames(b)
	b.Run("encoding-json", func(b *testing.B) {
		var out bytes.Buffer
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, f := range frames {
				out.Reset()
				line, err := json.Marshal(Decode(c, f.b, f.o))
				if err != nil {
					b.Fatal(err)
				}
				out.Write(line)
			}
		}
	})
	b.Run("fast", func(b *testing.B) {
		var buf []byte
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, f := range frames {
				o := f.o
				o.Lean = true
				var err error
				if buf, err = AppendJSON(buf[:0], Decode(c, f.b, o), JSONOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
