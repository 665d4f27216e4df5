package cli

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/hostile"
)

// TestDecodeBudgetFlags decodes hostile frames of issue 9 from a file as
// text and JSON: the output stays within the default budget and says
// where it was reached, stderr says so too, the exit status is 0 (the
// frames are well formed), and the flags raise and lower the limits.
func TestDecodeBudgetFlags(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	zeros := write("zeros.bin", hostile.Example(32<<10))      // 1 MiB gzip batches of zeros
	dense := write("dense.bin", hostile.DenseExample(64<<10)) // gzip batches of small records
	outBound := int64(64*(64<<10) + 4<<20 + 8<<10)            // the default output budget of the larger, plus notes

	for _, format := range []string{"text", "json"} {
		for _, f := range []string{zeros, dense} {
			code, out, errs := decRun(t, nil, "decode", "--spec", decSpec, "--format", format, f)
			t.Logf("%s %s: exit %d, %d bytes out; %.200s", format, filepath.Base(f), code, len(out), errs)
			if code != 0 || !strings.Contains(errs, "reached its decode budget") {
				t.Errorf("%s %s: exit %d, stderr %q", format, filepath.Base(f), code, errs)
			}
			if int64(len(out)) > outBound {
				t.Errorf("%s %s: %d bytes of output", format, filepath.Base(f), len(out))
			}
			if !strings.Contains(out, "budget") {
				t.Errorf("%s %s: the output does not say a budget was reached", format, filepath.Base(f))
			}
			if format == "json" {
				var v map[string]any
				if err := json.Unmarshal([]byte(out), &v); err != nil {
					t.Errorf("%s: %v", filepath.Base(f), err)
				}
			}
		}
	}
	// Raised: the zeros frame inflates whole, and nothing is said.
	code, out, errs := decRun(t, nil, "decode", "--spec", decSpec, "--format", "json", "--max-inflate", "1GiB", "--max-output", "2G", zeros)
	if code != 0 || strings.Contains(errs, "budget") || strings.Contains(out, `"budget"`) {
		t.Errorf("raised limits: exit %d, stderr %q, budget in output %v", code, errs, strings.Contains(out, `"budget"`))
	}
	// Lowered: the output stops at 64 KiB.
	code, out, errs = decRun(t, nil, "decode", "--spec", decSpec, "--max-output", "64K", "--max-nodes", "1000", dense)
	if code != 0 || len(out) > 64<<10+8<<10 || !strings.Contains(out, "output budget of 64 KiB for this frame spent") {
		t.Errorf("lowered limits: exit %d, %d bytes, stderr %q", code, len(out), errs)
	}
	if !strings.Contains(out, "span-node budget of 1000 nodes") {
		t.Errorf("--max-nodes 1000 is not the node budget")
	}
	for _, bad := range [][]string{{"--max-inflate", "lots"}, {"--max-nodes", "-1"}, {"--max-output", "0"}} {
		if code, _, errs := decRun(t, nil, append([]string{"decode", "--spec", decSpec}, append(bad, dense)...)...); code != 2 || !strings.Contains(errs, bad[0]) {
			t.Errorf("%v: exit %d, %q", bad, code, errs)
		}
	}
}

// TestDecodeLogBudgetFlags decodes a proxy log (JSON lines) whose frame is
// a hostile one: decode's --max-* flags bound it as they bound a file of
// raw bytes, in text and in JSON.
func TestDecodeLogBudgetFlags(t *testing.T) {
	frame := hostile.DenseExample(64 << 10)
	line, err := json.Marshal(map[string]any{"event": "frame", "conn": 1, "kind": "request", "index": 0, "hex": hex.EncodeToString(frame)})
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "proxy.jsonl")
	if err := os.WriteFile(log, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "json"} {
		code, out, errs := decRun(t, nil, "decode", "--spec", decSpec, "--format", format, "--max-nodes", "1000", "--max-output", "64K", log)
		if code != 0 || !strings.Contains(errs, ": 1 frame, 0 other events") {
			t.Errorf("%s: exit %d, stderr %q", format, code, errs)
		}
		if !strings.Contains(out, "span-node budget of 1000 nodes") {
			t.Errorf("%s: --max-nodes 1000 is not the node budget of a log's frame; output %.300q", format, out)
		}
		// JSON carries the frame's hex, and the body its records' bytes
		// in hex, besides the tree (as decode of the raw bytes does).
		if bound := 64<<10 + 8<<10 + 4*len(frame); len(out) > bound {
			t.Errorf("%s: %d bytes of output, over --max-output 64K (+ the frame's hex: %d)", format, len(out), bound)
		}
	}
	// The defaults allow more nodes than 1000.
	if _, out, _ := decRun(t, nil, "decode", "--spec", decSpec, log); strings.Contains(out, "span-node budget of 1000 nodes") {
		t.Errorf("without flags the node budget is still 1000")
	}
}

