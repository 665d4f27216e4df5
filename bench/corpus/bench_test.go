package corpus_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/bench/corpus"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testshared"
	"github.com/manifester/manifester/internal/wire"
)

var specDir = testshared.SpecPath("4.3")

var (
	setupOnce sync.Once
	theCodec  *codec.Codec
	workloads []corpus.Workload
	setupErr  error
	dropped   []corpus.Frame
)

func setup(tb testing.TB) (*codec.Codec, []corpus.Workload) {
	tb.Helper()
	testshared.Dir(tb)
	setupOnce.Do(func() {
		reg, err := schema.Load(specDir)
		if err != nil {
			setupErr = err
			return
		}
		theCodec = codec.New(reg)
		workloads = corpus.Build(func(key int16) (int16, int16, bool) {
			api, ok := reg.API(key)
			if !ok || api.Reserved() {
				return 0, 0, false
			}
			return api.Request.Valid.Lo, api.Request.Valid.Hi, true
		})
		// kmsg writes a tagged field whenever it is set, even at versions
		// where the spec does not define the field (Kafka's own code
		// refuses to). The mixed workload's filler cannot know those
		// versions, so such frames are dropped here; every other frame
		// must decode (TestCorpus).
		for wi := range workloads {
			w := &workloads[wi]
			kept := w.Frames[:0]
			for i := range w.Frames {
				_, err := ourDecode(theCodec, &w.Frames[i], codec.Options{})
				if w.Name == "mixed" && errors.Is(err, wire.ErrTagVersion) {
					dropped = append(dropped, w.Frames[i])
					continue
				}
				kept = append(kept, w.Frames[i])
			}
			w.Frames = kept
		}
	})
	if setupErr != nil {
		tb.Fatalf("loading %s: %v", specDir, setupErr)
	}
	return theCodec, workloads
}

