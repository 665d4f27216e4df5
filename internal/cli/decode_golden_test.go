package cli

import (
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/testframes"
	"github.com/manifester/manifester/internal/testshared"
)

// updateDecode rewrites the decode goldens: go test ./internal/cli -run TestDecodeGolden -update
var updateDecode = flag.Bool("update", false, "rewrite testdata/golden/decode from the current output")

// decodeGoldenDir sits beside the page goldens.
const decodeGoldenDir = "../../testdata/golden/decode"

// decodeGoldenFrames are frames built by franz-go's kmsg (an independent
// encoder) with values that are not the smallest instance's.
func decodeGoldenFrames() []struct {
	name string
	hex  string
	args []string
} {
	produce, _ := decProduce(records.AppendBatch(nil, &records.Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, NumRecords: 2,
		Records: decRecord(decRecord(nil, "k1", "first"), "k2", "second")}))

	md := kmsg.NewPtrMetadataResponse()
	md.Version = 12
	b := kmsg.NewMetadataResponseBroker()
	b.NodeID, b.Host, b.Port = 1, "broker-1", 9092
	md.Brokers = append(md.Brokers, b)
	tp := kmsg.NewMetadataResponseTopic()
	name := "orders"
	tp.Topic = &name
	p := kmsg.NewMetadataResponseTopicPartition()
	p.Partition, p.Leader, p.Replicas, p.ISR = 0, 1, []int32{1}, []int32{1}
	tp.Partitions = append(tp.Partitions, p)
	md.Topics = append(md.Topics, tp)

	av := kmsg.NewPtrApiVersionsResponse()
	av.Version = 3
	for _, k := range []int16{0, 1, 18} {
		k2 := kmsg.NewApiVersionsResponseApiKey()
		k2.ApiKey, k2.MaxVersion = k, 9
		av.ApiKeys = append(av.ApiKeys, k2)
	}
	return []struct {
		name string
		hex  string
		args []string
	}{
		{"CreateTopics-v7-request", hex.EncodeToString(decCreateTopics(7)), nil},
		{"Produce-v9-request", hex.EncodeToString(produce), nil},
		{"Metadata-v12-response", hex.EncodeToString(testframes.Response(md, 5)), []string{"--kind", "response", "--api", "3", "--version", "12"}},
		{"ApiVersions-v3-response", hex.EncodeToString(testframes.Response(av, 9)), []string{"--kind", "response", "--api", "18", "--version", "3"}},
	}
}

// TestDecodeGolden compares `manifester decode` text and JSON output for a
// few frames with testdata/golden/decode. The specs are a copy of 4.3
// whose abouts are stand-ins (testshared.ScrubbedSpec): the goldens hold
// Kafka's structure, types, values, offsets and sizes, and none of its
// sentences.
func TestDecodeGolden(t *testing.T) {
	specDir := testshared.ScrubbedSpec(t, "4.3")
	for _, f := range decodeGoldenFrames() {
		for _, format := range []string{"text", "json"} {
			args := append([]string{"decode", "--spec", specDir, "--format", format}, f.args...)
			code, out, errs := decRun(t, nil, append(args, "--hex", f.hex)...)
			if code != ExitOK {
				t.Fatalf("%s %s: exit %d: %s", f.name, format, code, errs)
			}
			out = strings.ReplaceAll(out, specDir, "SPEC") // in case a path is printed
			if k := testshared.ContainsKafkaText(t, []byte(out)); k != "" {
				t.Errorf("%s %s output holds Kafka text %q", f.name, format, k)
			}
			ext := map[string]string{"text": ".txt", "json": ".json"}[format]
			path := filepath.Join(decodeGoldenDir, f.name+ext)
			if *updateDecode {
				if err := os.MkdirAll(decodeGoldenDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/cli -run TestDecodeGolden -update)", err)
			}
			if d := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(out, "\n")); d != "" {
				t.Errorf("%s is stale (-want +got):\n%s", path, d)
			}
		}
	}
	// Every golden in the directory is one of the frames above.
	if !*updateDecode {
		names := map[string]bool{}
		for _, f := range decodeGoldenFrames() {
			names[f.name+".txt"], names[f.name+".json"] = true, true
		}
		entries, _ := os.ReadDir(decodeGoldenDir)
		for _, e := range entries {
			if !names[e.Name()] {
				t.Errorf("stale decode golden %s", e.Name())
			}
		}
		if len(entries) != len(names) {
			t.Errorf("%d decode goldens, want %d", len(entries), len(names))
		}
	}
}
