package cli_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/cli"
	"github.com/manifester/manifester/internal/records"
)

// segmentBatch is a RecordBatch v2 written by kmsg at base offset base
// holding one OffsetCommit record per partition given (group billing,
// topic orders), gzip-compressed when gz.
func segmentBatch(t *testing.T, base int64, gz bool, partitions ...int32) []byte {
	t.Helper()
	var kvs [][]byte
	for _, p := range partitions {
		key := (&kmsg.OffsetCommitKey{Version: 1, Group: "billing", Topic: "orders", Partition: p}).AppendTo(nil)
		val := (&kmsg.OffsetCommitValue{Version: 3, Offset: 1000 + int64(p), LeaderEpoch: 2, CommitTimestamp: 99}).AppendTo(nil)
		kvs = append(kvs, key, val)
	}
	var attrs int16
	if gz {
		attrs = 1
	}
	return kmsgBatchAt(t, base, attrs, kvs...)
}

// kmsgBatchAt is a RecordBatch v2 written by kmsg at base offset base
// with attributes attrs (compression 1: gzip; 0x20: control) holding the
// records of the key/value pairs kvs (nil is null).
func kmsgBatchAt(t *testing.T, base int64, attrs int16, kvs ...[]byte) []byte {
	t.Helper()
	var recs []kmsg.Record
	for i := 0; i+1 < len(kvs); i += 2 {
		recs = append(recs, kmsg.Record{OffsetDelta: int32(i / 2), Key: kvs[i], Value: kvs[i+1]})
	}
	return kmsgBatchOf(t, kmsg.RecordBatch{FirstOffset: base, Attributes: attrs}, recs)
}

