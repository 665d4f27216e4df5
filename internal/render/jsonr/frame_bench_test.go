package jsonr

import (
	"sync"
	"testing"

	"github.com/manifester/manifester/bench/corpus"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testframes"
)

// benchFrame is one frame of the benchmark corpus with the options that
// decode it (responses need their API and version).
type benchFrame struct {
	b []byte
	o report.Options
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
// a codec prepared as the CLI prepares it (decompression; notes are the
// tree's, made when written).
func corpusFrames(tb testing.TB) (*codec.Codec, []benchFrame, int64) {
	tb.Helper()
	benchOnce.Do(func() {
		c := testframes.Codec(tb, "4.3")
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
				benchFrame{b: x.Response.Bytes, o: report.Options{Kind: schema.TypeResponse, API: api, Version: x.Response.Version}})
			benchBytes += int64(len(x.Request.Bytes) + len(x.Response.Bytes))
		}
		benchCodec = c
	})
	return benchCodec, benchFrames, benchBytes
}

// BenchmarkJSONLines measures what `decode --pcap --format json` does per
// frame, on one core, for every frame of the benchmark corpus:
// "decode+line" decodes (Options.Lean) and appends the line to a reused
// buffer; "write" only writes the lines of frames decoded before the
// timer starts (their span trees made once, as a decoder that builds
// them directly would have them).
func BenchmarkJSONLines(b *testing.B) {
	c, frames, size := corpusFrames(b)
	b.Run("decode+line", func(b *testing.B) {
		var buf []byte
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, f := range frames {
				o := f.o
				o.Lean = true
				var err error
				if buf, err = AppendLine(buf[:0], report.Decode(c, f.b, o), Options{}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("write", func(b *testing.B) {
		var fs []*report.Frame
		for _, f := range frames {
			o := f.o
			o.Lean = true
			r := report.Decode(c, f.b, o)
			r.SpanTree()
			fs = append(fs, r)
		}
		var buf []byte
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, f := range fs {
				var err error
				if buf, err = AppendLine(buf[:0], f, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