// TestDecodeBudgetSaidOnStderr: a frame that reaches its decode budget is
// said on standard error whatever the input: a file of raw bytes, a
// capture, and the JSON lines decode --pcap wrote for it.
func TestDecodeBudgetSaidOnStderr(t *testing.T) {
	frame := hostile.DenseExample(64 << 10)
	dir := t.TempDir()
	raw := filepath.Join(dir, "frame.bin")
	if err := os.WriteFile(raw, frame, 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.PCAP)
	if err != nil {
		t.Fatal(err)
	}
	c := w.Conn(pcapClient, pcapServer)
	if err := c.Open(pcapT0); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(capture.ClientToServer, pcapT0, frame); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(pcapT0.Add(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	pcap := filepath.Join(dir, "frame.pcap")
	if err := os.WriteFile(pcap, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, lines, errs := decRun(t, nil, "decode", "--spec", decSpec, "--format", "json", "--pcap", pcap)
	if code != 0 {
		t.Fatalf("decode --pcap: exit %d: %s", code, errs)
	}
	log := filepath.Join(dir, "frame.jsonl")
	if err := os.WriteFile(log, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{raw}, {"--pcap", pcap}, {"--format", "json", "--pcap", pcap}, {log}} {
		code, out, errs := decRun(t, nil, append([]string{"decode", "--spec", decSpec}, args...)...)
		if code != 0 || !strings.Contains(out, "budget") {
			t.Errorf("%v: exit %d, budget in the output %v: %s", args, code, strings.Contains(out, "budget"), errs)
		}
		if !strings.Contains(errs, "1 frame of 1 reached its decode budget") {
			t.Errorf("%v: stderr does not say the budget was reached: %q", args, errs)
		}
	}
}

// TestDecodeOutputBudgetSaidOnStderr: a frame whose rendering the output
// budget cut (--max-output) is counted on standard error with the frames
// that reached their decode budget, whatever the input.
func TestDecodeOutputBudgetSaidOnStderr(t *testing.T) {
	frame := pcapExchanges()[0].req
	dir := t.TempDir()
	raw := filepath.Join(dir, "frame.bin")
	if err := os.WriteFile(raw, frame, 0o644); err != nil {
		t.Fatal(err)
	}
	pcap := writePcap(t, pcapExchanges()[:1], capture.PCAP, true, 0)
	code, lines, errs := decRun(t, nil, "decode", "--spec", decSpec, "--format", "json", "--pcap", pcap)
	if code != 0 {
		t.Fatalf("decode --pcap: exit %d: %s", code, errs)
	}
	log := filepath.Join(dir, "frame.jsonl")
	if err := os.WriteFile(log, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{raw}, {"--format", "json", raw}, {"-v", "--pcap", pcap}, {"--format", "json", "--pcap", pcap}, {"-v", log}} {
		code, out, errs := decRun(t, nil, append([]string{"decode", "--spec", decSpec, "--max-output", "100"}, args...)...)
		if code != 0 || !strings.Contains(out, "output budget of 100 bytes for this frame spent") {
			t.Errorf("%v: exit %d, output budget said in the output %v: %s", args, code, strings.Contains(out, "output budget"), errs)
		}
		if !strings.Contains(errs, "reached its decode budget") || !strings.Contains(errs, "output budget of 100 bytes") {
			t.Errorf("%v: stderr does not say the output budget was reached: %q", args, errs)
		}
	}
}
