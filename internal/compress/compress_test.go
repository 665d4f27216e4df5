package compress

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testdeadline"
	"github.com/manifester/manifester/internal/testshared"
	"github.com/manifester/manifester/internal/wire"
)

// appendRecord writes one Record v2 (no headers).
func appendRecord(dst []byte, offsetDelta int32, key, value []byte) []byte {
	var body []byte
	body = append(body, 0)             // attributes
	body = wire.AppendVarlong(body, 0) // timestampDelta
	body = wire.AppendVarint(body, offsetDelta)
	body = wire.AppendVarint(body, int32(len(key)))
	body = append(body, key...)
	body = wire.AppendVarint(body, int32(len(value)))
	body = append(body, value...)
	body = wire.AppendVarint(body, 0) // headers
	dst = wire.AppendVarint(dst, int32(len(body)))
	return append(dst, body...)
}

func area(n int) ([]byte, []string) {
	var b []byte
	var vals []string
	for i := 0; i < n; i++ {
		v := fmt.Sprintf("value %d %s", i, strings.Repeat("x", 100))
		vals = append(vals, v)
		b = appendRecord(b, int32(i), []byte(fmt.Sprint("k", i)), []byte(v))
	}
	return b, vals
}

func gz(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func lz(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return buf.Bytes()
}

func zs(t *testing.T, b []byte) []byte {
	e, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	return e.EncodeAll(b, nil)
}

// xerial frames b as snappy-java does: magic, version 1, compat 1, and
// blocks of at most 32 KiB.
func xerial(b []byte, blockSize int) []byte {
	out := append([]byte(nil), xerialMagic...)
	out = binary.BigEndian.AppendUint32(out, 1)
	out = binary.BigEndian.AppendUint32(out, 1)
	for len(b) > 0 {
		n := min(blockSize, len(b))
		blk := snappy.Encode(nil, b[:n])
		out = binary.BigEndian.AppendUint32(out, uint32(len(blk)))
		out = append(out, blk...)
		b = b[n:]
	}
	return out
}

func TestCodecs(t *testing.T) {
	raw, _ := area(50)
	for name, tc := range map[string]struct {
		codec int
		data  []byte
	}{
		"gzip":          {Gzip, gz(t, raw)},
		"snappy xerial": {Snappy, xerial(raw, 1024)},
		"snappy raw":    {Snappy, snappy.Encode(nil, raw)},
		"lz4":           {LZ4, lz(t, raw)},
		"zstd":          {Zstd, zs(t, raw)},
	} {
		got, err := Decompress(tc.codec, tc.data)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(got, raw) {
			t.Errorf("%s: inflated bytes differ", name)
		}
	}
	if _, err := Decompress(5, []byte{1}); !errors.Is(err, ErrUnknownCodec) {
		t.Errorf("codec 5: %v", err)
	}
	for _, c := range []int{Gzip, Snappy, LZ4, Zstd} {
		if _, err := Decompress(c, []byte("definitely not compressed data")); err == nil {
			t.Errorf("codec %d accepted garbage", c)
		}
	}
}

// TestBomb: a small input that inflates beyond the limit fails without
// allocating the whole output.
func TestBomb(t *testing.T) {
	zeros := make([]byte, 8<<20)
	for name, tc := range map[string]struct {
		codec int
		data  []byte
	}{
		"gzip": {Gzip, gz(t, zeros)}, "snappy": {Snappy, xerial(zeros, 64<<10)}, "lz4": {LZ4, lz(t, zeros)}, "zstd": {Zstd, zs(t, zeros)},
	} {
		_, err := DecompressLimit(tc.codec, tc.data, 1<<20)
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s (%d bytes): %v, want ErrTooLarge", name, len(tc.data), err)
		}
	}
}

func loadCodec(t *testing.T) *codec.Codec {
	reg, err := schema.Load(testshared.Spec(t, "4.3"))
	if err != nil {
		t.Fatal(err)
	}
	c := codec.New(reg)
	c.Decompress = Decompressor()
	return c
}

