package cli

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/stats"
)

// wantTrafficStats is what the generated traffic holds, counted from the
// frames as written: sizes summed, requests and responses per API version.
// Latencies, percentiles and errors are as trafficConns designs them.
func wantTrafficStats(conns []trafficConn) *stats.Summary {
	type key struct{ k, v int16 }
	figs := map[key]*stats.APIStats{}
	names := map[int16]string{0: "Produce", 1: "Fetch", 3: "Metadata", 12: "Heartbeat"}
	s := &stats.Summary{}
	for i, c := range conns {
		cs := stats.ConnStats{ID: i + 1, Client: c.client.String(), Server: c.server.String()}
		for _, x := range c.xs {
			k := key{int16(binary.BigEndian.Uint16(x.req[4:])), int16(binary.BigEndian.Uint16(x.req[6:]))}
			if cs.ClientID == nil {
				n := int(binary.BigEndian.Uint16(x.req[12:]))
				id := string(x.req[14 : 14+n])
				cs.ClientID = &id
			}
			a := figs[k]
			if a == nil {
				a = &stats.APIStats{APIKey: k.k, Name: names[k.k], Version: k.v, Errors: map[string]int64{}}
				figs[k] = a
			}
			a.Requests++
			a.Bytes.Request += int64(len(x.req))
			cs.Frames++
			if x.resp != nil {
				a.Responses++
				a.Bytes.Response += int64(len(x.resp))
				cs.Frames++
			}
		}
		s.Connections = append(s.Connections, cs)
	}
	for _, k := range []key{{0, 9}, {1, 13}, {3, 12}, {12, 4}} {
		a := figs[k]
		a.Unanswered = a.Requests - a.Responses
		s.APIs = append(s.APIs, *a)
	}
	// By design: Produce answered after 3000µs (one of two: acks=0);
	// Fetch after 500, 2000, 4000µs, two partitions NOT_LEADER_OR_FOLLOWER (6);
	// Metadata after 1000µs; Heartbeat i after i×100µs, i = 1..100, every
	// 10th REBALANCE_IN_PROGRESS. Nearest rank: p50 of 3 is the 2nd, p99
	// the 3rd; of 100, the 50th and the 99th.
	s.APIs[0].Latency = &stats.Latency{P50: 3000, P99: 3000, Max: 3000}
	s.APIs[1].Latency = &stats.Latency{P50: 2000, P99: 4000, Max: 4000}
	s.APIs[1].Errors["NOT_LEADER_OR_FOLLOWER"] = 2
	s.APIs[2].Latency = &stats.Latency{P50: 1000, P99: 1000, Max: 1000}
	s.APIs[3].Latency = &stats.Latency{P50: 5000, P99: 9900, Max: 10000}
	s.APIs[3].Errors["REBALANCE_IN_PROGRESS"] = 10
	return s
}

func TestStatsCapture(t *testing.T) {
	conns := trafficConns()
	path := writeTraffic(t, conns)
	code, out, errOut := decRun(t, nil, "stats", "--spec", decSpec, "--pcap", path, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got stats.Summary
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantTrafficStats(conns), &got); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	if !strings.Contains(errOut, "229 packets, 3 connections, 106 requests, 105 responses") {
		t.Errorf("stderr: %s", errOut)
	}
	// The JSON keys as published.
	if !strings.HasPrefix(out, `{"apis":[{"api_key":0,"name":"Produce","version":9,"requests":2,"responses":1,"unanswered":1,"bytes":{"request":`) ||
		!strings.Contains(out, `"latency_us":{"p50":5000,"p99":9900,"max":10000},"errors":{"REBALANCE_IN_PROGRESS":10}}],"connections":[{"id":1,"client":"10.0.0.1:51000","server":"10.0.0.2:9092","client_id":"billing","frames":8}`) {
		t.Errorf("JSON shape: %s", out)
	}

	// Standard input gives the same.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	code, out2, errOut := decRun(t, data, "stats", "--spec", decSpec, "--pcap", "-", "--format", "json")
	if code != 0 || out2 != out {
		t.Errorf("--pcap -: exit %d %s\n%s", code, errOut, out2)
	}

	// decode --pcap --format json, then stats on its lines: the same.
	code, lines, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json")
	if code != 0 {
		t.Fatalf("decode: exit %d: %s", code, errOut)
	}
	jl := filepath.Join(t.TempDir(), "frames.jsonl")
	if err := os.WriteFile(jl, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out3, errOut := decRun(t, nil, "stats", "--format", "json", jl)
	if code != 0 || out3 != out {
		t.Errorf("FILE.jsonl: exit %d %s\n%s\nwant\n%s", code, errOut, out3, out)
	}
	code, out4, _ := decRun(t, []byte(lines), "stats", "--format", "json", "-")
	if code != 0 || out4 != out {
		t.Errorf("jsonl on stdin: exit %d\n%s", code, out4)
	}

	// Text: aligned tables.
	code, txt, errOut := decRun(t, nil, "stats", "--spec", decSpec, "--pcap", path)
	if code != 0 {
		t.Fatalf("text: exit %d: %s", code, errOut)
	}
	rows := strings.Split(txt, "\n")
	if !strings.HasPrefix(rows[0], "API            VERSION  REQUESTS  RESPONSES  UNANSWERED  REQ BYTES  RESP BYTES  P50 µs  P99 µs  MAX µs  ERRORS") ||
		!strings.HasPrefix(rows[4], "Heartbeat(12)       v4       100        100           0") ||
		!strings.HasSuffix(rows[4], "5000    9900   10000  REBALANCE_IN_PROGRESS×10") ||
		!strings.Contains(txt, "\nCONN  CLIENT          SERVER         CLIENT ID    FRAMES\n   1  10.0.0.1:51000  10.0.0.2:9092  \"billing\"         8\n") {
		t.Errorf("text:\n%s", txt)
	}

	// HTML: one histogram per API version.
	code, page, _ := decRun(t, nil, "stats", "--spec", decSpec, "--pcap", path, "--format", "html")
	if code != 0 || strings.Count(page, "<svg") != 4 || strings.Contains(page, "<script") {
		t.Errorf("html: exit %d, %d charts", code, strings.Count(page, "<svg"))
	}
}

func TestStatsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"stats"},
		{"stats", "--pcap", "x", "y.jsonl"},
		{"stats", "a", "b"},
		{"stats", "--format", "xml", "a"},
		{"stats", "--port", "9092", "a.jsonl"},
	} {
		if code, _, _ := decRun(t, nil, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte("{\"kind\":\"request\",\"api_key\":1,\"version\":1,\"size\":3}\nnope\n"), 0o644)
	if code, _, errOut := decRun(t, nil, "stats", bad); code != ExitFailure || !strings.Contains(errOut, "line 2: not a JSON object") {
		t.Errorf("bad jsonl: exit %d: %s", code, errOut)
	}
}

