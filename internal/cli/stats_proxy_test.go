package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestStatsProxyLog: the JSON-lines log of `manifester proxy` (kgo through
// the proxy to kfake) read by `stats`: every frame line counted under its
// API, every response paired, the event lines skipped.
func TestStatsProxyLog(t *testing.T) {
	c, vs := specCluster(t)
	ctx, stop := context.WithCancel(context.Background())
	logPath := filepath.Join(t.TempDir(), "proxy.jsonl")
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	env := &Env{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Getenv: func(string) string { return "" }, Stop: ctx}
	done := make(chan int)
	go func() {
		done <- Main(env, []string{"proxy", "--spec", decSpec, "--listen", "127.0.0.1:0", "--upstream", c.ListenAddrs()[0], "--log", logPath})
	}()
	var addr string
	re := regexp.MustCompile(`listening on (\S+),`)
	for i := 0; i < 500 && addr == ""; i++ {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	if addr == "" {
		stop()
		t.Fatalf("proxy did not start: %s", stderr.String())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.MaxVersions(vs), kgo.DefaultProduceTopic("t"), kgo.ClientID("stats-test"),
		kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := 0; i < 3; i++ {
		if err := cl.ProduceSync(tctx, &kgo.Record{Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	for n := 0; n < 3 && tctx.Err() == nil; {
		n += cl.PollFetches(tctx).NumRecords()
	}
	cl.Close()
	stop()
	if code := <-done; code != 0 {
		t.Fatalf("proxy exited %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int{} // api: requests, responses
	events := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l struct {
			Event string `json:"event"`
			Kind  string `json:"kind"`
			API   string `json:"api"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.Kind == "" {
			events++
			continue
		}
		n := want[l.API]
		if l.Kind == "request" {
			n[0]++
		} else {
			n[1]++
		}
		want[l.API] = n
	}
	code, out, errOut := decRun(t, nil, "stats", "--format", "json", logPath)
	if code != 0 {
		t.Fatalf("stats: exit %d: %s", code, errOut)
	}
	var s struct {
		APIs []struct {
			Name       string `json:"name"`
			Requests   int    `json:"requests"`
			Responses  int    `json:"responses"`
			Unanswered int    `json:"unanswered"`
			Latency    *struct {
				Max int64 `json:"max"`
			} `json:"latency_us"`
		} `json:"apis"`
		Connections []struct {
			ClientID *string `json:"client_id"`
		} `json:"connections"`
		Unpaired int `json:"unpaired_responses"`
	}
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	got := map[string][2]int{}
	for _, a := range s.APIs {
		n := got[a.Name]
		got[a.Name] = [2]int{n[0] + a.Requests, n[1] + a.Responses}
		if a.Requests != a.Responses+a.Unanswered || (a.Responses > 0) != (a.Latency != nil) {
			t.Errorf("%s: %+v", a.Name, a)
		}
	}
	if len(got) != len(want) || s.Unpaired != 0 || want["Produce"][0] < 3 || len(s.Connections) == 0 {
		t.Errorf("stats %v (unpaired %d), log %v", got, s.Unpaired, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: stats %v, log %v", k, got[k], n)
		}
	}
	for _, c := range s.Connections {
		if c.ClientID == nil || *c.ClientID != "stats-test" {
			t.Errorf("connection client id %v", c.ClientID)
		}
	}
	if !strings.Contains(errOut, " event lines") || strings.Contains(errOut, " 0 event lines") && events > 0 {
		t.Errorf("stderr: %s (%d events)", errOut, events)
	}

	// decode LOG --filter: responses match with their request's client id
	// (response lines carry none), through the log's conn numbers.
	responses, produces := 0, 0
	for k, n := range want {
		responses += n[1]
		if k == "Produce" {
			produces = n[0] + n[1]
		}
	}
	for expr, n := range map[string]int{
		"client_id == stats-test and kind == response": responses,
		"api == Produce": produces,
		"api == Produce and kind == request and topic == t": want["Produce"][0],
	} {
		code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--format", "json", "--filter", expr, logPath)
		if code != 0 {
			t.Fatalf("decode --filter %s: exit %d: %s", expr, code, errOut)
		}
		if got := strings.Count(out, "\n"); got != n || strings.Contains(out, `"event":"open"`) {
			t.Errorf("decode --filter %q: %d lines, want %d", expr, got, n)
		}
		// stats LOG --filter counts the same frames.
		code, _, errOut = decRun(t, nil, "stats", "--spec", decSpec, "--format", "json", "--filter", expr, logPath)
		if code != 0 || !strings.Contains(errOut, fmt.Sprintf("--filter %q: %d of ", expr, n)) {
			t.Errorf("stats --filter %q: exit %d, want %d frames counted: %s", expr, code, n, errOut)
		}
	}
}
