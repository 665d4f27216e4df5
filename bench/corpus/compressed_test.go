package corpus_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/bench/corpus"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// TestCompressedExchanges: the exchanges of CompressedExchanges with zstd
// carry batches that kmsg reads, with the zstd attribute and a good CRC,
// whose records, inflated by klauspost's zstd and read by kmsg, are the
// batch's count of records with text values; and every frame decodes
// with our decoder, its batches inflated, without a fault.
func TestCompressedExchanges(t *testing.T) {
	c, _ := setup(t)
	xs := corpus.CompressedExchanges(func(key int16) (int16, int16, bool) {
		api, ok := c.Reg.API(key)
		if !ok || api.Reserved() {
			return 0, 0, false
		}
		return api.Request.Valid.Lo, api.Request.Valid.Hi, true
	}, hostile.Zstd, hostile.Compress)
	zd, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	batches := 0
	for _, x := range xs {
		if x.Request.Key != 0 {
			continue
		}
		req := kmsg.NewPtrProduceRequest()
		req.Version = x.Request.Version
		if err := req.ReadFrom(x.Request.Body()); err != nil {
			t.Fatalf("kmsg cannot read the Produce request: %v", err)
		}
		for _, tp := range req.Topics {
			for _, p := range tp.Partitions {
				var b kmsg.RecordBatch
				if err := b.ReadFrom(p.Records); err != nil {
					t.Fatalf("kmsg cannot read the batch: %v", err)
				}
				if b.Attributes&7 != 4 || uint32(b.CRC) != crc32.Checksum(p.Records[21:], castagnoli) {
					t.Fatalf("batch attributes %#x, CRC %#x: want zstd and the CRC of its bytes", b.Attributes, uint32(b.CRC))
				}
				raw, err := zd.DecodeAll(b.Records, nil)
				if err != nil {
					t.Fatalf("zstd: %v", err)
				}
				if b.NumRecords >= 25 && len(raw) < 3*len(b.Records) {
					t.Errorf("records of %d bytes inflate to %d: want them to compress as text does", len(b.Records), len(raw))
				}
				for i := int32(0); i < b.NumRecords; i++ {
					l, n := binary.Varint(raw)
					if n <= 0 || int(l) > len(raw)-n {
						t.Fatalf("record %d: length %d of %d bytes left", i, l, len(raw))
					}
					var r kmsg.Record
					if err := r.ReadFrom(raw[:n+int(l)]); err != nil {
						t.Fatalf("record %d: %v", i, err)
					}
					if !bytes.HasPrefix(r.Value, []byte("ts=")) || !bytes.HasPrefix(r.Key, []byte("key-")) {
						t.Fatalf("record %d: key %q, value %.20q: want a key and a log line", i, r.Key, r.Value)
					}
					raw = raw[n+int(l):]
				}
				if len(raw) != 0 {
					t.Errorf("%d bytes after the batch's %d records", len(raw), b.NumRecords)
				}
				batches++
			}
		}
	}
	if batches == 0 {
		t.Fatal("no Produce batches")
	}

	inflating := codec.New(c.Reg)
	inflating.Decompress, inflating.DecompressLimit = compress.Decompressor(), compress.LimitDecompressor()
	decoded, inflated := 0, 0
	for _, x := range xs {
		api, _ := c.Reg.API(x.Request.Key)
		// As bench/pcapgen does: the mixed frames with tagged fields at
		// versions without them (see setup) are left out.
		if _, err := c.DecodeRequest(x.Request.Bytes, codec.Options{}); err != nil {
			continue
		}
		if _, err := c.DecodeResponse(x.Response.Bytes, api, x.Response.Version, codec.Options{}); err != nil {
			continue
		}
		decoded++
		for _, f := range []*report.Frame{
			report.Decode(inflating, x.Request.Bytes, report.Options{}),
			report.Decode(inflating, x.Response.Bytes, report.Options{Kind: schema.TypeResponse, API: api, Version: x.Response.Version}),
		} {
			if !f.OK() {
				t.Errorf("%s v%d %s: %v", f.API, f.Version, f.Kind, f.Error)
			}
			if f.Decoded == nil || f.Decoded.SpanTree() == nil {
				t.Fatalf("%s v%d %s: no tree", f.API, f.Version, f.Kind)
			}
			for id := range f.Decoded.SpanTree().Nodes {
				if d := f.Decoded.SpanTree().Detached(span.ID(id)); d != nil {
					inflated++
				}
			}
		}
	}
	if decoded < len(xs)-10 || inflated < batches {
		t.Errorf("%d of %d exchanges decode, %d batches inflated: want all but a few, and the Produce requests' %d at least", decoded, len(xs), inflated, batches)
	}
}