// TestStatsCaptureLosses: what the capture reader skipped is said.
func TestStatsCaptureLosses(t *testing.T) {
	xs := pcapExchanges()
	path := writePcap(t, xs, capture.PCAP, false, 5) // mid-connection, first 5 bytes lost
	code, _, errOut := decRun(t, nil, "stats", "--spec", decSpec, "--pcap", path, "--format", "json")
	if code != 0 || !strings.Contains(errOut, "stream bytes skipped") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// TestStatsCaptureCutFrameSize: a request cut by a gap counts the bytes
// its size prefix gives, as the JSON line decode --pcap writes for it
// (its "size") does, so that stats gives the same figures for a capture
// and for decode's lines of it.
func TestStatsCaptureCutFrameSize(t *testing.T) {
	xs := pcapExchanges()
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.PCAP)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Conn(pcapClient, pcapServer)
	at := pcapT0
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Open(at))
	for i, x := range xs {
		if i == 1 { // the second request loses all but its first 20 bytes
			must(c.Write(capture.ClientToServer, at, x.req[:20]))
			c.Skip(capture.ClientToServer, len(x.req)-20)
		} else {
			must(c.Write(capture.ClientToServer, at, x.req))
		}
		must(c.Write(capture.ServerToClient, at.Add(time.Millisecond), x.resp))
		at = at.Add(10 * time.Millisecond)
	}
	must(c.Close(at))
	must(w.Flush())
	dir := t.TempDir()
	path := filepath.Join(dir, "cut.pcap")
	must(os.WriteFile(path, buf.Bytes(), 0o644))
	code, fromPcap, errOut := decRun(t, nil, "stats", "--spec", decSpec, "--pcap", path, "--format", "json")
	if code != 0 || !strings.Contains(errOut, "1 frame cut") {
		t.Fatalf("stats --pcap: exit %d: %s", code, errOut)
	}
	code, lines, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json")
	if code != 0 {
		t.Fatalf("decode --pcap: exit %d: %s", code, errOut)
	}
	jsonl := filepath.Join(dir, "cut.jsonl")
	must(os.WriteFile(jsonl, []byte(lines), 0o644))
	code, fromLines, errOut := decRun(t, nil, "stats", "--spec", decSpec, "--format", "json", jsonl)
	if code != 0 {
		t.Fatalf("stats of the lines: exit %d: %s", code, errOut)
	}
	var a, b stats.Summary
	must(json.Unmarshal([]byte(fromPcap), &a))
	must(json.Unmarshal([]byte(fromLines), &b))
	if d := cmp.Diff(b.APIs, a.APIs); d != "" {
		t.Errorf("stats --pcap differs from stats of decode --pcap's lines (-lines +pcap):\n%s", d)
	}
	var want int64
	for _, x := range xs {
		want += int64(len(x.req))
	}
	var got int64
	for _, s := range a.APIs {
		got += s.Bytes.Request
	}
	if got != want {
		t.Errorf("request bytes %d, want %d (the cut request's size prefix counted)", got, want)
	}
}