// kmsgBatchOf writes kb with records recs (kmsg), setting what a batch
// computes: the records' lengths, the count, the last offset delta, the
// producer fields left at 0 to -1, the length and the CRC; gzip when
// kb's attributes say so.
func kmsgBatchOf(t *testing.T, kb kmsg.RecordBatch, recs []kmsg.Record) []byte {
	t.Helper()
	var area []byte
	for _, r := range recs {
		r.Length = int32(len(r.AppendTo(nil)) - 1)
		area = r.AppendTo(area)
	}
	n := int32(len(recs))
	kb.Magic, kb.LastOffsetDelta, kb.NumRecords, kb.Records = 2, n-1, n, area
	if kb.ProducerID == 0 {
		kb.ProducerID, kb.ProducerEpoch, kb.FirstSequence = -1, -1, -1
	}
	if kb.Attributes&7 == 1 {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		if _, err := w.Write(area); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		kb.Records = b.Bytes()
	}
	kb.Length = int32(len(kb.AppendTo(nil)) - 12)
	raw := kb.AppendTo(nil)
	kb.CRC = int32(crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return kb.AppendTo(nil)
}

// writeSegment writes data as the first segment of partition dir.
func writeSegment(t *testing.T, dir string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), dir, "00000000000000000000.log")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDecodeSegment decodes a __consumer_offsets log segment (two kmsg
// batches, the second gzip-compressed, then a preallocated segment's zero
// fill) named as a broker names it: the topic comes from the directory,
// each entry is a summary line (with -v its tree: every key and value
// read as kmsg wrote it, in the inflated batch too) or a JSON line at its
// file offset, and what is not read is counted. A file cut inside its
// last batch, bytes that are not an entry, and an entry over --max-entry
// are said and counted.
func TestDecodeSegment(t *testing.T) {
	a, b := segmentBatch(t, 0, false, 3, 4), segmentBatch(t, 2, true, 5)
	seg := append(append(append([]byte(nil), a...), b...), make([]byte, 4096)...)
	path := writeSegment(t, "__consumer_offsets-7", seg)
	base := []string{"decode", "--spec", specDir43, "--records", recordsDir43}

	code, out, errs := mainRun(t, nil, append(base, path)...)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rec := func(p int) string {
		return "  offset " + strconv.Itoa(p-3) + " timestamp 0 key OffsetCommitKey {\"group\":\"billing\",\"topic\":\"orders\",\"partition\":" + strconv.Itoa(p) +
			"} value OffsetCommitValue v3 {\"offset\":100" + strconv.Itoa(p) + ",\"leaderEpoch\":2,\"metadata\":\"\",\"commitTimestamp\":99}\n"
	}
	want := "entry batch offsets 0-1, 2 records, " + strconv.Itoa(len(a)) + " bytes at position 0\n" + rec(3) + rec(4) +
		"entry batch offsets 2-2, 1 record, gzip, " + strconv.Itoa(len(b)) + " bytes at position " + strconv.Itoa(len(a)) + "\n" + rec(5)
	if out != want {
		t.Errorf("summary lines:\n%s\nwant:\n%s", out, want)
	}
	for _, w := range []string{"the records of __consumer_offsets (the directory's name), keys and values read as its record types",
		"2 entries; then 4096 bytes of zeros from position " + strconv.Itoa(len(a)+len(b)) + " to the end (a preallocated segment's unused room)"} {
		if !strings.Contains(errs, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errs)
		}
	}

	code, out, errs = mainRun(t, nil, append(base, "-v", path)...)
	if code != cli.ExitOK {
		t.Fatalf("-v: exit %d: %s", code, errs)
	}
	if n := strings.Count(out, "OffsetCommitKey"); n < 3*2 {
		t.Errorf("-v: OffsetCommitKey %d times; want a key node and its struct for each of 3 records", n)
	}
	for _, w := range []string{"= 1003", "= 1004", "= 1005", `"billing"`, "decompressed"} {
		if !strings.Contains(out, w) {
			t.Errorf("-v lacks %q", w)
		}
	}

	code, out, errs = mainRun(t, nil, append(base, "--format", "json", "--segment", path)...)
	if code != cli.ExitOK {
		t.Fatalf("json: exit %d: %s", code, errs)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<24)
	var lines []map[string]any
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("json line: %v", err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 {
		t.Fatalf("%d JSON lines, want 2", len(lines))
	}
	for i, want := range [][]byte{a, b} {
		m := lines[i]
		off := [...]int{0, len(a)}[i]
		tree, _ := m["tree"].(map[string]any)
		if m["kind"] != "entry" || m["index"] != float64(i) || m["offset"] != float64(off) || m["size"] != float64(len(want)) ||
			m["hex"] != hex.EncodeToString(want) || tree == nil || tree["name"] != "Records" || m["api_key"] != nil || m["error"] != nil {
			t.Errorf("line %d: %v", i, m)
		}
	}

	// Cut inside the second batch: shown, noted, not a failure.
	cut := writeSegment(t, "__consumer_offsets-7", seg[:len(a)+len(b)-9])
	code, out, errs = mainRun(t, nil, append(base, cut)...)
	if code != cli.ExitOK || !strings.Contains(out, "entry batch offsets 2-2, 1 record, gzip, "+strconv.Itoa(len(b)-9)+" bytes at position "+strconv.Itoa(len(a))+" (cut: the file ends)") ||
		!strings.Contains(out, "note: the file ends inside this entry") || !strings.Contains(errs, "2 entries, the last cut short by the end of the file") {
		t.Errorf("cut: exit %d\n%s\n%s", code, out, errs)
	}

	// Bytes that are not an entry after the first batch; a corrupt CRC.
	bad := append(append([]byte(nil), a...), bytes.Repeat([]byte{0xff}, 40)...)
	code, _, errs = mainRun(t, nil, append(base, writeSegment(t, "orders-0", bad))...)
	if code != cli.ExitFailure || !strings.Contains(errs, "1 entry; 40 bytes not read: not a log entry: the entry at file offset "+strconv.Itoa(len(a))+" has length -1") ||
		strings.Contains(errs, "preallocated") || strings.Contains(errs, "the records of") {
		t.Errorf("garbage after an entry: exit %d: %s", code, errs)
	}
	crc := append([]byte(nil), a...)
	crc[len(crc)-1] ^= 1
	code, out, errs = mainRun(t, nil, append(base, writeSegment(t, "__consumer_offsets-7", crc))...)
	if code != cli.ExitFailure || !strings.Contains(out, "error: ") || !strings.Contains(out, "crc") || !strings.Contains(errs, "1 entry, 1 failed to decode") {
		t.Errorf("bad CRC: exit %d\n%s\n%s", code, out, errs)
	}

	// Over --max-entry: read past, counted, the next one decoded.
	code, out, errs = mainRun(t, nil, append(base, "--max-entry", strconv.Itoa(len(a)-1), path)...)
	if code != cli.ExitFailure || !strings.Contains(out, "# entry 0 at file offset 0: "+strconv.Itoa(len(a))+" bytes, over the limit of "+strconv.Itoa(len(a)-1)+" (--max-entry): skipped") ||
		!strings.Contains(out, "entry batch offsets 2-2") || !strings.Contains(errs, "1 entry; 1 entry ("+strconv.Itoa(len(a))+" bytes) over --max-entry skipped") {
		t.Errorf("--max-entry: exit %d\n%s\n%s", code, out, errs)
	}

	code, out, errs = mainRun(t, nil, append(base, "--format", "json", "--max-entry", strconv.Itoa(len(a)-1), path)...)
	if code != cli.ExitFailure || strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, `{"index":1,`) || !strings.Contains(errs, "# entry 0 at file offset 0: ") {
		t.Errorf("--max-entry, json: exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs = mainRun(t, nil, append(base, "--segment", filepath.Dir(path))...); code != cli.ExitUsage || !strings.Contains(errs, "is a directory") {
		t.Errorf("a directory: exit %d: %s", code, errs)
	}

	// A directory that names no topic; --records-topic names one.
	other := writeSegment(t, "segments", append(append([]byte(nil), a...), b...))
	code, out, errs = mainRun(t, nil, append(base, "-v", other)...)
	if code != cli.ExitOK || strings.Contains(out, "OffsetCommitKey") || !strings.Contains(errs, "no topic is known") {
		t.Errorf("no topic: exit %d, keys decoded %v: %s", code, strings.Contains(out, "OffsetCommitKey"), errs)
	}
	code, out, _ = mainRun(t, nil, append(base, "-v", "--records-topic", "__consumer_offsets", other)...)
	if code != cli.ExitOK || !strings.Contains(out, "OffsetCommitKey") {
		t.Errorf("--records-topic: exit %d, keys decoded %v", code, strings.Contains(out, "OffsetCommitKey"))
	}

	for _, args := range [][]string{{"--segment", path, "--filter", "api == Fetch"}, {"--segment", path, "--hex", "00"}, {"--segment", path, "--roundtrip"}} {
		if code, _, errs := mainRun(t, nil, append(base, args...)...); code != cli.ExitUsage {
			t.Errorf("%v: exit %d: %s", args, code, errs)
		}
	}
}

// TestDecodeSnapshot decodes a KRaft snapshot as a controller names it
// (__cluster_metadata-0/<offset>-<epoch>.checkpoint): a SNAPSHOT_HEADER
// control batch (kmsg's control key, the header record by hand), a batch
// of a TopicRecord (by hand: kmsg has no metadata records), and a
// SNAPSHOT_FOOTER control batch. Each reads as its record type.
func TestDecodeSnapshot(t *testing.T) {
	header := (&kmsg.ControlRecordKey{Version: 0, Type: 3}).AppendTo(nil)
	footer := (&kmsg.ControlRecordKey{Version: 0, Type: 4}).AppendTo(nil)
	// value version 0; SnapshotHeaderRecord v0 (flexible): Version 0,
	// LastContainedLogTimestamp 1700000000000, no tags.
	headerVal := []byte{0, 0, 0, 0, 0, 0, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00, 0}
	footerVal := []byte{0, 0, 0, 0, 0} // value version 0; SnapshotFooterRecord v0: Version 0, no tags
	// frame version 1, TopicRecord (2) v0: compact string "orders", a uuid, no tags.
	topic := append(append([]byte{1, 2, 0, 7}, "orders"...), make([]byte, 16)...)
	topic = append(topic, 0)
	seg := append(append(kmsgBatchAt(t, 0, 0x20, header, headerVal), kmsgBatchAt(t, 1, 0, nil, topic)...), kmsgBatchAt(t, 2, 0x20, footer, footerVal)...)
	path := filepath.Join(t.TempDir(), "__cluster_metadata-0", "00000000000000000100-0000000003.checkpoint")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, seg, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := mainRun(t, nil, "decode", "--spec", specDir43, "--records", recordsDir43, "-v", path)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, w := range []string{"entry control batch offsets 0-0, 1 record, ", "entry batch offsets 1-1, 1 record, ", "entry control batch offsets 2-2, 1 record, ",
		"(SNAPSHOT_HEADER)", "SnapshotHeaderRecord", "= 1700000000000", "TopicRecord", `"orders"`, "(SNAPSHOT_FOOTER)", "SnapshotFooterRecord"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q", w)
		}
	}
	if strings.Contains(out, "undecoded") || strings.Contains(out, "error") || !strings.Contains(errs, "the records of __cluster_metadata") {
		t.Errorf("a record did not read as its schema:\n%s\n%s", out, errs)
	}
}

