package cli

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testframes"
	"github.com/manifester/manifester/internal/testshared"
	"github.com/manifester/manifester/internal/wire"
)

var decSpec = testshared.SpecPath("4.3")

// decRun runs the command line in-process with stdin and returns the exit
// status, standard output and standard error.
func decRun(t *testing.T, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	testshared.Dir(t)
	var out, errb bytes.Buffer
	env := &Env{Stdin: bytes.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code := Main(env, args)
	return code, out.String(), errb.String()
}

func decCodec(t testing.TB) *codec.Codec {
	t.Helper()
	reg, err := schema.Load(testshared.Spec(t, "4.3"))
	if err != nil {
		t.Fatal(err)
	}
	return codec.New(reg)
}

// kmsgFrame builds a request frame with franz-go's kmsg (client id "c").
func kmsgFrame(r kmsg.Request) []byte {
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("c")).AppendRequest(nil, r, 7)
}

// decCreateTopics is testframes.CreateTopics(v) framed by kmsgFrame, not
// validate only.
func decCreateTopics(v int16) []byte {
	req := testframes.CreateTopics(v)
	req.ValidateOnly = false
	return kmsgFrame(req)
}

// appendRecord writes one Record v2 without headers.
func decRecord(dst []byte, key, value string) []byte {
	var b []byte
	b = append(b, 0)
	b = wire.AppendVarlong(b, 0)
	b = wire.AppendVarint(b, 0)
	b = wire.AppendVarint(b, int32(len(key)))
	b = append(b, key...)
	b = wire.AppendVarint(b, int32(len(value)))
	b = append(b, value...)
	b = wire.AppendVarint(b, 0)
	dst = wire.AppendVarint(dst, int32(len(b)))
	return append(dst, b...)
}

// decProduce wraps a batch in a Produce v9 request built by kmsg and
// returns the frame and the batch's offset in it.
func decProduce(batch []byte) ([]byte, int) {
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
	b := kmsgFrame(req)
	return b, bytes.Index(b, batch)
}