// produceFrame wraps a record batch in a Produce v9 request built by kmsg.
func produceFrame(batch []byte) []byte {
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	req.Acks = -1
	req.TimeoutMillis = 1000
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = "t"
	p := kmsg.NewProduceRequestTopicPartition()
	p.Records = batch
	tp.Partitions = append(tp.Partitions, p)
	req.Topics = append(req.Topics, tp)
	return kmsg.NewRequestFormatter().AppendRequest(nil, req, 1)
}

// inflatedValues decodes a frame and returns the record values found in
// the decompressed subtrees.
func inflatedValues(t *testing.T, c *codec.Codec, frame []byte) []string {
	t.Helper()
	f, err := c.DecodeRequest(frame, codec.Options{Spans: true})
	if err != nil {
		t.Fatal(err)
	}
	var vals []string
	tr := f.SpanTree()
	tr.Walk(tr.Root(), func(id span.ID, _ int) {
		d := tr.Detached(id)
		if d == nil {
			return
		}
		if err := d.Err(d.Root()); err != nil {
			t.Errorf("inflated records: %v", err)
		}
		d.Walk(d.Root(), func(x span.ID, _ int) {
			if d.Name(x) == "value" {
				vals = append(vals, string(d.ValueBytes(x)))
			}
		})
	})
	return vals
}

// TestBatchesFromLibraries compresses records with each library, wraps them
// in a batch and a Produce request, and decodes the records back.
func TestBatchesFromLibraries(t *testing.T) {
	c := loadCodec(t)
	raw, want := area(20)
	for name, tc := range map[string]struct {
		codec int
		data  []byte
	}{
		"gzip": {Gzip, gz(t, raw)}, "snappy": {Snappy, xerial(raw, 32<<10)}, "lz4": {LZ4, lz(t, raw)}, "zstd": {Zstd, zs(t, raw)},
	} {
		batch := records.AppendBatch(nil, &records.Batch{Attributes: int16(tc.codec), LastOffsetDelta: 19, NumRecords: 20, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Records: tc.data})
		got := inflatedValues(t, c, produceFrame(batch))
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: got %d values, want %d", name, len(got), len(want))
		}
	}
}

// TestBatchesFromKgo produces with franz-go's kgo client, which compresses
// with its own code, to the in-process kfake broker, takes the Produce
// requests kfake receives and decodes their batches.
func TestBatchesFromKgo(t *testing.T) {
	c := loadCodec(t)
	for name, cc := range map[string]kgo.CompressionCodec{
		"gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
	} {
		t.Run(name, func(t *testing.T) {
			cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"))
			if err != nil {
				t.Fatal(err)
			}
			defer cluster.Close()
			frames := make(chan []byte, 16)
			cluster.ControlKey(int16(kmsg.Produce), func(r kmsg.Request) (kmsg.Response, error, bool) {
				cluster.KeepControl()
				req := r.(*kmsg.ProduceRequest)
				frames <- kmsg.NewRequestFormatter().AppendRequest(nil, req, 5)
				return nil, nil, false
			})
			cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ProducerBatchCompression(cc), kgo.DefaultProduceTopic("t"), kgo.ProducerLinger(50*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			ctx, cancel := testdeadline.From(t, context.Background())
			defer cancel()
			var want []string
			var recs []*kgo.Record
			for i := 0; i < 10; i++ {
				v := fmt.Sprintf("kgo %s record %d %s", name, i, strings.Repeat("z", 200))
				want = append(want, v)
				recs = append(recs, &kgo.Record{Value: []byte(v)})
			}
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			var got []string
			compressed := false
			for len(frames) > 0 {
				fr := <-frames
				f, err := c.DecodeRequest(fr, codec.Options{Spans: true})
				if err != nil {
					t.Fatal(err)
				}
				tr := f.SpanTree()
				tr.Walk(tr.Root(), func(id span.ID, _ int) {
					if n := tr.N(id); tr.Name(id) == "attributes" && n.Cat == span.CatRecordBatch && n.Int&7 == int64(codecOf(name)) {
						compressed = true
					}
				})
				got = append(got, inflatedValues(t, c, fr)...)
			}
			if !compressed {
				t.Fatalf("kgo sent no %s batch", name)
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("got %q\nwant %q", got, want)
			}
		})
	}
}

func codecOf(name string) int {
	return map[string]int{"gzip": Gzip, "snappy": Snappy, "lz4": LZ4, "zstd": Zstd}[name]
}