// TestDecodeSegmentRecordLines: a record line shows a user topic's text
// key quoted, a binary value as hex (its first 32 bytes and its size), a
// null key, the timestamp as a date and the header count; text from the
// records (a group id with a bidi override and an escape, in a
// __consumer_offsets key) reaches the terminal escaped.
func TestDecodeSegmentRecordLines(t *testing.T) {
	bin := make([]byte, 40)
	bin[0] = 0xff
	user := kmsgBatchOf(t, kmsg.RecordBatch{FirstOffset: 7, FirstTimestamp: 1700000000000}, []kmsg.Record{
		{Key: []byte("order-17"), Value: bin},
		{OffsetDelta: 1, TimestampDelta64: 1500, Value: []byte("shipped\n"), Headers: []kmsg.Header{{Key: "trace", Value: []byte("1")}}},
	})
	code, out, errs := mainRun(t, nil, "decode", "--spec", specDir43, writeSegment(t, "orders-0", user))
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "  offset 7 timestamp 1700000000000 (2023-11-14T22:13:20.000Z) key \"order-17\" value 0xff" + strings.Repeat("00", 31) + "... (40 bytes)\n" +
		"  offset 8 timestamp 1700000001500 (2023-11-14T22:13:21.500Z) key null value \"shipped\\n\" headers trace=\"1\"\n"
	if !strings.HasSuffix(out, want) {
		t.Errorf("user topic:\n%s\nwant it to end with:\n%s", out, want)
	}

	key := (&kmsg.OffsetCommitKey{Version: 1, Group: "evil\u202e\x1b[2J", Topic: "orders", Partition: 0}).AppendTo(nil)
	val := (&kmsg.OffsetCommitValue{Version: 1, Offset: 5, CommitTimestamp: 1700000000000}).AppendTo(nil)
	evil := kmsgBatchAt(t, 0, 0, key, val)
	code, out, errs = mainRun(t, nil, "decode", "--spec", specDir43, "--records", recordsDir43, writeSegment(t, "__consumer_offsets-0", evil))
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.ContainsAny(out, "\u202e\x1b") || !strings.Contains(out, `"group":"evil\u202e\u001b[2J"`) ||
		!strings.Contains(out, `value OffsetCommitValue v1 {"offset":5,"metadata":"","commitTimestamp":1700000000000,"expireTimestamp":0}`) {
		t.Errorf("crafted group id:\n%q", out)
	}
}

