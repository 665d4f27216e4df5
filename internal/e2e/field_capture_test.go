package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/frames"
	"github.com/manifester/manifester/internal/tlstest"
)

// TestCaptureKgoNewestThroughKfake: franz-go's kgo at its own newest
// versions (it opens every connection with an ApiVersions v5 probe,
// newer than Kafka 4.3) against kfake capped at Kafka 4.3's versions,
// captured on the wire and decoded with the 4.3 spec: every frame
// decodes (the probes as warnings, the broker's v0 answers as v0), every
// connection is there, and nothing is skipped, cut or unpaired. (A
// request the client leaves unanswered as it closes, a fetch waiting for
// data, is not a loss.)
func TestCaptureKgoNewestThroughKfake(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.MaxVersions(specVersions(t)), kfake.SeedTopics(3, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	d := &tlstest.Dialer{} // records each connection kgo opens
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()[0]), kgo.Dialer(d.Dial), kgo.ClientID("Zürich-日本-consumer"),
		kgo.DefaultProduceTopic("orders"), kgo.ProducerBatchCompression(kgo.ZstdCompression()),
		kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("g"), kgo.DisableAutoCommit(), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ct := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "audit", 2, 1
	ct.Topics = append(ct.Topics, rt)
	if _, err := ct.RequestWith(ctx, cl); err != nil {
		t.Fatalf("create topics: %v", err)
	}
	for i := 0; i < 10; i++ {
		r := &kgo.Record{Key: []byte("k" + strconv.Itoa(i)), Value: []byte(strings.Repeat("order ", 10))}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for got := 0; got < 10; {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		t.Fatal(err)
	}
	cl.Close()

	recs := d.Recordings()
	frames := 0
	for i, r := range recs {
		var n int
		recs[i], n = wholeFrames(t, r)
		frames += n
	}
	conns := len(recs)
	var pcap bytes.Buffer
	if err := tlstest.WritePcap(&pcap, capture.PCAP, recs...); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kgo.pcap")
	if err := os.WriteFile(path, pcap.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, ports := range [][]string{nil, {"--port", strconv.Itoa(int(recs[0].Server.Port()))}} {
		out, errOut, code := decodePcap(t, path, append([]string{"--format", "json", "--roundtrip"}, ports...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", ports, code, errOut)
		}
		summary := strconv.Itoa(conns) + " connections"
		for _, bad := range []string{"without their request", "gaps", "cut", "skipped", "ignored", "did not decode", "suspect", "failed the framing"} {
			if strings.Contains(errOut, bad) {
				t.Errorf("%v: the summary says %q: %s", ports, bad, errOut)
			}
		}
		if !strings.Contains(errOut, summary) {
			t.Errorf("%v: want %s: %s", ports, summary, errOut)
		}
		var n, probes, answers int
		sc := bufio.NewScanner(strings.NewReader(out))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			n++
			var l struct {
				Kind      string  `json:"kind"`
				APIKey    *int16  `json:"api_key"`
				Version   int16   `json:"version"`
				ClientID  *string `json:"client_id"`
				Error     string  `json:"error"`
				Warning   string  `json:"warning"`
				Note      string  `json:"note"`
				Roundtrip *bool   `json:"roundtrip"`
			}
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatal(err)
			}
			switch {
			case l.Error != "":
				t.Errorf("%v: %.400s", ports, sc.Text())
			case l.Warning != "":
				// Only kgo's ApiVersions probe, newer than the spec.
				if l.Kind != "request" || l.APIKey == nil || *l.APIKey != 18 || l.Version <= 4 || !strings.Contains(l.Warning, "newer than this spec") {
					t.Errorf("%v: unexpected warning: %.400s", ports, sc.Text())
				}
				probes++
			case l.Roundtrip == nil || !*l.Roundtrip:
				t.Errorf("%v: does not round-trip: %.400s", ports, sc.Text())
			case l.Note != "":
				answers++
			}
			if l.Kind == "request" && (l.ClientID == nil || *l.ClientID != "Zürich-日本-consumer") {
				t.Errorf("%v: client id %v", ports, l.ClientID)
			}
		}
		if n != frames {
			t.Errorf("%v: %d frames decoded, the streams hold %d", ports, n, frames)
		}
		// kgo probes on its first connections and then remembers the
		// broker's versions.
		if probes == 0 || answers != probes {
			t.Errorf("%v: %d probes and %d v0 answers on %d connections", ports, probes, answers, conns)
		}
		if ports == nil {
			// Wireshark's Kafka dissector finds the same frames.
			checkTsharkKafka(t, requireTool(t, "tshark"), path, parseLines(t, out))
		}
	}
}

// wholeFrames returns r with each direction cut after its last whole
// Kafka frame (split by size prefixes alone), and the number of whole
// frames: a response the client was reading as it closed would read as
// cut.
func wholeFrames(t *testing.T, r *tlstest.Recording) (*tlstest.Recording, int) {
	t.Helper()
	var left [2]int // bytes of whole frames, per direction, still to write
	n := 0
	for _, dir := range []capture.Dir{capture.ClientToServer, capture.ServerToClient} {
		for f := range frames.All(r.Stream(dir)) {
			if f.Err != nil {
				t.Logf("%s -> %s %v: %d bytes after the last whole frame left out", r.Client, r.Server, dir, len(f.Bytes))
				break
			}
			n++
			left[dir] = f.Offset + len(f.Bytes)
		}
	}
	out := *r
	out.Chunks = nil
	for _, c := range r.Chunks {
		if k := min(len(c.Data), left[c.Dir]); k > 0 {
			c.Data = c.Data[:k]
			left[c.Dir] -= k
			out.Chunks = append(out.Chunks, c)
		}
	}
	return &out, n
}
