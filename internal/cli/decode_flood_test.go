package cli

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/report"
)

// TestDecodeFloodOfSmallFrames: a file of many small frames that fail
// (responses read as requests, or responses without their API) searches
// every response schema with the full allowance for the first
// report.FullSearches frames only; later frames search in proportion to
// their size, and stderr counts them. (A flood of 15-byte frames took
// 355 µs a frame before; the count, not the time, is what is checked.)
func TestDecodeFloodOfSmallFrames(t *testing.T) {
	one := binary.BigEndian.AppendUint32(nil, 10)
	one = binary.BigEndian.AppendUint32(one, 7)
	one = append(one, 0, 0, 0, 0, 0, 0) // SyncGroup v0: no error, an empty assignment
	const n = report.FullSearches + 24
	flood := bytes.Repeat(one, n)
	path := t.TempDir() + "/flood.bin"
	if err := os.WriteFile(path, flood, 0o644); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("the search of every response schema stopped at its budget on %d frames", n-report.FullSearches)

	// Read as requests (the default kind): each fails, and may be a
	// response.
	code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--format", "json", path)
	if code != ExitFailure || !strings.Contains(errOut, want) {
		t.Fatalf("exit %d, stderr %q; want %q", code, errOut, want)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines, want %d", len(lines), n)
	}
	var first struct {
		AsResponse []report.Candidate `json:"as_response"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || len(first.AsResponse) == 0 {
		t.Errorf("first frame: as_response %v (%v): %s", first.AsResponse, err, lines[0])
	}

	// As responses without --api: each names its candidates, the later
	// ones from a search that stopped early, which their lines say.
	code, out, errOut = decRun(t, nil, "decode", "--spec", decSpec, "--kind", "response", "--format", "json", path)
	if code != ExitOK || !strings.Contains(errOut, want) {
		t.Fatalf("--kind response: exit %d, stderr %q; want %q", code, errOut, want)
	}
	checkLeanLines(t, out)
}

// TestDecodeLogFloodOfOrphans: JSON lines of responses that name no API
// (as decode --pcap writes a response whose request it lost) are searched
// as a file of frames is: in full for the first report.FullSearches, then
// in proportion to their size, and stderr counts them.
func TestDecodeLogFloodOfOrphans(t *testing.T) {
	one := binary.BigEndian.AppendUint32(nil, 10)
	one = binary.BigEndian.AppendUint32(one, 7)
	one = append(one, 0, 0, 0, 0, 0, 0)
	const n = report.FullSearches + 4
	var lines strings.Builder
	for range n {
		fmt.Fprintf(&lines, "{\"kind\":\"response\",\"hex\":\"%x\"}\n", one)
	}
	code, out, errOut := decRun(t, []byte(lines.String()), "decode", "--spec", decSpec, "--format", "json", "-")
	want := fmt.Sprintf("the search of every response schema stopped at its budget on %d frames", n-report.FullSearches)
	if code != ExitOK || !strings.Contains(errOut, want) {
		t.Fatalf("exit %d, stderr %q; want %q", code, errOut, want)
	}
	checkLeanLines(t, out)
}

// checkLeanLines checks JSON lines of responses without their API: each
// names candidates, and those after the first report.FullSearches say
// that their search stopped early.
func checkLeanLines(t *testing.T, out string) {
	t.Helper()
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var f struct {
			Candidates []report.Candidate `json:"candidates"`
			Incomplete bool               `json:"candidates_incomplete"`
		}
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatal(err)
		}
		if lean := i >= report.FullSearches; f.Incomplete != lean || len(f.Candidates) == 0 {
			t.Errorf("line %d: %d candidates, incomplete %v; want incomplete %v", i, len(f.Candidates), f.Incomplete, lean)
		}
	}
}
