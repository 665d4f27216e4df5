package cli_test

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/cli"
	"github.com/manifester/manifester/internal/testshared"
)

var recordsDir43 = testshared.Join("kafka-records", "4.3")

// offsetsProduce is a Produce v12 request to topic carrying one
// __consumer_offsets record written with kmsg's OffsetCommitKey/Value.
func offsetsProduce(topic string) string {
	key := (&kmsg.OffsetCommitKey{Version: 1, Group: "billing", Topic: "orders", Partition: 7}).AppendTo(nil)
	val := (&kmsg.OffsetCommitValue{Version: 3, Offset: 1234, LeaderEpoch: 2, CommitTimestamp: 99}).AppendTo(nil)
	r := kmsg.Record{Key: key, Value: val}
	r.Length = int32(len(r.AppendTo(nil)) - 1)
	kb := kmsg.RecordBatch{Magic: 2, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: 1, Records: r.AppendTo(nil)}
	kb.Length = int32(len(kb.AppendTo(nil)) - 12)
	raw := kb.AppendTo(nil)
	kb.CRC = int32(crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	req := kmsg.NewProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 12, -1, 1000
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = topic
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = kb.AppendTo(nil)
	tp.Partitions = append(tp.Partitions, pp)
	req.Topics = append(req.Topics, tp)
	b := []byte{0, 0, 0, 0, 0, 0, 0, 12, 0, 0, 0, 1, 0, 0, 0} // size, Produce v12, corr 1, client "", no tags
	b = req.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return hex.EncodeToString(b)
}

func TestShowRecordType(t *testing.T) {
	code, out, errs := mainRun(t, nil, "show", "--spec", specDir43, "--records", recordsDir43, "offsetcommitvalue")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, w := range []string{"OffsetCommitValue\n", "Topic              __consumer_offsets", "OffsetCommitValue v4 as a record value, 24 bytes",
		"+-- version ", "+-- OffsetCommitValue ", "kafka record schema (.json)"} {
		if !strings.Contains(out, w) {
			t.Errorf("page lacks %q:\n%s", w, out)
		}
	}
	code, out, errs = mainRun(t, map[string]string{"MANIFESTER_RECORDS": recordsDir43}, "show", "--spec", specDir43, "--version", "0", "--format", "json", "TopicRecord")
	if code != cli.ExitOK {
		t.Fatalf("json: exit %d: %s", code, errs)
	}
	var p struct {
		Module, Name, Part, Hex string
		Version                 int
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.Module != "metadata" || p.Name != "TopicRecord" || p.Part != "record value" || !strings.HasPrefix(p.Hex, "010200") {
		t.Errorf("json page %+v (%v)", p, err)
	}
	// Without the record schemas the name is unknown, with a hint; an
	// invalid version is a usage error.
	code, _, errs = mainRun(t, nil, "show", "--spec", specDir43, "OffsetCommitValue")
	if code != cli.ExitUsage || !strings.Contains(errs, "--records DIR") {
		t.Errorf("without --records: exit %d: %s", code, errs)
	}
	code, _, errs = mainRun(t, nil, "show", "--spec", specDir43, "--records", recordsDir43, "--version", "9", "OffsetCommitValue")
	if code != cli.ExitUsage || !strings.Contains(errs, "valid versions are 0-4") {
		t.Errorf("bad version: exit %d: %s", code, errs)
	}
	code, _, errs = mainRun(t, nil, "show", "--spec", specDir43, "--records", t.TempDir(), "OffsetCommitValue")
	if code != cli.ExitUsage || !strings.Contains(errs, "no record schemas found") {
		t.Errorf("empty --records: exit %d: %s", code, errs)
	}
}

func TestDecodeInternalRecords(t *testing.T) {
	code, out, errs := mainRun(t, nil, "decode", "--spec", specDir43, "--records", recordsDir43, "--hex", offsetsProduce("__consumer_offsets"))
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, w := range []string{"OffsetCommitKey", `group `, `"billing"`, "partition", "= 7", "OffsetCommitValue", "= 1234"} {
		if !strings.Contains(out, w) {
			t.Errorf("decoded tree lacks %q", w)
		}
	}
	// Another topic: bytes, unless --records-topic says otherwise.
	code, out, _ = mainRun(t, nil, "decode", "--spec", specDir43, "--records", recordsDir43, "--hex", offsetsProduce("orders"))
	if code != cli.ExitOK || strings.Contains(out, "OffsetCommitKey") {
		t.Errorf("orders: exit %d, decoded as OffsetCommitKey", code)
	}
	code, out, errs = mainRun(t, nil, "decode", "--spec", specDir43, "--records", recordsDir43, "--records-topic", "__consumer_offsets", "--hex", offsetsProduce("orders"))
	if code != cli.ExitOK || !strings.Contains(out, "OffsetCommitValue") {
		t.Errorf("--records-topic: exit %d: %s", code, errs)
	}
	for _, args := range [][]string{
		{"--records-topic", "__consumer_offsets"},                                          // no schemas
		{"--records", recordsDir43, "--records-topic", "orders"},                           // not internal
		{"--records", recordsDir43 + "/metadata", "--records-topic", "__consumer_offsets"}, // module missing
	} {
		code, _, errs := mainRun(t, nil, append(append([]string{"decode", "--spec", specDir43}, args...), "--hex", offsetsProduce("orders"))...)
		if code != cli.ExitUsage || !strings.Contains(errs, "--records") {
			t.Errorf("%v: exit %d: %s", args, code, errs)
		}
	}
}

func TestBuildInternalRecordsPages(t *testing.T) {
	out := t.TempDir()
	// A one-API spec set keeps the build small; the record pages are all there.
	// (build writes links relative to each page.)
	const oneAPI = "../../testdata/specs/headerv3"
	code, _, errs := mainRun(t, nil, "build", "--spec", oneAPI, "--records", recordsDir43, "--out", out)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	index, err := os.ReadFile(filepath.Join(out, "records", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"<h1>Internal records</h1>", `href="group-coordinator/OffsetCommitKey/"`, `href="metadata/TopicRecord/"`, "__share_group_state"} {
		if !strings.Contains(string(index), w) {
			t.Errorf("records index lacks %q", w)
		}
	}
	home, _ := os.ReadFile(filepath.Join(out, "index.html"))
	if nav, _, _ := strings.Cut(string(home), "</nav>"); !strings.Contains(nav, `<nav aria-label="Site"><a href="./">All Kafka APIs</a> <a href="decode/">Decode</a> <a href="records/">Internal records</a>`) {
		t.Errorf("no Internal records link beside All Kafka APIs: %s", nav)
	}
	for _, p := range []string{"records/group-coordinator/OffsetCommitValue/v0/index.html", "records/group-coordinator/OffsetCommitValue/v4/index.html",
		"records/group-coordinator/OffsetCommitValue/index.html", "records/metadata/TopicRecord/v0.json", "records/transaction-coordinator/TransactionLogValue/v1/index.html"} {
		if _, err := os.Stat(filepath.Join(out, p)); err != nil {
			t.Errorf("missing %s", p)
		}
	}
	// Without --records there are no record pages and no link.
	out2 := t.TempDir()
	if code, _, errs := mainRun(t, nil, "build", "--spec", oneAPI, "--out", out2); code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	home, _ = os.ReadFile(filepath.Join(out2, "index.html"))
	if _, err := os.Stat(filepath.Join(out2, "records")); err == nil || strings.Contains(string(home), `href="records/"`) {
		t.Errorf("records pages without --records")
	}
}

// TestCheckoutRecords: a Kafka source checkout given as --spec brings its
// modules' record schemas without --records.
func TestCheckoutRecords(t *testing.T) {
	root := t.TempDir()
	link := func(target, at string) {
		abs, err := filepath.Abs(target)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, at)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(root, at)); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	link(specDir43, "clients/src/main/resources/common/message")
	link(recordsDir43+"/group-coordinator", "group-coordinator/src/main/resources/common/message")
	link(recordsDir43+"/metadata", "metadata/src/main/resources/common/metadata")
	code, out, errs := mainRun(t, nil, "show", "--spec", root, "GroupMetadataKey")
	if code != cli.ExitOK || !strings.Contains(out, "GroupMetadataKey v0 as a record key") {
		t.Fatalf("exit %d: %s%s", code, errs, out)
	}
	code, out, errs = mainRun(t, nil, "decode", "--spec", root, "--hex", offsetsProduce("__consumer_offsets"))
	if code != cli.ExitOK || !strings.Contains(out, "OffsetCommitValue") {
		t.Errorf("decode with the checkout's record schemas: exit %d: %s", code, errs)
	}
}

// TestSpecWithRecords: record schemas that the --spec location holds (here
// a message folder and a folder of module folders joined by a comma) are
// used without --records.
func TestSpecWithRecords(t *testing.T) {
	code, out, errs := mainRun(t, nil, "show", "--spec", specDir43+","+recordsDir43, "ShareSnapshotValue")
	if code != cli.ExitOK || !strings.Contains(out, "Topic              __share_group_state") {
		t.Fatalf("exit %d: %s%s", code, errs, out)
	}
}

// TestProxyRecordsFlag: the proxy takes --records too (its frames decode
// with the same codec); a folder without record schemas is a usage error
// before anything listens.
func TestProxyRecordsFlag(t *testing.T) {
	code, _, errs := mainRun(t, nil, "proxy", "--spec", specDir43, "--records", t.TempDir(), "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1")
	if code != cli.ExitUsage || !strings.Contains(errs, "no record schemas found") {
		t.Errorf("exit %d: %s", code, errs)
	}
}
