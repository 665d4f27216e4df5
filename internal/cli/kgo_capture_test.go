package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/testshared"
	"github.com/manifester/manifester/internal/tlstest"
)

// TestKgoCaptureTopicsFiltersStats: franz-go's kgo producing text and
// binary records to kfake and consuming them (Fetch at kgo's newest
// version, which names topics by id only), captured as it passed. Decoded
// with the trunk spec (kgo's ApiVersions v5 probe is newer than 4.3):
// every Fetch request's topic id carries the name kfake's Metadata
// responses gave it, record values read as text, --filter selects by
// topic, and stats counts what decode shows.
func TestKgoCaptureTopicsFiltersStats(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	d := &tlstest.Dialer{} // records each connection kgo opens
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()[0]), kgo.DefaultProduceTopic("orders"),
		kgo.ConsumeTopics("orders"), kgo.FetchMaxWait(100*time.Millisecond), kgo.ClientID("kgo-Zürich"),
		kgo.Dialer(d.Dial))
	if err != nil {
		t.Fatal(err)
	}
	values := []string{"Zürich order 1", "line\tbreak\n", string([]byte{0, 1, 2, 0xff})}
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte("user-1"), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for got := 0; got < len(values); {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	cl.Close()
	var pcap bytes.Buffer
	if err := tlstest.WritePcap(&pcap, capture.PCAPNG, d.Recordings()...); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kgo.pcapng")
	if err := os.WriteFile(path, pcap.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := testshared.Spec(t, "trunk")

	code, out, errOut := decRun(t, nil, "decode", "--spec", spec, "--pcap", path, "--format", "json")
	if code != 0 {
		t.Fatalf("decode: exit %d: %s", code, errOut)
	}
	type line struct {
		Kind    string  `json:"kind"`
		APIKey  int16   `json:"api_key"`
		Version int16   `json:"version"`
		Error   *string `json:"error"`
		raw     string
	}
	var lines []line
	perAPI := map[int16][2]int{} // requests, responses
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var x line
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatal(err)
		}
		if x.Error != nil {
			t.Errorf("frame did not decode: %.300s", l)
		}
		x.raw = l
		lines = append(lines, x)
		n := perAPI[x.APIKey]
		if x.Kind == "request" {
			n[0]++
		} else {
			n[1]++
		}
		perAPI[x.APIKey] = n
	}
	fetches, named := 0, 0
	for _, x := range lines {
		if x.APIKey == 1 && x.Kind == "request" {
			if x.Version < 13 {
				t.Fatalf("kgo fetched at v%d; the test wants topic ids (v13+)", x.Version)
			}
			if !strings.Contains(x.raw, `"name":"TopicId"`) {
				continue // a fetch session's closing request names no topic
			}
			fetches++
			if strings.Contains(x.raw, `(topic \"orders\")`) {
				named++
			}
		}
	}
	if fetches == 0 || named != fetches {
		t.Errorf("%d of %d Fetch requests name their topic id", named, fetches)
	}
	for _, want := range []string{`"value":"Zürich order 1","hex":"5ac3bc72696368206f726465722031"`, `"value":"line\tbreak\n","hex"`, `"value":"user-1","hex"`} {
		if !strings.Contains(out, want) {
			t.Errorf("no record node with %s", want)
		}
	}
	if !strings.Contains(out, `"value":"000102ff","offset"`) {
		t.Error("the binary value is not given as hex alone")
	}

	// --filter: the fetches of the topic, requests and their responses.
	code, fout, errOut := decRun(t, nil, "decode", "--spec", spec, "--pcap", path, "--format", "json", "--filter", "api == Fetch and topic == orders")
	if code != 0 {
		t.Fatalf("filter: exit %d: %s", code, errOut)
	}
	if n := strings.Count(fout, "\n"); n < fetches || strings.Count(fout, `"api_key":1,`) != n {
		t.Errorf("filter shows %d frames for %d fetches", n, fetches)
	}
	code, cout, _ := decRun(t, nil, "decode", "--spec", spec, "--pcap", path, "--format", "json", "--filter", `client_id == "kgo-Zürich" and kind == response`)
	if code != 0 || strings.Count(cout, "\n") != len(lines)-perAPIRequests(perAPI) {
		t.Errorf("responses by their requests' client id: %d lines, want %d", strings.Count(cout, "\n"), len(lines)-perAPIRequests(perAPI))
	}

	// stats counts what decode showed.
	code, sout, errOut := decRun(t, nil, "stats", "--spec", spec, "--pcap", path, "--format", "json")
	if code != 0 {
		t.Fatalf("stats: exit %d: %s", code, errOut)
	}
	var s struct {
		APIs []struct {
			APIKey     int16 `json:"api_key"`
			Requests   int   `json:"requests"`
			Responses  int   `json:"responses"`
			Unanswered int   `json:"unanswered"`
		} `json:"apis"`
		Connections []struct {
			ClientID string `json:"client_id"`
			Frames   int    `json:"frames"`
		} `json:"connections"`
		Unpaired int `json:"unpaired_responses"`
	}
	if err := json.Unmarshal([]byte(sout), &s); err != nil {
		t.Fatal(err)
	}
	got := map[int16][2]int{}
	for _, a := range s.APIs {
		n := got[a.APIKey]
		got[a.APIKey] = [2]int{n[0] + a.Requests, n[1] + a.Responses}
		if a.Requests != a.Responses+a.Unanswered {
			t.Errorf("api %d: %d requests, %d responses, %d unanswered", a.APIKey, a.Requests, a.Responses, a.Unanswered)
		}
	}
	frames := 0
	for _, c := range s.Connections {
		frames += c.Frames
		if c.ClientID != "kgo-Zürich" {
			t.Errorf("connection client id %q", c.ClientID)
		}
	}
	if len(got) != len(perAPI) || frames != len(lines) || s.Unpaired != 0 {
		t.Errorf("stats %v (%d frames, %d unpaired), decode %v (%d frames)", got, frames, s.Unpaired, perAPI, len(lines))
	}
	for k, n := range perAPI {
		if got[k] != n {
			t.Errorf("api %d: stats %v, decode %v", k, got[k], n)
		}
	}
}

func perAPIRequests(m map[int16][2]int) int {
	n := 0
	for _, v := range m {
		n += v[0]
	}
	return n
}