// TestDecodeSegmentLogAppendTime: the records of a batch whose timestamp
// type is LogAppendTime (attributes bit 3) all have the batch's
// maxTimestamp, the time the broker appended them, as Kafka's
// DefaultRecordBatch (and kafka-dump-log) reads them; not baseTimestamp
// plus their deltas, which the producer set.
func TestDecodeSegmentLogAppendTime(t *testing.T) {
	seg := kmsgBatchOf(t, kmsg.RecordBatch{FirstOffset: 0, Attributes: 0x08, FirstTimestamp: 1000, MaxTimestamp: 1700000000000}, []kmsg.Record{
		{Key: []byte("a"), Value: []byte("b"), TimestampDelta64: 5},
		{OffsetDelta: 1, Key: []byte("c"), Value: []byte("d"), TimestampDelta64: 7},
	})
	code, out, errs := mainRun(t, nil, "decode", "--spec", specDir43, writeSegment(t, "orders-0", seg))
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "  offset 0 timestamp 1700000000000 (2023-11-14T22:13:20.000Z, log append time) key \"a\" value \"b\"\n" +
		"  offset 1 timestamp 1700000000000 (2023-11-14T22:13:20.000Z, log append time) key \"c\" value \"d\"\n"
	if !strings.HasSuffix(out, want) {
		t.Errorf("log append time:\n%s\nwant it to end with:\n%s", out, want)
	}
}

