package jsonr

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/gzip"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testframes"
)

// checkLine compares AppendLine, on a frame decoded normally and on the
// same frame decoded with Options.Lean, with encoding/json's line
// (refLine), with and without descriptions.
func checkLine(t *testing.T, c *codec.Codec, name string, b []byte, o report.Options, meta func(*report.Frame)) {
	t.Helper()
	full := report.Decode(c, b, o)
	lo := o
	lo.Lean = true
	lean := report.Decode(c, b, lo)
	if lean.Hex != "" {
		t.Fatalf("%s: Lean decode filled Hex", name)
	}
	if meta != nil {
		meta(full)
		meta(lean)
	}
	for _, about := range []bool{true, false} {
		want := refLine(t, full, about)
		for _, f := range []*report.Frame{full, lean} {
			got, err := AppendLine([]byte("prefix"), f, Options{About: about})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !bytes.HasPrefix(got, []byte("prefix")) {
				t.Fatalf("%s: AppendLine lost dst", name)
			}
			if got := got[len("prefix"):]; !bytes.Equal(got, want) {
				t.Fatalf("%s (about %v, lean %v): AppendLine differs from encoding/json:\n%s", name, about, f.Lean(), cmp.Diff(string(want), string(got)))
			}
		}
	}
	var line bytes.Buffer
	if err := Line(&line, lean); err != nil {
		t.Fatal(err)
	}
	if want := refLine(t, full, false); !bytes.Equal(line.Bytes(), want) {
		t.Fatalf("%s: Line includes descriptions or differs", name)
	}
}

// TestAppendJSONCorpus checks the fast writer against encoding/json on
// every request and response of the benchmark corpus (kmsg-written
// Produce, Fetch, Metadata, OffsetCommit and every API), with capture
// metadata, and on each frame cut short (errors, partial trees, other
// versions that decode it).
func TestAppendJSONCorpus(t *testing.T) {
	c, frames, _ := corpusFrames(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 6007, time.UTC)
	lat := int64(1234)
	meta := func(f *report.Frame) {
		f.Index, f.Offset = 7, 1<<33
		f.Time, f.Src, f.Dst, f.LatencyMicros = &at, "10.0.0.1:40000", "[::1]:9092", &lat
	}
	rng := rand.New(rand.NewPCG(1, 2))
	cuts := 0
	for i, fr := range frames {
		o := fr.o
		o.Roundtrip = i%2 == 0
		checkLine(t, c, "corpus", fr.b, o, meta)
		if len(fr.b) < 64<<10 && i%3 == 0 {
			// A frame cut short, its size prefix left as is (lying) or
			// fixed.
			n := 8 + rng.IntN(len(fr.b)-8)
			checkLine(t, c, "cut", fr.b[:n], fr.o, nil)
			checkLine(t, c, "cut, size fixed", fixSize(slices.Clone(fr.b[:n])), fr.o, meta)
			cuts++
		}
	}
	if len(frames) < 300 || cuts < 50 {
		t.Fatalf("only %d frames, %d cut", len(frames), cuts)
	}
}

// TestAppendJSONOddFrames covers what the corpus lacks: invalid UTF-8 and
// HTML characters in the client id and in other strings, non-canonical
// encodings (roundtrip_diff, flagged leaves), unknown header tags,
// unknown API keys, responses without their API, and compressed batches
// (detached trees).
func TestAppendJSONOddFrames(t *testing.T) {
	c, _, _ := corpusFrames(t)
	weird := "bad\xff\xfe utf8 <script>&\u2028\u2029\"\\\t\x01é"
	cases := map[string][]byte{}
	req := testframes.CreateTopics(7)
	req.Topics[0].Topic = weird
	cases["weird client id and topic"] = kmsg.NewRequestFormatter(kmsg.FormatterClientID(weird)).AppendRequest(nil, req, 3)
	base := testframes.Request("kgo", testframes.CreateTopics(7), 1)
	cases["redundant varint"] = fixSize(slices.Insert(slices.Clone(base), 17, 0x80))
	// An unknown header tag: count 1, tag 9, size 2, two bytes.
	cases["unknown header tag"] = fixSize(slices.Concat(base[:17], []byte{1, 9, 2, 0xab, 0xcd}, base[18:]))
	cases["unknown api"] = fixSize(slices.Concat([]byte{0, 0, 0, 0, 0x7f, 0x00, 0, 1, 0, 0, 0, 5}, []byte("rest")))
	cases["bad version"] = fixSize(slices.Concat(base[:6], []byte{0, 99}, base[8:]))
	cases["compressed produce"] = compressedProduce(t)
	cases["empty"] = nil
	cases["size only"] = []byte{0, 0, 0, 0}
	for name, b := range cases {
		checkLine(t, c, name, b, report.Options{Roundtrip: true}, func(f *report.Frame) { f.Src, f.Error = weird, f.Error+weird })
	}
	// The compressed batch has a detached tree in the output.
	f := report.Decode(c, cases["compressed produce"], report.Options{Lean: true})
	line, err := AppendLine(nil, f, Options{})
	if err != nil || f.Error != "" || !bytes.Contains(line, []byte(`"detached":{`)) {
		t.Fatalf("compressed produce: error %q %v, detached tree missing:\n%.2000s", f.Error, err, line)
	}
	// A response without its API and version, and one at a version that
	// does not fit.
	api, _ := c.Reg.API(19)
	checkLine(t, c, "response without API", base, report.Options{Kind: schema.TypeResponse}, nil)
	checkLine(t, c, "response at a wrong version", base, report.Options{Kind: schema.TypeResponse, API: api, Version: 7}, nil)
}

