package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/stats"
)

// TestStatsFilter: stats --filter counts what decode --filter shows. For
// each expression, the figures of stats --pcap --filter, and of stats
// --filter on decode's JSON lines of the whole capture, equal those of
// plain stats on the lines decode --pcap --filter printed; the summary
// line on stderr counts them. The first case is checked by hand too.
func TestStatsFilter(t *testing.T) {
	path := writeTraffic(t, trafficConns())
	dir := t.TempDir()
	code, all, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json")
	if code != 0 {
		t.Fatalf("decode: exit %d: %s", code, errOut)
	}
	allPath := filepath.Join(dir, "all.jsonl")
	if err := os.WriteFile(allPath, []byte(all), 0o644); err != nil {
		t.Fatal(err)
	}
	const frames = 211 // 106 requests, 105 responses
	for i, tc := range []struct {
		expr string
		min  int // frames counted, at least (the cases are not empty)
	}{
		{`client_id == billing`, 8},
		{`topic == payments`, 3},
		{`topic == orders`, 4},
		{`api == Heartbeat and error != NONE`, 10},
		{`kind == response and latency_us >= 2000`, 5},
		{`api == Metadata`, 2},
		{`api == ApiVersions`, 0},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			code, shown, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json", "--filter", tc.expr)
			if code != 0 {
				t.Fatalf("decode --filter: exit %d: %s", code, errOut)
			}
			n := strings.Count(shown, "\n")
			if n < tc.min || tc.min == 0 && n != 0 {
				t.Fatalf("decode --filter showed %d frames, want at least %d (none for 0)", n, tc.min)
			}
			shownPath := filepath.Join(dir, fmt.Sprintf("shown%d.jsonl", i))
			if err := os.WriteFile(shownPath, []byte(shown), 0o644); err != nil {
				t.Fatal(err)
			}
			code, want, errOut := decRun(t, nil, "stats", "--format", "json", shownPath)
			if code != 0 {
				t.Fatalf("stats on decode's lines: exit %d: %s", code, errOut)
			}
			summary := fmt.Sprintf("manifester stats: --filter %q: %d of %d frames counted\n", tc.expr, n, frames)
			for _, args := range [][]string{
				{"stats", "--spec", decSpec, "--format", "json", "--filter", tc.expr, "--pcap", path},
				{"stats", "--spec", decSpec, "--format", "json", "--filter", tc.expr, allPath},
			} {
				code, got, errOut := decRun(t, nil, args...)
				if code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, errOut)
				}
				if got != want {
					t.Errorf("%v:\n%s\nwant (stats of decode --filter's lines)\n%s", args, got, want)
				}
				if !strings.Contains(errOut, summary) {
					t.Errorf("%v: stderr %q, want the line %q", args, errOut, summary)
				}
			}
			if i != 0 {
				return
			}
			// client_id == billing: the first connection's four exchanges
			// (Fetch twice, Metadata, Produce), requests and responses.
			var s stats.Summary
			if err := json.Unmarshal([]byte(want), &s); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range s.APIs {
				got = append(got, fmt.Sprintf("%s v%d %d/%d", a.Name, a.Version, a.Requests, a.Responses))
			}
			if strings.Join(got, ", ") != "Produce v9 1/1, Fetch v13 2/2, Metadata v12 1/1" ||
				len(s.Connections) != 1 || s.Connections[0].ClientID == nil || *s.Connections[0].ClientID != "billing" || s.Connections[0].Frames != 8 {
				t.Errorf("client_id == billing: %v, connections %+v", got, s.Connections)
			}
		})
	}
}

// TestStatsFilterBad: a bad expression is a usage error naming the
// column, a filter on JSON lines needs a spec it can find, and a frame
// line without hex cannot be filtered.
func TestStatsFilterBad(t *testing.T) {
	path := writeTraffic(t, trafficConns())
	code, _, errOut := decRun(t, nil, "stats", "--spec", decSpec, "--pcap", path, "--filter", "api = Fetch")
	if code != ExitUsage || !strings.Contains(errOut, "--filter: column 5") {
		t.Errorf("bad expression: exit %d: %s", code, errOut)
	}
	noHex := filepath.Join(t.TempDir(), "nohex.jsonl")
	os.WriteFile(noHex, []byte("{\"kind\":\"request\",\"api_key\":1,\"version\":13,\"size\":3}\n"), 0o644)
	code, _, errOut = decRun(t, nil, "stats", "--spec", decSpec, "--filter", "api == Fetch", noHex)
	if code != ExitFailure || !strings.Contains(errOut, "line 1: --filter needs the frame's hex") {
		t.Errorf("no hex: exit %d: %s", code, errOut)
	}
}
