// Package hostile builds the crafted frames that the budget tests (and
// benchmarks) feed to every decoding front end: Produce requests whose
// compressed record batches inflate to far more than they weigh (many
// small batches, record-dense batches, megabytes of zeros), in each of
// Kafka's four compression codecs.
//
// The frames are written byte by byte here, independently of package
// codec's encoder, as Produce v7 (the last version before flexible
// encoding): size, request header v1, transactional_id null, acks,
// timeout, one topic with one partition whose records are the batches.
package hostile

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/manifester/manifester/internal/records"
)

// Codec attribute values (RecordBatch v2 attributes bits 0-2).
const (
	Gzip   = 1
	Snappy = 2
	LZ4    = 3
	Zstd   = 4
)

// Codecs lists the four codecs.
var Codecs = []int{Gzip, Snappy, LZ4, Zstd}

// Compress compresses data with codec at the best ratio the library
// offers (an attacker's choice).
func Compress(codec int, data []byte) []byte {
	var buf bytes.Buffer
	switch codec {
	case Gzip:
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		w.Write(data)
		w.Close()
	case Snappy:
		return snappy.Encode(nil, data) // a raw block, as some producers write
	case LZ4:
		w := lz4.NewWriter(&buf)
		w.Apply(lz4.CompressionLevelOption(lz4.Level9))
		w.Write(data)
		w.Close()
	case Zstd:
		w, _ := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithEncoderConcurrency(1))
		w.Write(data)
		w.Close()
	default:
		panic(fmt.Sprintf("hostile: unknown codec %d", codec))
	}
	return buf.Bytes()
}

// DenseRecords returns n of the smallest Record v2 entries (null key and
// value, no headers): 7 or 8 bytes each, 8 tree nodes each.
func DenseRecords(n int) []byte {
	var out []byte
	for i := 0; i < n; i++ {
		var body []byte
		body = append(body, 0)                            // attributes
		body = binary.AppendVarint(body, 0)               // timestampDelta
		body = binary.AppendVarint(body, int64(i&0xffff)) // offsetDelta
		body = binary.AppendVarint(body, -1)              // key length: null
		body = binary.AppendVarint(body, -1)              // value length: null
		body = binary.AppendVarint(body, 0)               // headers
		out = binary.AppendVarint(out, int64(len(body)))
		out = append(out, body...)
	}
	return out
}

// Batch returns a RecordBatch v2 whose records area is inner compressed
// with codec, claiming count records.
func Batch(codec int, inner []byte, count int) []byte {
	return records.AppendBatch(nil, &records.Batch{Attributes: int16(codec), NumRecords: int32(count), LastOffsetDelta: int32(max(count-1, 0)),
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Records: Compress(codec, inner)})
}

// Produce returns a Produce v7 request frame (correlation id 1, client id
// "hostile") carrying the given batches back to back in one partition.
func Produce(batches ...[]byte) []byte {
	var recs []byte
	for _, b := range batches {
		recs = append(recs, b...)
	}
	b := make([]byte, 4, 64+len(recs))
	b = binary.BigEndian.AppendUint16(b, 0) // api key: Produce
	b = binary.BigEndian.AppendUint16(b, 7) // version
	b = binary.BigEndian.AppendUint32(b, 1) // correlation id
	b = appendString(b, "hostile")          // client id
	b = binary.BigEndian.AppendUint16(b, 0xffff)
	b = binary.BigEndian.AppendUint16(b, 1)     // acks
	b = binary.BigEndian.AppendUint32(b, 30000) // timeout
	b = binary.BigEndian.AppendUint32(b, 1)     // topics
	b = appendString(b, "t")
	b = binary.BigEndian.AppendUint32(b, 1) // partitions
	b = binary.BigEndian.AppendUint32(b, 0) // partition index
	b = binary.BigEndian.AppendUint32(b, uint32(len(recs)))
	b = append(b, recs...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// Shape names one kind of hostile frame.
type Shape struct {
	Name string
	// Build returns a frame of about size bytes (at least one batch) in
	// the given codec.
	Build func(codec, size int) []byte
}

// Shapes are the hostile frames of issue 9: many small batches of
// record-dense data, few batches of many records, and batches of zeros.
var Shapes = []Shape{
	{"many small batches", func(codec, size int) []byte {
		one := Batch(codec, DenseRecords(2000), 2000)
		return Produce(repeat(one, size)...)
	}},
	{"record-dense batches", func(codec, size int) []byte {
		n := 200000
		one := Batch(codec, DenseRecords(n), n)
		if len(one) > size {
			// A codec that compresses less: fewer records per batch,
			// so that the frame is about size bytes.
			n = n * size / len(one) * 9 / 10
			one = Batch(codec, DenseRecords(n), n)
		}
		return Produce(repeat(one, size)...)
	}},
	{"zeros", func(codec, size int) []byte {
		one := Batch(codec, make([]byte, 4<<20), 1)
		return Produce(repeat(one, size)...)
	}},
}

// Example is the first frame of issue 9 at about size bytes: gzip
// batches of 1 MiB of zeros each (about 1 KiB compressed, within the
// per-batch inflation cap of 1024 times), one after another.
func Example(size int) []byte {
	return Produce(repeat(Batch(Gzip, make([]byte, 1<<20), 1), size)...)
}

// DenseExample is the other frame of issue 9 at about size bytes: gzip
// batches of 20000 of the smallest records each.
func DenseExample(size int) []byte {
	return Produce(repeat(Batch(Gzip, DenseRecords(20000), 20000), size)...)
}

// repeat returns enough copies of b to make about size bytes, at least one.
func repeat(b []byte, size int) [][]byte {
	n := max(1, size/len(b))
	out := make([][]byte, n)
	for i := range out {
		out[i] = b
	}
	return out
}
