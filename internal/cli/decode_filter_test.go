package cli

import (
	"github.com/manifester/manifester/internal/testframes"

	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// shownIndexes returns the "index" of every JSON line.
func shownIndexes(t *testing.T, out string) []int {
	t.Helper()
	var idx []int
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var i int
		if _, err := fmt.Sscanf(line, `{"index":%d,`, &i); err != nil {
			t.Fatalf("not a frame line: %.100s", line)
		}
		idx = append(idx, i)
	}
	return idx
}

func TestDecodePcapFilter(t *testing.T) {
	path := writeTraffic(t, trafficConns())
	hbErrors := []int{}
	for i := 10; i <= 100; i += 10 {
		hbErrors = append(hbErrors, 11+2*(i-1)+1) // heartbeat i is frames 11+2(i-1) and the next
	}
	for _, c := range []struct {
		expr string
		want []int
	}{
		{"api == Fetch and error != NONE", []int{5}},
		{"topic == orders", []int{2, 3, 4, 5}}, // frame 0 names the id before Metadata did
		{"topic == payments", []int{3, 6, 7, 8, 9, 10}},
		{"client_id == reporting", []int{8, 9, 10}}, // the response matches with its request's client id
		{"kind == response && latency_us >= 2000 && api != Heartbeat", []int{5, 7, 9}},
		{"api == Heartbeat and error == REBALANCE_IN_PROGRESS", hbErrors},
		{"not (api == Heartbeat) and (kind == request or correlation_id == 4)", []int{0, 2, 4, 6, 7, 8, 10}},
		{"api == Produce && !(error == NONE)", []int{6, 10}}, // requests have no error codes
		{"topic contains pay || error contains LEADER", []int{3, 5, 6, 7, 8, 9, 10}},
		{"api == 1 and version >= 13 and size > 0 and correlation_id <= 1", []int{0, 1, 8, 9}},
	} {
		code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json", "--filter", c.expr)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.expr, code, errOut)
		}
		got := shownIndexes(t, out)
		if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("%s: frames %v, want %v", c.expr, got, c.want)
		}
		if want := fmt.Sprintf("%d of 211 frames shown", len(c.want)); !strings.Contains(errOut, want) {
			t.Errorf("%s: stderr lacks %q: %s", c.expr, want, errOut)
		}
	}

	// Text output: the connection line comes with the first frame shown.
	code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--filter", "client_id == reporting")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "# connection 2: client 10.0.0.3:52000") || strings.Contains(out, "connection 1") {
		t.Errorf("text output:\n%s", out)
	}
}

func TestDecodeFilterErrors(t *testing.T) {
	path := writeTraffic(t, trafficConns()[:1])
	for expr, want := range map[string]string{
		"api = Fetch":            "--filter: column 5: use == to compare",
		"api == Fecth":           `--filter: column 8: unknown API "Fecth"; did you mean Fetch`,
		"(api == Fetch":          "--filter: column 1: unclosed (",
		"latency_us > 1ms":       `--filter: column 14: latency_us compares with a number, not "1ms"`,
		"api == Fetch and topic": "--filter: column 23: expected an operator",
	} {
		for _, args := range [][]string{{"--pcap", path}, {"--hex", "00"}} {
			code, out, errOut := decRun(t, nil, append([]string{"decode", "--spec", decSpec, "--filter", expr}, args...)...)
			if code != ExitUsage || out != "" || !strings.Contains(errOut, want) {
				t.Errorf("%s %v: exit %d, stdout %q, stderr %q; want exit 2 and %q", expr, args, code, out, errOut, want)
			}
		}
	}
}

func TestDecodeStreamFilter(t *testing.T) {
	f1 := testframes.Request("a", fetchReq(topicOrders), 1)
	f2 := testframes.Request("b", produceReq("payments", 1), 2)
	both := hex.EncodeToString(append(append([]byte{}, f1...), f2...))
	for _, c := range []struct {
		expr string
		want []int
	}{
		{"api == Produce", []int{1}},
		{"client_id == a or topic == payments", []int{0, 1}},
		{"kind == response", nil},
	} {
		code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--hex", both, "--format", "json", "--filter", c.expr)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.expr, code, errOut)
		}
		if got := shownIndexes(t, out); !slices.Equal(got, c.want) {
			t.Errorf("%s: frames %v, want %v", c.expr, got, c.want)
		}
		if want := fmt.Sprintf("%d of 2 frames shown", len(c.want)); !strings.Contains(errOut, want) {
			t.Errorf("%s: stderr lacks %q: %s", c.expr, want, errOut)
		}
	}
	// Stdin (binary) and a file go the same way.
	code, out, _ := decRun(t, append(f1, f2...), "decode", "--spec", decSpec, "--format", "json", "--filter", "correlation_id == 2", "-")
	if code != 0 || !slices.Equal(shownIndexes(t, out), []int{1}) {
		t.Errorf("stdin: exit %d: %s", code, out)
	}
	// A frame that fails and is not shown does not fail the run, and is said.
	bad := hex.EncodeToString(append(append([]byte{}, f1...), 0, 0, 0, 6, 0, 12, 0, 99, 0, 0))
	code, _, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--hex", bad, "--format", "json", "--filter", "api == Fetch")
	if code != 0 || !strings.Contains(errOut, "1 of 2 frames shown; 1 of the frames not shown did not decode") {
		t.Errorf("hidden failure: exit %d: %s", code, errOut)
	}
}