// ourDecode decodes one frame with manifester.
func ourDecode(c *codec.Codec, f *corpus.Frame, opts codec.Options) (*codec.Frame, error) {
	if f.Request {
		return c.DecodeRequest(f.Bytes, opts)
	}
	api, ok := c.Reg.API(f.Key)
	if !ok {
		return nil, fmt.Errorf("unknown key %d", f.Key)
	}
	return c.DecodeResponse(f.Bytes, api, f.Version, opts)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// kmsgDecode does with kmsg what manifester's decoder does: read the header
// (as kfake does), the body with ReadFrom, and every RecordBatch and record
// of records fields, checking each batch's CRC-32C (as kgo does when
// consuming).
func kmsgDecode(f *corpus.Frame) (any, error) {
	b := f.Bytes
	if f.Request {
		key := int16(binary.BigEndian.Uint16(b[4:]))
		ver := int16(binary.BigEndian.Uint16(b[6:]))
		_ = int32(binary.BigEndian.Uint32(b[8:]))
		n := int(int16(binary.BigEndian.Uint16(b[12:])))
		clientID := string(b[14 : 14+n])
		_ = clientID
		req := kmsg.RequestForKey(key)
		req.SetVersion(ver)
		if err := req.ReadFrom(b[f.BodyOff:]); err != nil {
			return nil, err
		}
		return req, kmsgRecords(req)
	}
	_ = int32(binary.BigEndian.Uint32(b[4:]))
	resp := kmsg.ResponseForKey(f.Key)
	resp.SetVersion(f.Version)
	if err := resp.ReadFrom(b[f.BodyOff:]); err != nil {
		return nil, err
	}
	return resp, kmsgRecords(resp)
}

func kmsgRecords(m any) error {
	switch m := m.(type) {
	case *kmsg.ProduceRequest:
		for i := range m.Topics {
			for j := range m.Topics[i].Partitions {
				if err := kmsgBatches(m.Topics[i].Partitions[j].Records); err != nil {
					return err
				}
			}
		}
	case *kmsg.FetchResponse:
		for i := range m.Topics {
			for j := range m.Topics[i].Partitions {
				if err := kmsgBatches(m.Topics[i].Partitions[j].RecordBatches); err != nil {
					return err
				}
			}
		}
	case *kmsg.ShareFetchResponse:
		for i := range m.Topics {
			for j := range m.Topics[i].Partitions {
				if err := kmsgBatches(m.Topics[i].Partitions[j].Records); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

var errCRC = errors.New("crc mismatch")

func kmsgBatches(b []byte) error {
	for len(b) >= 12 {
		length := int(int32(binary.BigEndian.Uint32(b[8:])))
		if length < 49 || 12+length > len(b) {
			return fmt.Errorf("bad batch length %d", length)
		}
		raw := b[:12+length]
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(raw); err != nil {
			return err
		}
		if crc32.Checksum(raw[21:], castagnoli) != uint32(rb.CRC) {
			return errCRC
		}
		recs := rb.Records
		for i := 0; i < int(rb.NumRecords); i++ {
			l, n := binary.Varint(recs)
			if n <= 0 || int(l) < 0 || n+int(l) > len(recs) {
				return fmt.Errorf("bad record length")
			}
			var r kmsg.Record
			if err := r.ReadFrom(recs[:n+int(l)]); err != nil {
				return err
			}
			recs = recs[n+int(l):]
		}
		b = b[12+length:]
	}
	return nil
}

// kmsgEncode appends the frame of a decoded kmsg message.
func kmsgEncode(dst []byte, f *corpus.Frame, m any) []byte {
	if f.Request {
		return kmsg.NewRequestFormatter(kmsg.FormatterClientID(corpus.ClientID)).AppendRequest(dst, m.(kmsg.Request), f.CorrelationID)
	}
	r := m.(kmsg.Response)
	start := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(f.CorrelationID))
	if r.IsFlexible() && r.Key() != 18 {
		dst = append(dst, 0)
	}
	dst = r.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

func ourEncode(c *codec.Codec, dst []byte, f *codec.Frame) ([]byte, error) {
	if f.Kind == schema.TypeRequest {
		return c.EncodeRequest(dst, f)
	}
	return c.EncodeResponse(dst, f)
}

// TestCorpus checks the corpus itself and both decoders on it: every frame
// decodes cleanly with manifester (with and without spans) and with kmsg,
// both re-encode it byte for byte, and the span tree's leaves tile the frame.
func TestCorpus(t *testing.T) {
	c, ws := setup(t)
	for _, f := range dropped {
		t.Logf("dropped mixed frame key %d v%d request=%v: tagged field set at a version without it", f.Key, f.Version, f.Request)
	}
	if len(dropped) > 10 {
		t.Errorf("%d mixed frames dropped; expected only the few with version-less tagged fields", len(dropped))
	}
	for _, w := range ws {
		if len(w.Frames) == 0 {
			t.Errorf("workload %s is empty", w.Name)
		}
		for i := range w.Frames {
			f := &w.Frames[i]
			what := fmt.Sprintf("%s[%d] key %d v%d request=%v", w.Name, i, f.Key, f.Version, f.Request)
			km, err := kmsgDecode(f)
			if err != nil {
				t.Errorf("%s: kmsg: %v", what, err)
				continue
			}
			if got := kmsgEncode(nil, f, km); !bytes.Equal(got, f.Bytes) {
				t.Errorf("%s: kmsg re-encode differs", what)
			}
			for _, spans := range []bool{false, true} {
				fr, err := ourDecode(c, f, codec.Options{Spans: spans})
				if err != nil {
					t.Errorf("%s spans=%v: %v", what, spans, err)
					continue
				}
				got, err := ourEncode(c, nil, fr)
				if err != nil || !bytes.Equal(got, f.Bytes) {
					t.Errorf("%s: manifester re-encode differs (err %v)", what, err)
				}
				if spans {
					end := 0
					tr := fr.SpanTree()
					for _, id := range tr.Leaves(tr.Root()) {
						if l := tr.N(id); int(l.Off) != end {
							t.Errorf("%s: leaf %s at %d, want %d", what, tr.Path(id), l.Off, end)
							break
						}
						end += int(tr.N(id).Len)
					}
					if end != len(f.Bytes) {
						t.Errorf("%s: leaves cover %d of %d bytes", what, end, len(f.Bytes))
					}
				}
			}
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	c, ws := setup(b)
	for _, w := range ws {
		size := int64(w.Size())
		b.Run(w.Name+"/manifester", func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for i := range w.Frames {
					if _, err := ourDecode(c, &w.Frames[i], codec.Options{}); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		// The span tree a renderer reads, into a reused tree (as a capture
		// loop decodes), without Values; then both, from the one pass.
		b.Run(w.Name+"/manifester_spans", func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			opts := codec.Options{Spans: true, Tree: &span.Tree{}, NoValues: true}
			for b.Loop() {
				for i := range w.Frames {
					if _, err := ourDecode(c, &w.Frames[i], opts); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(w.Name+"/manifester_spans_values", func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			opts := codec.Options{Spans: true, Tree: &span.Tree{}}
			for b.Loop() {
				for i := range w.Frames {
					if _, err := ourDecode(c, &w.Frames[i], opts); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(w.Name+"/kmsg", func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for i := range w.Frames {
					if _, err := kmsgDecode(&w.Frames[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// encodeInputs decodes a workload's frames with both decoders, once, for
// the encode benchmarks: ours (bodies cloned out of the frame bytes) and
// kmsg's messages.
func encodeInputs(b *testing.B, c *codec.Codec, w corpus.Workload) (ours []*codec.Frame, theirs []any) {
	ours = make([]*codec.Frame, len(w.Frames))
	theirs = make([]any, len(w.Frames))
	for i := range w.Frames {
		fr, err := ourDecode(c, &w.Frames[i], codec.Options{})
		if err != nil {
			b.Fatal(err)
		}
		fr.Body = fr.Body.Clone()
		ours[i] = fr
		if theirs[i], err = kmsgDecode(&w.Frames[i]); err != nil {
			b.Fatal(err)
		}
	}
	return ours, theirs
}

func BenchmarkEncode(b *testing.B) {
	c, ws := setup(b)
	for _, w := range ws {
		size := int64(w.Size())
		ours, theirs := encodeInputs(b, c, w)
		buf := make([]byte, 0, 1<<20)
		b.Run(w.Name+"/manifester", func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for _, fr := range ours {
					var err error
					if buf, err = ourEncode(c, buf[:0], fr); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(w.Name+"/kmsg", func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for i := range w.Frames {
					buf = kmsgEncode(buf[:0], &w.Frames[i], theirs[i])
				}
			}
		})
	}
}