func setSize(b []byte) []byte {
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

type decErrCase struct {
	name  string
	in    []byte
	cause error
	off   int
	path  string // a substring of the error path
	args  []string
}

// decErrCases builds one malformed input per error the issue lists. The
// base frames come from kmsg; offsets are worked out from the layout:
// CreateTopics v4 = size 4, key 2, version 2, correlation id 4, client id
// 2+1, so the body starts at 15 (Topics count), the first topic's Name
// length at 19, NumPartitions at 27. v7 adds a header tag count: body at 16.
func decErrCases(t *testing.T) []decErrCase {
	v4 := decCreateTopics(4)
	v7 := decCreateTopics(7)
	mut := func(b []byte, f func([]byte) []byte) []byte { return f(slices.Clone(b)) }
	put16 := func(off int, v int16) func([]byte) []byte {
		return func(b []byte) []byte { binary.BigEndian.PutUint16(b[off:], uint16(v)); return b }
	}
	put32 := func(off int, v int32) func([]byte) []byte {
		return func(b []byte) []byte { binary.BigEndian.PutUint32(b[off:], uint32(v)); return b }
	}
	if string(v4[21:27]) != "orders" || v7[16] != 2 {
		t.Fatalf("layout assumptions broken: %x", v4)
	}
	batch := records.AppendBatch(nil, &records.Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, NumRecords: 1, Records: decRecord(nil, "k", "v")})
	produce, at := decProduce(batch)
	badCRC := slices.Clone(produce)
	badCRC[at+17] ^= 0xff
	extra := records.AppendBatch(nil, &records.Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, NumRecords: 1, Records: append(decRecord(nil, "k", "v"), 1, 2, 3)})
	produceExtra, atExtra := decProduce(extra)
	// batchLength cutting the record short, with a CRC that matches the
	// shortened batch, and one smaller than the batch header.
	lying := records.AppendBatch(nil, &records.Batch{NumRecords: 1, Records: decRecord(nil, "k", "v")})
	binary.BigEndian.PutUint32(lying[8:], 49+3)
	binary.BigEndian.PutUint32(lying[17:], records.CRC32C(lying[21:12+49+3]))
	produceShort, atShort := decProduce(lying)
	// A record whose timestampDelta varlong runs past 10 bytes.
	badRec := slices.Concat([]byte{0}, bytes.Repeat([]byte{0xff}, 10), []byte{0x01, 0, 2, 'k', 2, 'v', 0})
	wideVarlong := records.AppendBatch(nil, &records.Batch{NumRecords: 1, Records: append(wire.AppendVarint(nil, int32(len(badRec))), badRec...)})
	produceVarlong, atVarlong := decProduce(wideVarlong)
	long := slices.Clone(batch)
	binary.BigEndian.PutUint32(long[8:], uint32(len(batch)-12+10))
	produceLong, atLong := decProduce(long)
	tiny := slices.Clone(batch)
	binary.BigEndian.PutUint32(tiny[8:], 20)
	produceTiny, atTiny := decProduce(tiny)

	return []decErrCase{
		{"size larger than data", mut(v4, put32(0, int32(len(v4)))), wire.ErrFrameSize, 0, "size", nil},
		{"size smaller than data", mut(v4, put32(0, int32(len(v4)-4-3))), wire.ErrFrameSize, 0, "size", nil},
		{"truncated field", setSize(slices.Clone(v4[:43])), wire.ErrTruncated, 41, "CreateTopicsRequest.timeoutMs", nil},
		{"unknown API key", mut(v4, put16(4, 999)), codec.ErrUnknownAPI, 4, "RequestHeader.request_api_key", nil},
		{"version outside range", mut(v4, put16(6, 1)), wire.ErrVersion, 6, "RequestHeader.request_api_version", nil},
		{"invalid varint", setSize(slices.Concat(v7[:16], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, v7[17:])), wire.ErrVarint, 16, "CreateTopicsRequest.Topics", nil},
		{"invalid varlong", produceVarlong, wire.ErrVarint, atVarlong + 63, "Record[0].timestampDelta", nil},
		{"negative length", mut(v4, put16(19, -2)), wire.ErrNegativeLength, 19, "Topics[0].Name", nil},
		{"null not allowed", mut(v4, put16(19, -1)), wire.ErrNull, 19, "Topics[0].Name", nil},
		{"string longer than frame", mut(v4, put16(19, 1000)), wire.ErrTruncated, 19, "Topics[0].Name", nil},
		{"array count too large", mut(v4, put32(15, 0x7fffffff)), wire.ErrCountTooLarge, 15, "CreateTopicsRequest.Topics", nil},
		{"tags out of order", setSize(slices.Concat(v7[:len(v7)-1], []byte{2, 1, 0, 0, 0})), wire.ErrTagOrder, len(v7) + 2, "CreateTopicsRequest.tagged_fields", nil},
		{"tags duplicated", setSize(slices.Concat(v7[:len(v7)-1], []byte{2, 0, 0, 0, 0})), wire.ErrTagOrder, len(v7) + 2, "CreateTopicsRequest.tagged_fields", nil},
		{"batch CRC mismatch", badCRC, records.ErrCRC, at + 17, "Records[0].crc", nil},
		{"batchLength larger than the records", produceExtra, records.ErrBatchLength, atExtra + 61 + len(decRecord(nil, "k", "v")), "Records[0]", nil},
		{"batchLength cutting a record", produceShort, records.ErrRecordLength, atShort + 61, "Record[0].length", nil},
		{"batchLength larger than the records field", produceLong, records.ErrBatchLength, atLong, "Records", nil},
		{"batchLength smaller than the header", produceTiny, records.ErrBatchLength, atTiny + 8, "Records[0].batchLength", nil},
		{"trailing bytes", setSize(append(slices.Clone(v4), 0xab, 0xcd)), wire.ErrTrailing, len(v4), "", nil},
		{"response truncated", []byte{0, 0, 0, 6, 0, 0, 0, 1, 0, 0}, wire.ErrTruncated, 8, "CreateTopicsResponse.ThrottleTimeMs", []string{"--kind", "response", "--api", "CreateTopics", "--version", "2"}},
	}
}