// TestDecodeSegmentRecordNotDecoded: a batch that claims more records
// than it holds fails at the first missing one; its line says it was not
// decoded rather than showing an offset, key and value it does not have.
func TestDecodeSegmentRecordNotDecoded(t *testing.T) {
	seg := kmsgBatchOf(t, kmsg.RecordBatch{FirstOffset: 4}, []kmsg.Record{{Key: []byte("a")}})
	binary.BigEndian.PutUint32(seg[57:], 3) // recordsCount
	binary.BigEndian.PutUint32(seg[17:], crc32.Checksum(seg[21:], crc32.MakeTable(crc32.Castagnoli)))
	code, out, errs := mainRun(t, nil, "decode", "--spec", specDir43, writeSegment(t, "orders-0", seg))
	if code != cli.ExitFailure {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "  offset 4 timestamp 0 key \"a\" value null\n  record 1: not decoded (the error above)\n"
	if !strings.HasSuffix(out, want) || !strings.Contains(out, "error: ") {
		t.Errorf("record not decoded:\n%s\nwant it to end with:\n%s", out, want)
	}
}

// TestDecodeSegmentInflatedErrors: a compressed batch whose inflated
// records do not decode (it claims more records than it holds), or whose
// compressed data does not inflate (its CRC right: the producer wrote
// it so), is an entry that failed to decode: an error line in text naming
// the batch's field path and the entry's byte offset, an "error" in JSON,
// and exit status 1, as Kafka's reader throws on it; not a note in the
// -v tree alone.
func TestDecodeSegmentInflatedErrors(t *testing.T) {
	claims := kmsgBatchOf(t, kmsg.RecordBatch{FirstOffset: 4, Attributes: 1}, []kmsg.Record{{Key: []byte("a")}})
	binary.BigEndian.PutUint32(claims[57:], 3) // recordsCount
	binary.BigEndian.PutUint32(claims[17:], crc32.Checksum(claims[21:], crc32.MakeTable(crc32.Castagnoli)))
	garbled := kmsgBatchOf(t, kmsg.RecordBatch{FirstOffset: 5, Attributes: 1}, []kmsg.Record{{Key: []byte("a")}})
	garbled[len(garbled)-9] ^= 0xff // in the gzip stream's deflate data or trailer
	binary.BigEndian.PutUint32(garbled[17:], crc32.Checksum(garbled[21:], crc32.MakeTable(crc32.Castagnoli)))
	for name, seg := range map[string][]byte{"claims": claims, "garbled": garbled} {
		path := writeSegment(t, "orders-0", seg)
		code, out, errs := mainRun(t, nil, "decode", "--spec", specDir43, path)
		if code != cli.ExitFailure || !strings.Contains(out, "  error: offset 0x003d (61), Records[0].records") ||
			!strings.Contains(errs, "1 entry, 1 failed to decode") {
			t.Errorf("%s: exit %d\n%s\n%s", name, code, out, errs)
		}
		code, out, _ = mainRun(t, nil, "decode", "--spec", specDir43, "--format", "json", path)
		if code != cli.ExitFailure || !strings.Contains(out, `"error":"offset 0x003d (61), Records[0].records`) {
			t.Errorf("%s, json: exit %d\n%s", name, code, out)
		}
	}
}

// legacyEntry is a legacy message set's entry (magic 0 or 1) at offset,
// written by hand (kmsg has no legacy messages): attributes attrs (the
// compression codec), timestamp ts (magic 1), key and value (nil is null).
func legacyEntry(offset int64, magic, attrs int8, ts int64, key, value []byte) []byte {
	body := []byte{byte(magic), byte(attrs)}
	if magic == 1 {
		body = binary.BigEndian.AppendUint64(body, uint64(ts))
	}
	for _, b := range [][]byte{key, value} {
		if b == nil {
			body = binary.BigEndian.AppendUint32(body, 0xffffffff)
			continue
		}
		body = binary.BigEndian.AppendUint32(body, uint32(len(b)))
		body = append(body, b...)
	}
	e := binary.BigEndian.AppendUint64(nil, uint64(offset))
	e = binary.BigEndian.AppendUint32(e, uint32(4+len(body)))
	e = binary.BigEndian.AppendUint32(e, crc32.ChecksumIEEE(body))
	return append(e, body...)
}

// TestDecodeSegmentLegacy: a segment of legacy message sets (a message
// v0, a message v1, a gzip wrapper v1 of two messages whose offsets are
// relative to the wrapper's, the last) prints a record line per message
// as kafka-dump-log does, the wrapper's inner ones at their absolute
// offsets; a __consumer_offsets message v1 has its key and value read
// as its record types.
func TestDecodeSegmentLegacy(t *testing.T) {
	var inner bytes.Buffer
	w := gzip.NewWriter(&inner)
	w.Write(append(legacyEntry(0, 1, 0, 1700000000002, []byte("ik2"), []byte("iv2")), legacyEntry(1, 1, 0, 1700000000003, []byte("ik3"), nil)...))
	w.Close()
	seg := bytes.Join([][]byte{
		legacyEntry(0, 0, 0, 0, []byte("k0"), []byte("v0")),
		legacyEntry(1, 1, 0, 1700000000000, []byte("k1"), []byte("v1")),
		legacyEntry(3, 1, 1, 1700000000001, nil, inner.Bytes()),
	}, nil)
	code, out, errs := mainRun(t, nil, "decode", "--spec", specDir43, writeSegment(t, "orders-0", seg))
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := []string{
		"entry message v0 at offset 0, 30 bytes at position 0\n  offset 0 key \"k0\" value \"v0\"\n",
		"entry message v1 at offset 1, 38 bytes at position 30\n  offset 1 timestamp 1700000000000 (2023-11-14T22:13:20.000Z) key \"k1\" value \"v1\"\n",
		"entry message v1 at offset 3, gzip, ",
		"\n  offset 2 timestamp 1700000000002 (2023-11-14T22:13:20.002Z) key \"ik2\" value \"iv2\"\n  offset 3 timestamp 1700000000003 (2023-11-14T22:13:20.003Z) key \"ik3\" value null\n",
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}

	key := (&kmsg.OffsetCommitKey{Version: 1, Group: "g", Topic: "t", Partition: 1}).AppendTo(nil)
	val := (&kmsg.OffsetCommitValue{Version: 1, Offset: 5, CommitTimestamp: 1700000000000}).AppendTo(nil)
	code, out, errs = mainRun(t, nil, "decode", "--spec", specDir43, "--records", recordsDir43,
		writeSegment(t, "__consumer_offsets-1", legacyEntry(0, 1, 0, 1700000000000, key, val)))
	if code != cli.ExitOK || !strings.Contains(out, `  offset 0 timestamp 1700000000000 (2023-11-14T22:13:20.000Z) key OffsetCommitKey {"group":"g","topic":"t","partition":1} value OffsetCommitValue v1 {"offset":5,`) {
		t.Errorf("__consumer_offsets, legacy: exit %d\n%s\n%s", code, out, errs)
	}
}

// TestDecodeSegmentBudgetCounted: a compression bomb (a zstd batch of a
// 64 MiB value of zeros, a few kilobytes on disk) is inflated up to the
// entry's --max-inflate and no further, its entry says so, and the last
// stderr line counts the entries shown in part, as it counts every other
// thing not read.
func TestDecodeSegmentBudgetCounted(t *testing.T) {
	var z bytes.Buffer
	area := (&kmsg.Record{Key: []byte("k"), Value: make([]byte, 64<<20)})
	area.Length = int32(len(area.AppendTo(nil)) - 1)
	bomb := kmsgBatchOf(t, kmsg.RecordBatch{FirstOffset: 0}, []kmsg.Record{*area})
	// Recompress by hand: kmsgBatchOf knows gzip only.
	zw, err := zstd.NewWriter(&z)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(bomb[61:])
	zw.Close()
	kb := kmsg.RecordBatch{FirstOffset: 0, Magic: 2, Attributes: 4, NumRecords: 1, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, Records: z.Bytes()}
	kb.Length = int32(len(kb.AppendTo(nil)) - 12)
	raw := kb.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	small := kmsgBatchAt(t, 1, 0, []byte("a"), []byte("b"))
	code, out, errs := mainRun(t, nil, "decode", "--spec", specDir43, "--max-inflate", "1MiB", writeSegment(t, "orders-0", append(raw, small...)))
	if code != cli.ExitOK || !strings.Contains(out, "  budget: inflation budget of 1 MiB") ||
		!strings.Contains(errs, "2 entries; 1 entry shown in part (over a budget: --max-inflate, --max-nodes, --max-output)") {
		t.Errorf("exit %d\n%.2000s\n%s", code, out, errs)
	}
}

// TestDecodeSegmentTxnMarkers: a user topic's transactional batch and its
// COMMIT and ABORT markers (control batches, kmsg's ControlRecordKey and
// EndTxnMarker) read as kafka-dump-log reads them: the markers' keys and
// values as their control record types, from the message specs (no
// --records needed), not as hex; the data batch's records stay bytes.
func TestDecodeSegmentTxnMarkers(t *testing.T) {
	commit := (&kmsg.ControlRecordKey{Version: 0, Type: 1}).AppendTo(nil)
	abort := (&kmsg.ControlRecordKey{Version: 0, Type: 0}).AppendTo(nil)
	marker := (&kmsg.EndTxnMarker{Version: 0, CoordinatorEpoch: 7}).AppendTo(nil)
	seg := bytes.Join([][]byte{
		kmsgBatchOf(t, kmsg.RecordBatch{FirstOffset: 0, Attributes: 0x10, ProducerID: 42, ProducerEpoch: 1}, []kmsg.Record{{Key: []byte("x"), Value: []byte("y")}}),
		kmsgBatchOf(t, kmsg.RecordBatch{FirstOffset: 1, Attributes: 0x30, ProducerID: 42, ProducerEpoch: 1, FirstSequence: -1}, []kmsg.Record{{Key: commit, Value: marker}}),
		kmsgBatchOf(t, kmsg.RecordBatch{FirstOffset: 2, Attributes: 0x31, ProducerID: 43, ProducerEpoch: 1, FirstSequence: -1}, []kmsg.Record{{Key: abort, Value: marker}}),
	}, nil)
	for _, extra := range [][]string{nil, {"--records", recordsDir43}} {
		code, out, errs := mainRun(t, nil, append(append([]string{"decode", "--spec", specDir43}, extra...), writeSegment(t, "orders-0", seg))...)
		want := "entry transactional batch offsets 0-0, 1 record, producer 42 epoch 1 sequence 0, 70 bytes at position 0\n  offset 0 timestamp 0 key \"x\" value \"y\"\n" +
			"entry transactional control batch offsets 1-1, 1 record, producer 42 epoch 1, 78 bytes at position 70\n" +
			"  offset 1 timestamp 0 key ControlRecordTypeSchema v0 {\"Type\":1} value EndTxnMarker v0 {\"CoordinatorEpoch\":7}\n" +
			"entry transactional control batch offsets 2-2, 1 record, gzip, producer 43 epoch 1, "
		if code != cli.ExitOK || !strings.HasPrefix(out, want) ||
			!strings.HasSuffix(out, "\n  offset 2 timestamp 0 key ControlRecordTypeSchema v0 {\"Type\":0} value EndTxnMarker v0 {\"CoordinatorEpoch\":7}\n") {
			t.Errorf("%v: exit %d\n%s\nwant it to start with\n%s\n%s", extra, code, out, want, errs)
		}
	}
}

// TestDecodeSegmentRecordHeaders: a record line shows its headers' keys
// and values, as kafka-dump-log shows their keys (a null value is null,
// a binary one hex, a key escaped like any text), up to maxHeadersShown
// of them, then how many more.
func TestDecodeSegmentRecordHeaders(t *testing.T) {
	var many []kmsg.Header
	for i := range 20 {
		many = append(many, kmsg.Header{Key: "h" + strconv.Itoa(i), Value: []byte("v")})
	}
	seg := kmsgBatchOf(t, kmsg.RecordBatch{FirstOffset: 0}, []kmsg.Record{
		{Key: []byte("a"), Value: []byte("b"), Headers: []kmsg.Header{{Key: "trace", Value: []byte("1")}, {Key: "bin\x1b", Value: []byte{0, 0xff}}, {Key: "none"}}},
		{OffsetDelta: 1, Value: []byte("c"), Headers: many},
	})
	code, out, errs := mainRun(t, nil, "decode", "--spec", specDir43, writeSegment(t, "orders-0", seg))
	want := "  offset 0 timestamp 0 key \"a\" value \"b\" headers trace=\"1\" \"bin\\x1b\"=0x00ff none=null\n" +
		"  offset 1 timestamp 0 key null value \"c\" headers h0=\"v\" h1=\"v\" h2=\"v\" h3=\"v\" h4=\"v\" h5=\"v\" h6=\"v\" h7=\"v\" h8=\"v\" h9=\"v\" h10=\"v\" h11=\"v\" h12=\"v\" h13=\"v\" h14=\"v\" h15=\"v\" and 4 more (20 headers)\n"
	if code != cli.ExitOK || !strings.HasSuffix(out, want) {
		t.Errorf("exit %d\n%s\nwant it to end with\n%s\n%s", code, out, want, errs)
	}
}

// compressArea compresses a batch's records as a Kafka producer does:
// gzip, snappy (snappy-java's xerial framing), lz4 (frame), zstd.
func compressArea(t *testing.T, codec int, area []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	switch codec {
	case 1:
		w := gzip.NewWriter(&b)
		w.Write(area)
		w.Close()
	case 2:
		b.Write([]byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1})
		block := snappy.Encode(nil, area)
		b.Write(binary.BigEndian.AppendUint32(nil, uint32(len(block))))
		b.Write(block)
	case 3:
		w := lz4.NewWriter(&b)
		w.Write(area)
		w.Close()
	case 4:
		w, err := zstd.NewWriter(&b)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(area)
		w.Close()
	default:
		return area
	}
	return b.Bytes()
}

