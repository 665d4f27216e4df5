package text_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testframes"
	"github.com/manifester/manifester/internal/testshared"
)

// outputSlack is what a frame's output may exceed its budget by: the
// summary lines and the notes that say what was cut.
const outputSlack = 8 << 10

// frameText renders f in the reference format.
func frameText(t testing.TB, f *report.Frame, verbose bool) string {
	t.Helper()
	var b bytes.Buffer
	if err := text.Frame(&b, f, verbose, text.Style{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// inflating is the 4.3 codec with decompression on.
func inflating(t testing.TB) *codec.Codec {
	c := loadCodec(t, testshared.Spec(t, "4.3"))
	c.Decompress = compress.Decompressor()
	c.DecompressLimit = compress.LimitDecompressor()
	return c
}

// TestFrameClean: a clean frame shows its summary, the round trip, the
// grid and the tree, whose rows are the span tree's display names.
func TestFrameClean(t *testing.T) {
	c := loadCodec(t, testshared.Spec(t, "4.3"))
	f := report.Decode(c, testframes.Request("kgo", testframes.CreateTopics(7), 42), report.Options{Roundtrip: true})
	out := frameText(t, f, true)
	for _, want := range []string{"request CreateTopics(19) v7 correlation_id 42", "roundtrip: re-encoding reproduces", "byte layout (", "+-- validateOnly", "+-- CreatableTopic[0]  "} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if short := frameText(t, f, false); strings.Contains(short, "byte layout") || !strings.HasPrefix(out, short) {
		t.Errorf("not verbose:\n%s", short)
	}
}

// TestFrameNonCanonical: a frame that does not round-trip says where and
// why, and its tree flags the leaf.
func TestFrameNonCanonical(t *testing.T) {
	c := loadCodec(t, testshared.Spec(t, "4.3"))
	in := testframes.Request("kgo", testframes.CreateTopics(7), 1)
	in[len(in)-2] = 2 // validateOnly, before the body's tag count
	f := report.Decode(c, in, report.Options{Roundtrip: true})
	out := frameText(t, f, true)
	for _, want := range []string{"roundtrip: differs at offset", "CreateTopicsRequest.validateOnly", "bool written as 0x02", "[non-canonical]"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

// TestFrameAlsoDecodesAs: a frame that does not decode at its version
// names the versions that do.
func TestFrameAlsoDecodesAs(t *testing.T) {
	c := loadCodec(t, testshared.Spec(t, "4.3"))
	b := testframes.Request("kgo", testframes.CreateTopics(4), 9)
	b[7] = 5
	f := report.Decode(c, b, report.Options{})
	if out := frameText(t, f, false); !strings.Contains(out, "decodes cleanly as v") || !strings.Contains(out, "error: offset 0x") {
		t.Errorf("text: %s", out)
	}
}

// TestFrameNoSearchNoClaim: a frame stopped by its decode budget is not
// tried at other versions, so the text does not say that none decodes it.
func TestFrameNoSearchNoClaim(t *testing.T) {
	c := loadCodec(t, testshared.Spec(t, "4.3"))
	b := testframes.Request("kgo", testframes.CreateTopics(7), 9)
	f := report.Decode(c, b, report.Options{Limits: budget.Limits{Nodes: 3}})
	out := frameText(t, f, false)
	if !strings.Contains(out, "span-node budget of 3 nodes") {
		t.Fatalf("the node budget was not reached: %s", out)
	}
	if strings.Contains(out, "no other version of this API decodes it cleanly") {
		t.Errorf("claims a search that was not made: %s", out)
	}
	// Searched, the claim stands.
	b[len(b)-1] = 7 // trailing tagged fields count: a tag that is not there
	f = report.Decode(c, b, report.Options{})
	if out := frameText(t, f, false); !strings.Contains(out, "no other version of this API decodes it cleanly") {
		t.Errorf("searched: %s", out)
	}
}

// TestFrameOrphan: a response without its request names its candidates.
func TestFrameOrphan(t *testing.T) {
	c := loadCodec(t, testshared.Spec(t, "4.3"))
	hb := kmsg.NewPtrHeartbeatResponse()
	hb.Version, hb.ErrorCode = 4, 27
	for _, lean := range []bool{false, true} {
		f := report.Orphan(c, testframes.Response(hb, 9), nil, report.Options{Lean: lean})
		out := frameText(t, f, false)
		if !strings.Contains(out, "(API unknown: request not captured) correlation_id 9") || !strings.Contains(out, "candidates (decode cleanly and re-encode byte for byte): ") {
			t.Errorf("text: %s", out)
		}
	}
}

// TestFrameCutUnsearched: a response cut before its correlation id, whose
// request is unknown, was not searched for candidates, and its text claims
// no search; an orphan that none explains says so once, in its error.
func TestFrameCutUnsearched(t *testing.T) {
	c := loadCodec(t, testshared.Spec(t, "4.3"))
	cut := report.Cut(c, []byte{0, 0, 0, 40, 0, 0}, schema.TypeResponse, nil, 0, report.Gap{Offset: 6, Size: 100, FrameSize: 44, Captured: 6}, report.Options{})
	if out := frameText(t, cut, false); !strings.Contains(out, "(header not captured)") || strings.Contains(out, "no response schema") || strings.Contains(out, "candidates") {
		t.Errorf("cut frame: %s", out)
	}
	none := report.Orphan(c, []byte{0, 0, 0, 4, 0, 0, 0, 9}, nil, report.Options{})
	if out := frameText(t, none, false); strings.Count(out, "no response schema of this spec decodes it cleanly") != 1 {
		t.Errorf("orphan with no candidate: %s", out)
	}
}

// plainProduce is a Produce v9 request with one uncompressed RecordBatch
// v2 of the given records, built with kmsg.
func plainProduce(recs []kmsg.Record) []byte {
	var area []byte
	for i := range recs {
		recs[i].OffsetDelta = int32(i)
		recs[i].Length = int32(len(recs[i].AppendTo(nil)) - 1)
		area = recs[i].AppendTo(area)
	}
	rb := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: int32(len(recs) - 1), ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: int32(len(recs)), Records: area}
	batch := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(batch[8:], uint32(len(batch)-12))
	binary.BigEndian.PutUint32(batch[17:], crc32.Checksum(batch[21:], crc32.MakeTable(crc32.Castagnoli)))
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 1000
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = "t"
	p := kmsg.NewProduceRequestTopicPartition()
	p.Records = batch
	tp.Partitions = append(tp.Partitions, p)
	req.Topics = append(req.Topics, tp)
	return testframes.Request("kgo", req, 9)
}

// TestRecordContentsAsText: record keys, values and header values that
// read as text are shown quoted with their hex; others as hex only.
func TestRecordContentsAsText(t *testing.T) {
	c := loadCodec(t, testshared.Spec(t, "4.3"))
	b := plainProduce([]kmsg.Record{
		{Key: []byte("user-1"), Value: []byte("Zürich\t\"q\"\n"), Headers: []kmsg.Header{{Key: "trace", Value: []byte("abc\u200d")}, {Key: "bin", Value: []byte{0, 1, 0xff}}}},
		{Key: []byte{0xff, 0xfe}, Value: []byte("\x1b[31mred")}, // not UTF-8; ESC: both stay hex
		{Key: nil, Value: []byte{}},                             // null key; empty value is text
	})
	f := report.Decode(c, b, report.Options{})
	if f.Error != "" {
		t.Fatal(f.Error)
	}
	out := strings.Join(strings.Fields(frameText(t, f, true)), " ")
	for _, want := range []string{
		`key bytes = "user-1" 0x757365722d31 (varint len=6)`,
		`value bytes = "Zürich\t\"q\"\n" 0x5ac3bc72696368092271220a (varint len=12)`,
		`headerValue bytes = "abc\u200d" 0x616263e2808d (varint len=6)`,
		`headerValue bytes = 0x0001ff (varint len=3)`,
		`key bytes = 0xfffe (varint len=2)`,
		`value bytes = 0x1b5b33316d726564 (varint len=8)`,
		`key bytes = null (varint len=-1)`,
		`value bytes = "" 0x (varint len=0)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text tree lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

// TestFrameDetached: a compressed batch's inflated records get a heading
// that names the records field by its path in the one syntax, a grid and
// a tree of their own.
func TestFrameDetached(t *testing.T) {
	c := inflating(t)
	f := report.Decode(c, hostile.Produce(hostile.Batch(hostile.Gzip, hostile.DenseRecords(3), 3)), report.Options{})
	if f.Error != "" {
		t.Fatal(f.Error)
	}
	out := frameText(t, f, true)
	const heading = "ProduceRequest.TopicData[0].PartitionData[0].Records[0].records ("
	i := strings.Index(out, heading)
	if i < 0 || !strings.Contains(out[i:], "): decompressed records, offsets within the inflated bytes\n\nbyte layout (") {
		t.Fatalf("no decompressed records section headed %q:\n%s", heading, out)
	}
	if n := strings.Count(out[i:], "+-- Record["); n != 3 {
		t.Errorf("%d records in the inflated tree, want 3:\n%s", n, out[i:])
	}
}

// TestFrameHostileBounded decodes and renders the frames of issue 9 (many
// small compressed batches, record-dense batches, megabytes of zeros) of
// about 100 KB in all four codecs: memory stays within bounds (a sampled
// peak heap under 384 MiB, all allocation under 1 GiB), the text within
// the output budget, and the text says where the budget was spent.
func TestFrameHostileBounded(t *testing.T) {
	c := inflating(t)
	for _, sh := range hostile.Shapes {
		for _, cd := range hostile.Codecs {
			name := sh.Name + "/" + records.CompressionName(cd)
			b := sh.Build(cd, 100<<10)
			var f *report.Frame
			var out string
			u := hostile.Measure(func() {
				f = report.Decode(c, b, report.Options{})
				out = frameText(t, f, true)
			})
			if u.Peak > 384<<20 || u.Total > 1<<30 {
				t.Errorf("%s: peak heap %d MiB, allocated %d MiB", name, u.Peak>>20, u.Total>>20)
			}
			if max := f.RenderBudget().MaxOutput; int64(len(out)) > max+outputSlack {
				t.Errorf("%s: %d bytes of text, budget %d", name, len(out), max)
			}
			if f.Budget != "" && !strings.Contains(out, "budget") {
				t.Errorf("%s: the text does not say the budget was spent", name)
			}
		}
	}
}

// TestFrameOutputBudget checks that the text stops at the output budget
// and says so, with a row where the tree is cut that says how many nodes
// were left out, counted in the tree's table.
func TestFrameOutputBudget(t *testing.T) {
	c := inflating(t)
	b := hostile.Produce(hostile.Batch(hostile.Gzip, hostile.DenseRecords(3000), 3000))
	lim := budget.Limits{Output: 100 << 10}
	for _, lean := range []bool{false, true} {
		f := report.Decode(c, b, report.Options{Limits: lim, Lean: lean})
		out := frameText(t, f, true)
		if len(out) > 100<<10+outputSlack || len(out) < 50<<10 {
			t.Errorf("lean %v: %d bytes for a budget of 100 KiB", lean, len(out))
		}
		if !strings.Contains(out, "output budget of 100 KiB for this frame spent") {
			t.Errorf("lean %v: no note of the output budget", lean)
		}
		if !strings.Contains(out, "+-- ...  ") || !strings.Contains(out, " more tree nodes not shown") {
			t.Errorf("lean %v: no row where the tree is cut", lean)
		}
	}
	// Without a limit the same frame is shown whole: bigger, no note.
	whole := frameText(t, report.Decode(c, b, report.Options{}), true)
	if len(whole) <= 200<<10 || strings.Contains(whole, "output budget") {
		t.Errorf("default budget: %d bytes, note %v", len(whole), strings.Contains(whole, "output budget"))
	}
}

// fuzzLimits are small, so that fuzzed frames reach every limit.
var fuzzLimits = budget.Limits{Inflate: 256 << 10, Nodes: 4096, Output: 256 << 10}

// FuzzFrameBudget decodes request frames with decompression on, under a
// small budget, and renders them as text: allocation and output are
// bounded by the budget. Seeds are the hostile frames, small.
func FuzzFrameBudget(f *testing.F) {
	c := inflating(f)
	for _, cd := range hostile.Codecs {
		f.Add(hostile.Produce(hostile.Batch(cd, hostile.DenseRecords(300), 300), hostile.Batch(cd, make([]byte, 100<<10), 1)))
		f.Add(hostile.Produce(hostile.Batch(cd, hostile.DenseRecords(40), 40), hostile.Batch(cd, hostile.DenseRecords(40), 40), hostile.Batch(cd, hostile.DenseRecords(40), 40)))
	}
	f.Add(testframes.Request("kgo", testframes.CreateTopics(7), 1))
	bound := func(n int) uint64 {
		return 16*1024*uint64(n) + 8*uint64(fuzzLimits.Inflate) + 4096*uint64(fuzzLimits.Nodes) + 8*uint64(fuzzLimits.Output) + 64<<20
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, lean := range []bool{false, true} {
			var out bytes.Buffer
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			fr := report.Decode(c, b, report.Options{Kind: schema.TypeRequest, Limits: fuzzLimits, Lean: lean})
			if err := text.Frame(&out, fr, true, text.Style{Color: true, Width: 100}); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			if d := after.TotalAlloc - before.TotalAlloc; d > bound(len(b)) {
				t.Fatalf("%d bytes in: allocated %d, bound %d", len(b), d, bound(len(b)))
			}
			if max := fr.RenderBudget().MaxOutput; int64(out.Len()) > max+outputSlack {
				t.Fatalf("output %d bytes of text; budget %d", out.Len(), max)
			}
		}
	})
}

// TestFrameStyles: every style renders the same rows; colour adds
// escapes only, and a width makes the lines fit.
func TestFrameStyles(t *testing.T) {
	c := loadCodec(t, testshared.Spec(t, "4.3"))
	f := report.Decode(c, testframes.Request("kgo", testframes.CreateTopics(7), 42), report.Options{})
	ref := frameText(t, f, true)
	var col bytes.Buffer
	if err := text.Frame(&col, f, true, text.Style{Color: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(col.String(), "\x1b[") || escapes.ReplaceAllString(col.String(), "") != ref {
		t.Errorf("colour changed the text:\n%s\nwant\n%s", col.String(), ref)
	}
	var narrow bytes.Buffer
	if err := text.Frame(&narrow, f, true, text.Style{Width: 60}); err != nil {
		t.Fatal(err)
	}
	grid := regexp.MustCompile(`^([0-9a-f]{4}  | {5} 0  1)`)
	for _, l := range strings.Split(narrow.String(), "\n") {
		if utf8.RuneCountInString(l) > 60 && !grid.MatchString(l) {
			t.Errorf("line of %d runes at width 60: %q", utf8.RuneCountInString(l), l)
		}
	}
}

var escapes = regexp.MustCompile("\x1b\\[[0-9;]*m")

// BenchmarkFrameText renders a decoded Produce frame of 300 records in a
// compressed batch (its grid, tree and inflated records) as text.
func BenchmarkFrameText(b *testing.B) {
	c := inflating(b)
	f := report.Decode(c, hostile.Produce(hostile.Batch(hostile.Gzip, hostile.DenseRecords(300), 300)), report.Options{})
	if f.Error != "" {
		b.Fatal(f.Error)
	}
	var out bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		out.Reset()
		if err := text.Frame(&out, f, true, text.Style{}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(out.Len()))
}

// TestFrameTextAllocs: a frame's text is made with allocations that do
// not follow its tree's rows (a tree's cells come from shared chunks, the
// sections' buffer from a pool): here a Produce request of 300 records,
// whose tree and inflated records' tree have thousands of rows, is
// written with a few hundred allocations, not several per row, into a
// bytes.Buffer (in place) and into any other writer (a section at a
// time), the same text both ways.
func TestFrameTextAllocs(t *testing.T) {
	c := inflating(t)
	f := report.Decode(c, hostile.Produce(hostile.Batch(hostile.Gzip, hostile.DenseRecords(300), 300)), report.Options{})
	if f.Error != "" {
		t.Fatal(f.Error)
	}
	tr := f.SpanTree()
	_, inflated := tr.DetachedSize()
	rows := tr.Len() + inflated
	if rows < 2000 {
		t.Fatalf("the frame's trees have %d rows: too few to say anything", rows)
	}
	// Into a bytes.Buffer (written in place) and into another writer (the
	// sections from a pooled buffer).
	var out bytes.Buffer
	var first string
	for i, w := range []io.Writer{&out, struct{ io.Writer }{&out}} {
		allocs := testing.AllocsPerRun(5, func() {
			out.Reset()
			if err := text.Frame(w, f, true, text.Style{}); err != nil {
				t.Fatal(err)
			}
		})
		// Under -race a sync.Pool drops some of what it is given: room
		// for it.
		if allocs > float64(rows)/4 {
			t.Errorf("%T: %.0f allocations for a frame of %d tree rows: they follow the rows", w, allocs, rows)
		}
		t.Logf("%T: %.0f allocations for %d tree rows, %d bytes of text", w, allocs, rows, out.Len())
		if i == 0 {
			first = out.String()
		} else if out.String() != first {
			t.Errorf("%T: the text differs from the one written in place", w)
		}
	}
}

// TestFrameTextReusesRows: the tree rows' strings and cells are made in
// room reused from one tree to the next, so that a frame's text, once
// warm, allocates far fewer bytes than it has rows (a fresh arena and row
// table per tree took about 200 bytes a row); and the reused room gives
// the same text, frame after frame, with another frame's trees between.
// The bytes are those of the run that allocated least: a garbage
// collection may empty the pool (two in a row do) and make one run
// allocate the room again, as often as the machine's load has them.
func TestFrameTextReusesRows(t *testing.T) {
	c := inflating(t)
	big := report.Decode(c, hostile.Produce(hostile.Batch(hostile.Gzip, hostile.DenseRecords(300), 300)), report.Options{})
	small := report.Decode(c, hostile.Produce(hostile.Batch(hostile.Snappy, hostile.DenseRecords(20), 20)), report.Options{})
	frames := []*report.Frame{big, small}
	var outs, wants [2]bytes.Buffer
	for i, f := range frames {
		if f.Error != "" {
			t.Fatal(f.Error)
		}
		if err := text.Frame(&wants[i], f, true, text.Style{}); err != nil {
			t.Fatal(err)
		}
		outs[i].Grow(2 * wants[i].Len())
	}
	_, inflated := big.SpanTree().DetachedSize()
	rows := big.SpanTree().Len() + inflated
	const runs = 10
	perRun := uint64(math.MaxUint64)
	for run := range runs {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i, f := range frames {
			outs[i].Reset()
			if err := text.Frame(&outs[i], f, true, text.Style{}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(outs[i].Bytes(), wants[i].Bytes()) {
				t.Fatalf("run %d, frame %d: the text differs from its first", run, i)
			}
		}
		runtime.ReadMemStats(&after)
		perRun = min(perRun, after.TotalAlloc-before.TotalAlloc)
	}
	t.Logf("%d bytes allocated by the run that allocated least (a frame of %d tree rows, then a small one)", perRun, rows)
	if raceEnabled {
		t.Log("-race: sync.Pool drops room at random; the bytes are not checked")
		return
	}
	if limit := uint64(16 * rows); perRun > limit {
		t.Errorf("%d bytes allocated a run, more than %d: the rows' room is not reused", perRun, limit)
	}
}