// TestDecodeErrors checks every error case: the cause, the byte offset and
// field path in the report, and through the CLI exit status 1, the message
// on stderr and the partial tree on stdout.
func TestDecodeErrors(t *testing.T) {
	c := decCodec(t)
	api, _ := c.Reg.Lookup("CreateTopics")
	for _, tc := range decErrCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			o := report.Options{}
			if tc.args != nil {
				o = report.Options{Kind: schema.TypeResponse, API: api, Version: 2}
			}
			r := report.Decode(c, tc.in, o)
			if !errors.Is(r.Err, tc.cause) {
				t.Fatalf("error %v, want %v", r.Err, tc.cause)
			}
			if r.ErrorOffset == nil || *r.ErrorOffset != tc.off || !strings.Contains(r.ErrorPath, tc.path) {
				t.Errorf("error at %v %q, want offset %d, path containing %q: %v", deref(r.ErrorOffset), r.ErrorPath, tc.off, tc.path, r.Err)
			}
			if r.SpanTree() == nil && !errors.Is(tc.cause, wire.ErrFrameSize) {
				t.Errorf("no partial tree")
			}
			args := append([]string{"decode", "--spec", decSpec, "--hex", hex.EncodeToString(tc.in)}, tc.args...)
			code, out, errs := decRun(t, nil, args...)
			if code != ExitFailure {
				t.Errorf("exit %d, want 1\n%s%s", code, out, errs)
			}
			wantOff := "offset 0x" + hex.EncodeToString([]byte{byte(tc.off >> 8), byte(tc.off)})
			if !strings.Contains(errs, wantOff) || !strings.Contains(out, "ERROR: ") || !strings.Contains(out, "object tree") {
				t.Errorf("stderr lacks %q or stdout lacks the partial tree:\n%s\n%s", wantOff, errs, out)
			}
		})
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestNoAllocationFromCounts: counts that claim gigabytes (an array count,
// a string length, a records length, a frame size) allocate nothing near
// that.
func TestNoAllocationFromCounts(t *testing.T) {
	c := decCodec(t)
	v4 := decCreateTopics(4)
	arr := slices.Clone(v4)
	binary.BigEndian.PutUint32(arr[15:], 0x7fffffff)
	batch := records.AppendBatch(nil, &records.Batch{NumRecords: 1, Records: decRecord(nil, "k", "v")})
	produce, at := decProduce(batch)
	recs := slices.Clone(produce)
	binary.BigEndian.PutUint32(recs[at-4:], 0x7ffffff0) // the records length prefix
	size := slices.Clone(v4)
	binary.BigEndian.PutUint32(size, 0x7fffffff)
	for name, in := range map[string][]byte{"array count": arr, "records length": recs, "frame size": size} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		allocs := testing.AllocsPerRun(20, func() {
			if _, err := c.DecodeRequest(in, codec.Options{}); err == nil {
				t.Fatalf("%s: decoded", name)
			}
		})
		runtime.ReadMemStats(&after)
		perRun := (after.TotalAlloc - before.TotalAlloc) / 21
		if perRun > 64<<10 || allocs > 100 {
			t.Errorf("%s: %d bytes, %.0f allocations per decode of a %d-byte frame", name, perRun, allocs, len(in))
		}
	}
}

