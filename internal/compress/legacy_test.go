package compress

import (
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/span"
)

// messageV1 lays out a legacy v1 message with kmsg and fills in its size
// and CRC-32 (IEEE, magic through value).
func messageV1(offset int64, attrs int8, key, value []byte) []byte {
	m := kmsg.MessageV1{Offset: offset, Magic: 1, Attributes: attrs, Timestamp: 1700000000000, Key: key, Value: value}
	b := m.AppendTo(nil)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
	return b
}

// TestLegacyWrapper: old Fetch data can hold a compressed v1 wrapper
// message whose value is an inner MessageSet; its messages show in the
// inflated tree.
func TestLegacyWrapper(t *testing.T) {
	c := loadCodec(t)
	inner := append(messageV1(0, 0, []byte("k0"), []byte("legacy one")), messageV1(1, 0, nil, []byte("legacy two"))...)
	for name, tc := range map[string]struct {
		codec int
		data  []byte
	}{"gzip": {Gzip, gz(t, inner)}, "snappy": {Snappy, snappy.Encode(nil, inner)}} {
		wrapper := messageV1(1, int8(tc.codec), nil, tc.data)
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = 4
		tp := kmsg.NewFetchResponseTopic()
		tp.Topic = "old"
		p := kmsg.NewFetchResponseTopicPartition()
		p.RecordBatches = wrapper
		tp.Partitions = append(tp.Partitions, p)
		resp.Topics = append(resp.Topics, tp)
		body := resp.AppendTo(nil)
		frame := binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
		frame = binary.BigEndian.AppendUint32(frame, 9)
		frame = append(frame, body...)
		api, _ := c.Reg.Lookup("Fetch")
		f, err := c.DecodeResponse(frame, api, 4, codec.Options{Spans: true})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var vals []string
		tr := f.SpanTree()
		tr.Walk(tr.Root(), func(id span.ID, _ int) {
			d := tr.Detached(id)
			if d == nil {
				return
			}
			if err := d.Err(d.Root()); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			d.Walk(d.Root(), func(x span.ID, _ int) {
				if d.Name(x) == "value" {
					vals = append(vals, string(d.ValueBytes(x)))
				}
			})
		})
		if strings.Join(vals, "|") != "legacy one|legacy two" {
			t.Errorf("%s: inner values %q", name, vals)
		}
	}
}