// TestDecodeSegmentMatchesKmsg decodes a segment of batches kmsg wrote
// from random records (every codec, CreateTime and LogAppendTime, null
// and text keys and values, headers, offset and timestamp gaps) and
// checks every record line against what kmsg put in: the offset base +
// delta, the timestamp (maxTimestamp under LogAppendTime), the key, the
// value and the headers. kmsg reads each entry back to the same batch.
func TestDecodeSegmentMatchesKmsg(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() []byte {
		if rng.IntN(5) == 0 {
			return nil
		}
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = "abcdefghijklmnopqrstuvwxyz0123456789-_ "[rng.IntN(39)]
		}
		return b
	}
	part := func(b []byte) string {
		if b == nil {
			return "null"
		}
		return strconv.Quote(string(b))
	}
	var seg bytes.Buffer
	var want strings.Builder
	next := int64(rng.IntN(1000))
	for i := range 40 {
		codec := i % 5
		attrs := int16(codec)
		if rng.IntN(3) == 0 {
			attrs |= 0x08
		}
		kb := kmsg.RecordBatch{FirstOffset: next, Attributes: attrs, FirstTimestamp: 1700000000000 + rng.Int64N(1e9), ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1}
		kb.MaxTimestamp = kb.FirstTimestamp + 5e9
		var recs []kmsg.Record
		delta := int32(0)
		for j := range 1 + rng.IntN(20) {
			r := kmsg.Record{OffsetDelta: delta, TimestampDelta64: rng.Int64N(1e6), Key: word(), Value: word()}
			for range rng.IntN(4) {
				r.Headers = append(r.Headers, kmsg.Header{Key: "h" + strconv.Itoa(j), Value: word()})
			}
			recs = append(recs, r)
			delta += 1 + int32(rng.IntN(3)) // compacted: offsets may skip
		}
		var area []byte
		for _, r := range recs {
			r.Length = int32(len(r.AppendTo(nil)) - 1)
			area = r.AppendTo(area)
		}
		kb.Magic, kb.LastOffsetDelta, kb.NumRecords, kb.Records = 2, recs[len(recs)-1].OffsetDelta, int32(len(recs)), compressArea(t, codec, area)
		kb.Length = int32(len(kb.AppendTo(nil)) - 12)
		raw := kb.AppendTo(nil)
		kb.CRC = int32(crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
		raw = kb.AppendTo(nil)
		var back kmsg.RecordBatch
		if err := back.ReadFrom(raw); err != nil || back.NumRecords != kb.NumRecords || back.CRC != kb.CRC {
			t.Fatalf("kmsg reads batch %d back: %v", i, err)
		}
		noun := "records"
		if len(recs) == 1 {
			noun = "record"
		}
		want.WriteString(fmt.Sprintf("entry batch offsets %d-%d, %d %s, ", next, next+int64(kb.LastOffsetDelta), len(recs), noun))
		if codec != 0 {
			want.WriteString(records.CompressionName(codec) + ", ")
		}
		want.WriteString(fmt.Sprintf("%d bytes at position %d\n", len(raw), seg.Len()))
		for _, r := range recs {
			ts := kb.FirstTimestamp + r.TimestampDelta64
			when := time.UnixMilli(ts).UTC().Format("2006-01-02T15:04:05.000Z")
			if attrs&0x08 != 0 {
				ts = kb.MaxTimestamp
				when = time.UnixMilli(ts).UTC().Format("2006-01-02T15:04:05.000Z") + ", log append time"
			}
			want.WriteString(fmt.Sprintf("  offset %d timestamp %d (%s) key %s value %s", next+int64(r.OffsetDelta), ts, when, part(r.Key), part(r.Value)))
			if len(r.Headers) > 0 {
				want.WriteString(" headers")
				for _, h := range r.Headers {
					want.WriteString(" " + h.Key + "=" + part(h.Value))
				}
			}
			want.WriteString("\n")
		}
		seg.Write(raw)
		next += int64(kb.LastOffsetDelta) + 1 + int64(rng.IntN(5))
	}
	code, out, errs := mainRun(t, nil, "decode", "--spec", specDir43, writeSegment(t, "orders-0", seg.Bytes()))
	if code != cli.ExitOK || out != want.String() {
		ol, wl := strings.Split(out, "\n"), strings.Split(want.String(), "\n")
		for i := range min(len(ol), len(wl)) {
			if ol[i] != wl[i] {
				t.Fatalf("exit %d; line %d:\n%s\nwant:\n%s\n%s", code, i, ol[i], wl[i], errs)
			}
		}
		t.Fatalf("exit %d; %d lines, want %d\n%s", code, len(ol), len(wl), errs)
	}
}