// TestDecodeInputShapes feeds the same frame as hex in several shapes, as
// a binary file, on stdin, and as a stream of three frames.
func TestDecodeInputShapes(t *testing.T) {
	frame := decCreateTopics(7)
	h := hex.EncodeToString(frame)
	dir := t.TempDir()
	bin := filepath.Join(dir, "frame.bin")
	if err := os.WriteFile(bin, frame, 0o644); err != nil {
		t.Fatal(err)
	}
	var spaced []string
	for _, b := range frame {
		spaced = append(spaced, hex.EncodeToString([]byte{b}))
	}
	for name, args := range map[string][]string{
		"plain":  {"--hex", h},
		"spaced": {"--hex", strings.Join(spaced, " ")},
		"colons": {"--hex", strings.Join(spaced, ":")},
		"0x":     {"--hex", "0x" + strings.Join(spaced, " 0x")},
		"file":   {bin},
	} {
		code, out, errs := decRun(t, nil, append([]string{"decode", "--spec", decSpec, "--roundtrip"}, args...)...)
		if code != 0 || !strings.Contains(out, "request CreateTopics(19) v7 correlation_id 7") || !strings.Contains(out, "roundtrip: re-encoding reproduces") {
			t.Errorf("%s: exit %d\n%s%s", name, code, out, errs)
		}
	}
	code, out, _ := decRun(t, frame, "decode", "--spec", decSpec, "-")
	if code != 0 || !strings.Contains(out, "CreateTopics(19) v7") {
		t.Errorf("stdin binary: exit %d\n%s", code, out)
	}
	code, out, _ = decRun(t, []byte(h+"\n"), "decode", "--spec", decSpec, "-")
	if code != 0 || !strings.Contains(out, "CreateTopics(19) v7") {
		t.Errorf("stdin hex: exit %d\n%s", code, out)
	}
	// A stream: three frames, JSON lines.
	stream := slices.Concat(frame, kmsgFrame(kmsg.NewPtrApiVersionsRequest()), decCreateTopics(4))
	code, out, errs := decRun(t, stream, "decode", "--spec", decSpec, "--format", "json", "--roundtrip", "-")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 {
		t.Fatalf("stream: exit %d, %d lines\n%s", code, len(lines), errs)
	}
	wantKeys := []int{19, 18, 19}
	off := 0
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if int(m["api_key"].(float64)) != wantKeys[i] || m["roundtrip"] != true || m["error"] != nil || int(m["offset"].(float64)) != off {
			t.Errorf("line %d: %v", i, l[:min(len(l), 300)])
		}
		off += int(m["size"].(float64))
	}
	// A stream whose last frame lies about its size.
	code, out, errs = decRun(t, slices.Concat(frame, frame, []byte{0, 0, 1, 0, 1}), "decode", "--spec", decSpec, "-")
	if code != 1 || !strings.Contains(out, fmt.Sprintf("frame 2 at offset %d", 2*len(frame))) || !strings.Contains(errs, "1 of 3 frames did not decode") {
		t.Errorf("lying stream: exit %d\n%s\n%s", code, out, errs)
	}
}