// TestUnreadFactsLeftOut: the line of a frame whose header is cut short,
// or whose key the spec does not have, has no key for a header fact its
// bytes did not give (encoding/json of report.Frame would write 0), and
// the keys of the facts they did give.
func TestUnreadFactsLeftOut(t *testing.T) {
	c, _, _ := corpusFrames(t)
	for _, tc := range []struct {
		name     string
		b        []byte
		has, not []string
	}{
		{"size and a byte", []byte{0, 0, 0, 1, 0}, nil, []string{"api_key", "version", "correlation_id", "header_version"}},
		{"key and version", []byte{0, 0, 0, 4, 0, 3, 0, 1}, []string{"api_key", "version", "header_version"}, []string{"correlation_id"}},
		{"unknown key", []byte{0, 0, 0, 8, 0x0f, 0xff, 0, 1, 0, 0, 0, 7}, []string{"api_key", "version", "correlation_id"}, []string{"header_version"}},
	} {
		line, err := AppendLine(nil, report.Decode(c, tc.b, report.Options{}), Options{})
		if err != nil || !json.Valid(line) {
			t.Fatalf("%s: %v, or not JSON: %s", tc.name, err, line)
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(line, &top); err != nil {
			t.Fatal(err)
		}
		for _, k := range tc.has {
			if _, ok := top[k]; !ok {
				t.Errorf("%s: no %q in %s", tc.name, k, line)
			}
		}
		for _, k := range tc.not {
			if v, ok := top[k]; ok {
				t.Errorf("%s: %q is %s, not known from the bytes", tc.name, k, v)
			}
		}
	}
}

// TestAppendStringEscaping checks the string escaper against encoding/json
// on random byte strings rich in the characters it treats specially.
func TestAppendStringEscaping(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"a", "<", ">", "&", "\"", "\\", "\n", "\t", "\b", "\f", "\r", "\x00", "\x1f", "\x7f", "\xff", "\xe2\x80", "\u2028", "\u2029", "é", "日", "\U0001F600", "\xf0\x9f"}
	for i := 0; i < 20000; i++ {
		var s []byte
		for n := rng.IntN(12); n > 0; n-- {
			s = append(s, alphabet[rng.IntN(len(alphabet))]...)
		}
		want, _ := json.Marshal(string(s))
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
		if got := appendString(nil, string(s)); !bytes.Equal(got, want) {
			t.Fatalf("%q (string): got %s, want %s", s, got, want)
		}
	}
}

// TestAppendRaw checks that bodies that are not already compact and
// escaped are written as encoding/json writes a json.RawMessage.
func TestAppendRaw(t *testing.T) {
	for _, raw := range []string{`{"a":1}`, `{ "a" : [1, 2] }`, `{"a":"x y"}`, `{"a":"<&>"}`, "{\"a\":\"\u2028\"}", `{"a":"\"}"}`, "[\n1]"} {
		want, err := json.Marshal(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendRaw(nil, []byte(raw))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: got %s (%v), want %s", raw, got, err, want)
		}
	}
}

// compressedProduce is a Produce v9 request carrying a gzip RecordBatch v2
// of three records, built with kmsg and klauspost's gzip.
func compressedProduce(t *testing.T) []byte {
	var recs []byte
	for i := 0; i < 3; i++ {
		r := kmsg.Record{OffsetDelta: int32(i), Key: []byte("k<&>\xff"), Value: []byte("value \u2028 " + string(rune('a'+i)))}
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		recs = r.AppendTo(recs)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(recs)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	rb := kmsg.RecordBatch{Magic: 2, Attributes: 1, LastOffsetDelta: 2, FirstTimestamp: 1_700_000_000_000, MaxTimestamp: 1_700_000_000_000,
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: 3, Records: z.Bytes()}
	batch := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(batch[8:], uint32(len(batch)-12))
	binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], crc32.MakeTable(crc32.Castagnoli)))
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
	return testframes.Request("kgo", req, 9)
}