// failingReader returns its bytes, then err.
type failingReader struct {
	b   []byte
	err error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, r.err
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}

// TestDecodeSegmentReadError: a read error part way through (a disk
// error, a pipe closed by its writer) fails the run, naming the file
// offset, after the reports of the entries read before it, which are
// not lost in the output's buffer; the count of those entries is said.
func TestDecodeSegmentReadError(t *testing.T) {
	a := kmsgBatchAt(t, 0, 0, []byte("a"), []byte("b"))
	for name, data := range map[string][]byte{"entry": append(append([]byte(nil), a...), a[:30]...), "rest": append(append([]byte(nil), a...), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)} {
		var out, errb bytes.Buffer
		e := &cli.Env{Stdin: &failingReader{data, errors.New("input/output error")}, Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
		code := cli.Main(e, []string{"decode", "--spec", specDir43, "--segment", "-"})
		if code != cli.ExitFailure || !strings.Contains(out.String(), "entry batch offsets 0-0, 1 record, ") || !strings.Contains(out.String(), `key "a" value "b"`) ||
			!strings.Contains(errb.String(), "input/output error") || !strings.Contains(errb.String(), "1 entry") {
			t.Errorf("%s: exit %d\n%s\n%s", name, code, out.String(), errb.String())
		}
	}
}

// TestDecodeSegmentRecordNotItsType: an internal topic's key or value
// that does not read as its record type (a value cut short, a record type
// the schemas do not define) is shown as bytes on its record line, with
// why it is not its type, not as if it were any other topic's bytes; a
// null key, which a coordinator record cannot have, says so too.
func TestDecodeSegmentRecordNotItsType(t *testing.T) {
	key := (&kmsg.OffsetCommitKey{Version: 1, Group: "g", Topic: "t", Partition: 1}).AppendTo(nil)
	val := (&kmsg.OffsetCommitValue{Version: 3, Offset: 5, CommitTimestamp: 1700000000000}).AppendTo(nil)
	seg := append(kmsgBatchAt(t, 0, 0, key, val[:len(val)-3]), kmsgBatchAt(t, 1, 1, []byte{0, 99}, []byte{1})...)
	seg = append(seg, kmsgBatchAt(t, 2, 0, nil, val)...)
	code, out, errs := mainRun(t, nil, "decode", "--spec", specDir43, "--records", recordsDir43, writeSegment(t, "__consumer_offsets-9", seg))
	for _, w := range []string{
		`  offset 0 timestamp 0 key OffsetCommitKey {"group":"g","topic":"t","partition":1} value 0x000300000000000000050000000000000000018bcf (not a valid OffsetCommitValue v3: `,
		"  offset 1 timestamp 0 key 0x0063 (record type 99 is not defined in group-coordinator) value 0x01",
		"  offset 2 timestamp 0 key null (a coordinator record needs a key) value 0x0003",
	} {
		if code != cli.ExitOK || !strings.Contains(out, w) {
			t.Errorf("exit %d, output lacks %q:\n%s\n%s", code, w, out, errs)
		}
	}
}

// TestDecodeSegmentLegacyBadWrapper: a compressed legacy wrapper whose
// key's length is past its end (its CRC right) fails to decode, and its
// record line says so: no panic for the value it never reached.
func TestDecodeSegmentLegacyBadWrapper(t *testing.T) {
	e := legacyEntry(3, 1, 1, 1700000000001, []byte("k"), []byte("compressed"))
	binary.BigEndian.PutUint32(e[26:], 0x7fffffff) // the key's length
	binary.BigEndian.PutUint32(e[12:], crc32.ChecksumIEEE(e[16:]))
	code, out, errs := mainRun(t, nil, "decode", "--spec", specDir43, writeSegment(t, "orders-0", e))
	if code != cli.ExitFailure || !strings.Contains(out, "  error: ") || !strings.HasSuffix(out, "  message 0: not decoded (the error above)\n") {
		t.Errorf("exit %d\n%s\n%s", code, out, errs)
	}
}

// TestDecodeSegmentCompanionFiles: a file a broker keeps beside a
// segment (its offset index, time index, a producer snapshot, the
// leader-epoch checkpoint) holds no records: decode names what it is and
// points at the segment, rather than read it as frames or entries.
func TestDecodeSegmentCompanionFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, kind := range map[string]string{
		"00000000000000000000.index":     "a segment's offset index",
		"00000000000000000000.timeindex": "a segment's time index",
		"00000000000000000007.snapshot":  "a producer-state snapshot",
		"leader-epoch-checkpoint":        "the partition's leader-epoch checkpoint",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, make([]byte, 24), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{path}, {"--segment", path}} {
			code, out, errs := mainRun(t, nil, append([]string{"decode", "--spec", specDir43}, args...)...)
			if code != cli.ExitUsage || out != "" || !strings.Contains(errs, kind+", which holds no records") || !strings.Contains(errs, "00000000000000000000.log") {
				t.Errorf("decode %v: exit %d, %q\n%s", args, code, out, errs)
			}
		}
	}
}