// TestDecodeUsage covers the usage errors (exit 2).
func TestDecodeUsage(t *testing.T) {
	frame := hex.EncodeToString(decCreateTopics(7))
	for _, args := range [][]string{
		{"--hex", frame, "--kind", "response", "--version", "7"},
		{"--hex", frame, "--kind", "response", "--api", "CreateTopics"},
		{"--hex", frame, "--api", "CreateTopics", "--version", "7"},
		{"--hex", frame, "--format", "xml"},
		{"--hex", frame, "--kind", "sideways"},
		{"--hex", frame, "--port", "9092"},
		{},
		{"--hex", frame, "extra"},
		{"--pcap", "x.pcap", "--port", "http"},
		{"--hex", frame, "--kind", "response", "--api", "CreateTopics", "--version", "99"},
	} {
		code, _, errs := decRun(t, nil, append([]string{"decode", "--spec", decSpec}, args...)...)
		if code != ExitUsage || errs == "" {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	code, _, errs := decRun(t, nil, "decode", "--spec", decSpec, "--hex", "00 0g")
	if code != ExitFailure || !strings.Contains(errs, "line 1, column 5") {
		t.Errorf("bad hex: exit %d, %s", code, errs)
	}
}

// TestDecodeNotCleanAtVersion: a response decoded at the wrong version
// says which versions decode it cleanly.
func TestDecodeNotCleanAtVersion(t *testing.T) {
	resp := kmsg.NewPtrCreateTopicsResponse()
	resp.Version = 5
	rt := kmsg.NewCreateTopicsResponseTopic()
	rt.Topic = "orders"
	resp.Topics = append(resp.Topics, rt)
	body := resp.AppendTo(nil)
	b := binary.BigEndian.AppendUint32(nil, uint32(5+len(body)))
	b = binary.BigEndian.AppendUint32(b, 3)
	b = append(b, 0) // response header v1: no tagged fields
	b = append(b, body...)
	code, out, _ := decRun(t, nil, "decode", "--spec", decSpec, "--kind", "response", "--api", "19", "--version", "4", "--hex", hex.EncodeToString(b))
	if code != 1 || !strings.Contains(out, "decodes cleanly as v5") {
		t.Errorf("exit %d\n%s", code, out)
	}
	code, _, errs := decRun(t, nil, "decode", "--spec", decSpec, "--kind", "response", "--api", "19", "--hex", hex.EncodeToString(b))
	if code != ExitUsage || !strings.Contains(errs, "give --version N (the first frame decodes cleanly as CreateTopics v5") {
		t.Errorf("without --version: exit %d, %s", code, errs)
	}
	// Without --api either, the frame is shown with the APIs and versions
	// that explain it (CreateTopics v5 among them; nothing is chosen), as a
	// capture's response whose request was lost is, and stderr says how
	// to decode it as one; bytes that no response is are an error; a
	// version without an API is refused.
	code, out, errs = decRun(t, nil, "decode", "--spec", decSpec, "--kind", "response", "--hex", hex.EncodeToString(b))
	if code != ExitOK || !strings.Contains(out, "response (API unknown: not given) correlation_id 3") ||
		!strings.Contains(out, "candidates (decode cleanly and re-encode byte for byte): ") || !strings.Contains(out, "CreateTopics(19) v5") ||
		!strings.Contains(errs, "1 response not decoded: give --kind response --api KEY --version N") {
		t.Errorf("without --api: exit %d\n%s%s", code, out, errs)
	}
	code, out, _ = decRun(t, nil, "decode", "--spec", decSpec, "--kind", "response", "--format", "json", "--hex", hex.EncodeToString(b))
	if code != ExitOK || !strings.Contains(out, `{"api_key":19,"name":"CreateTopics","version":5}`) {
		t.Errorf("without --api, JSON: exit %d\n%s", code, out)
	}
	// Without --kind response, it fails as a request, and says that as a
	// response it reads cleanly.
	code, out, _ = decRun(t, nil, "decode", "--spec", decSpec, "--hex", hex.EncodeToString(b))
	if code != ExitFailure || !strings.Contains(out, "it may be a response: as one it decodes cleanly and re-encodes as ") || !strings.Contains(out, "CreateTopics(19) v5") {
		t.Errorf("without --kind: exit %d\n%s", code, out)
	}
	// A response this small (AlterConfigs v2 with no resources) reads as
	// more schemas than the search lists.
	code, out, _ = decRun(t, nil, "decode", "--spec", decSpec, "--kind", "response", "--hex", "0000000b0000000900000000050100")
	if code != ExitOK || !strings.Contains(out, " and 45 more (the search stops at 50)\n") {
		t.Errorf("capped: exit %d\n%s", code, out)
	}
	code, out, errs = decRun(t, nil, "decode", "--spec", decSpec, "--kind", "response", "--hex", "0000000400000003")
	if code != ExitFailure || !strings.Contains(errs, "no response schema of this spec decodes it cleanly") || strings.Count(out, "no response schema") != 1 {
		t.Errorf("no API: exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs = decRun(t, nil, "decode", "--spec", decSpec, "--kind", "response", "--version", "5", "--hex", "0000000400000003"); code != ExitUsage || !strings.Contains(errs, "--version goes with --api") {
		t.Errorf("--version alone: exit %d, %s", code, errs)
	}
	code, out, _ = decRun(t, nil, "decode", "--spec", decSpec, "--kind", "response", "--api", "19", "--version", "5", "--roundtrip", "--hex", hex.EncodeToString(b))
	if code != 0 || !strings.Contains(out, "roundtrip: re-encoding reproduces") || !strings.Contains(out, `"orders"`) {
		t.Errorf("exit %d\n%s", code, out)
	}
}

// TestDecodeRoundtripFailureExit: a non-canonical frame decodes, but
// --roundtrip makes it exit 1 naming the offset and field.
func TestDecodeRoundtripFailureExit(t *testing.T) {
	v7 := decCreateTopics(7)
	in := setSize(slices.Insert(slices.Clone(v7), 15, 0x80)) // header tag count as 0x80 0x00
	code, out, errs := decRun(t, nil, "decode", "--spec", decSpec, "--roundtrip", "--hex", hex.EncodeToString(in))
	if code != 1 || !strings.Contains(out, "roundtrip: differs at offset 0x000f (15), RequestHeader.tagged_fields") || !strings.Contains(out, "redundant varint bytes") || !strings.Contains(errs, "first difference at offset 15") {
		t.Errorf("exit %d\n%s\n%s", code, out, errs)
	}
	code, _, _ = decRun(t, nil, "decode", "--spec", decSpec, "--hex", hex.EncodeToString(in))
	if code != 0 {
		t.Errorf("without --roundtrip: exit %d", code)
	}
}

// TestDecodeCompressedBatch: a Produce request with a zstd batch shows the
// inflated records in their own grid and tree, and round-trips.
func TestDecodeCompressedBatch(t *testing.T) {
	raw := decRecord(decRecord(nil, "k0", "first value"), "k1", "second value")
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	batch := records.AppendBatch(nil, &records.Batch{Attributes: 4, LastOffsetDelta: 1, NumRecords: 2, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Records: enc.EncodeAll(raw, nil)})
	frame, _ := decProduce(batch)
	code, out, errs := decRun(t, nil, "decode", "--spec", decSpec, "--roundtrip", "--hex", hex.EncodeToString(frame))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"zstd compressed, " + fmt.Sprint(len(raw)) + " bytes inflated",
		"decompressed records, offsets within the inflated bytes",
		fmt.Sprintf("byte layout (%d bytes", len(raw)),
		`"k0"`, `"k1"`, `"first value"`, `"second value"`,
		"roundtrip: re-encoding reproduces",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// tcpdumpX formats packets the way tcpdump -X prints them: a header line,
// then rows of "\t0x0000:  4500 0034 ...  ASCII".
func tcpdumpX(pkts [][]byte) string {
	var s strings.Builder
	for i, p := range pkts {
		fmt.Fprintf(&s, "12:00:00.%06d IP 10.0.0.1.50000 > 10.0.0.2.9092: Flags [P.], length %d\n", i, len(p)-40)
		for off := 0; off < len(p); off += 16 {
			row := p[off:min(off+16, len(p))]
			var hx strings.Builder
			for j := 0; j < len(row); j += 2 {
				hx.WriteString(" " + hex.EncodeToString(row[j:min(j+2, len(row))]))
			}
			asc := []byte(string(row))
			for j, c := range asc {
				if c < 0x20 || c > 0x7e {
					asc[j] = '.'
				}
			}
			fmt.Fprintf(&s, "\t0x%04x: %-40s  %s\n", off, hx.String(), asc)
		}
	}
	return s.String()
}

// ipv4TCP wraps a payload in minimal IPv4 and TCP headers.
func ipv4TCP(payload []byte) []byte {
	b := []byte{0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2}
	binary.BigEndian.PutUint16(b[2:], uint16(20+20+len(payload)))
	tcp := []byte{0xc3, 0x50, 0x23, 0x84, 0, 0, 0, 1, 0, 0, 0, 1, 0x50, 0x18, 2, 0, 0, 0, 0, 0}
	return slices.Concat(b, tcp, payload)
}

// TestDecodeTcpdumpX: a request split over two TCP segments, as tcpdump -X
// prints them, decodes as one frame.
func TestDecodeTcpdumpX(t *testing.T) {
	frame := decCreateTopics(7)
	dump := tcpdumpX([][]byte{ipv4TCP(frame[:10]), ipv4TCP(frame[10:])})
	code, out, errs := decRun(t, []byte(dump), "decode", "--spec", decSpec, "--roundtrip", "-")
	if code != 0 || !strings.Contains(out, "request CreateTopics(19) v7 correlation_id 7, 39 bytes") || !strings.Contains(out, "roundtrip: re-encoding reproduces") {
		t.Errorf("exit %d\n%s\n%s\n%s", code, dump, out, errs)
	}
}

func TestParsePorts(t *testing.T) {
	for in, want := range map[string][]int{
		"":                   nil,
		"9092":               {9092},
		" 9092 , 9093":       {9092, 9093},
		"9092-9094":          {9092, 9093, 9094},
		"29092, 9092 - 9093": {29092, 9092, 9093},
		"65535-65535,1":      {65535, 1},
	} {
		got, err := parsePorts(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("parsePorts(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"http", "0", "65536", "9094-9092", "9092-", "-9092", "9092-x", "1-2-3", "9092,,9093"} {
		if _, err := parsePorts(in); err == nil || !strings.Contains(err.Error(), "bad --port") {
			t.Errorf("parsePorts(%q) = %v; want a bad --port error", in, err)
		}
	}
}

// TestDecodeLogBadLineKeepsFramesBefore: JSON lines whose last line is
// cut (a proxy killed mid-write) or not JSON: the error names the line,
// and the frames of the lines before it are printed, not dropped with
// the output buffer.
func TestDecodeLogBadLineKeepsFramesBefore(t *testing.T) {
	good := `{"kind":"request","hex":"0000000d001200000000000700036162"}` + "\n" // ApiVersions v0, correlation id 7
	for name, bad := range map[string]string{
		"cut":      `{"kind":"request","hex":"0000`,
		"not JSON": "{\"hex\":123}\n",
		"bad hex":  "{\"kind\":\"request\",\"hex\":\"0\"}\n",
	} {
		in := []byte(good + good + bad)
		code, out, errOut := decRun(t, in, "decode", "--spec", decSpec, "-")
		if code != 1 || !strings.Contains(errOut, "line 3") {
			t.Errorf("%s: exit %d, stderr %q", name, code, errOut)
		}
		if n := strings.Count(out, "request ApiVersions(18) v0 correlation_id 7"); n != 2 {
			t.Errorf("%s: %d frames printed before the bad line, want 2:\n%s", name, n, out)
		}
	}
}

// TestDecodeLogWithoutLineEnds: JSON lines followed by bytes with no line
// end (a device, a binary file appended) are refused at the first byte
// that cannot start a JSON object, not read whole into one line first
// (cat log /dev/zero | manifester decode - grew without bound).
func TestDecodeLogWithoutLineEnds(t *testing.T) {
	in := append([]byte(`{"kind":"request","hex":"0000000d001200000000000700036162"}`+"\n"), make([]byte, 128<<20)...)
	var a, z runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	code, out, errOut := decRun(t, in, "decode", "--spec", decSpec, "-")
	runtime.ReadMemStats(&z)
	if code != 1 || !strings.Contains(errOut, "line 2 is not JSON") || !strings.Contains(out, "request ApiVersions(18) v0 correlation_id 7") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if n := z.TotalAlloc - a.TotalAlloc; n > 64<<20 {
		t.Errorf("%d bytes allocated for a line of %d zeros", n, len(in))
	}
}

// TestJSONLinesBOM: JSON lines saved on Windows (Notepad, PowerShell's
// Out-File -Encoding utf8) start with a UTF-8 byte order mark and end
// their lines with CRLF, or are UTF-16 (PowerShell 5's "decode --format
// json > log.jsonl"); decode and stats read them as they read the same
// lines without, from a file and from standard input.
func TestJSONLinesBOM(t *testing.T) {
	// ApiVersions v0, correlation id 7, as decode --format json writes it.
	code, line, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--format", "json", "--hex", "0000000b0012000000000007000161")
	if code != 0 || strings.Count(line, "\n") != 1 {
		t.Fatalf("decode --format json: exit %d, %s%s", code, line, errOut)
	}
	line = strings.ReplaceAll(line, "\n", "\r\n")
	// PowerShell 5's ">" writes UTF-16 with its byte order mark.
	var u16 []byte
	for _, u := range utf16.Encode([]rune("\ufeff" + line + line)) {
		u16 = append(u16, byte(u), byte(u>>8))
	}
	for enc, in := range map[string][]byte{"utf-8": []byte("\ufeff" + line + line), "utf-16": u16} {
		file := filepath.Join(t.TempDir(), "log.jsonl")
		if err := os.WriteFile(file, in, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, arg := range []string{file, "-"} {
			code, out, errOut := decRun(t, in, "decode", "--spec", decSpec, arg)
			if code != 0 || strings.Count(out, "request ApiVersions(18) v0 correlation_id 7") != 2 {
				t.Errorf("decode %s %s: exit %d, stderr %q, stdout:\n%s", enc, arg, code, errOut, out)
			}
			code, out, errOut = decRun(t, in, "stats", "--spec", decSpec, arg)
			if code != 0 || !regexp.MustCompile(`ApiVersions\(18\) +v0 +2 `).MatchString(out) {
				t.Errorf("stats %s %s: exit %d, stderr %q, stdout:\n%s", enc, arg, code, errOut, out)
			}
		}
	}
}
