package capture

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tsharkCount runs tshark on a capture with a display filter and counts
// the packets it shows; extra are more arguments (-d to decode a port as
// a protocol). tshark missing is a skip locally and a failure in
// CI.
func tsharkCount(t *testing.T, data []byte, filter string, extra ...string) int {
	t.Helper()
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("tshark is required in CI: %v", err)
		}
		t.Skip("tshark not installed")
	}
	path := filepath.Join(t.TempDir(), "c.pcap")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-n", "-r", path, "-T", "fields", "-e", "frame.number"}
	if filter != "" {
		args = append(args, "-Y", filter)
	}
	args = append(args, extra...)
	cmd := exec.Command(tshark, args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Run(); err != nil {
		t.Fatalf("tshark %v: %v\n%s", args, err, se.String())
	}
	return strings.Count(so.String(), "\n")
}

// TestGeneratedCapturesThroughTshark: Wireshark's TCP analysis, an
// independent reader, sees in the captures the gap and retransmission
// tests write what they are meant to hold: a lost segment, duplicates,
// out-of-order segments, and nothing of the kind in the clean capture.
func TestGeneratedCapturesThroughTshark(t *testing.T) {
	xs := gapExchanges()
	build := func(mutate func([]seg) []seg) []byte {
		segs, _ := segments(xs)
		return writeSegments(t, mutate(segs), nil)
	}
	clean := build(func(s []seg) []seg { return s })
	if n := tsharkCount(t, clean, "tcp.analysis.flags && !tcp.analysis.window_update"); n != 0 {
		t.Errorf("clean capture: tshark flags %d packets", n)
	}
	lost := build(func(s []seg) []seg { s[findSeg(s, 3, 2)].drop = true; return s })
	if n := tsharkCount(t, lost, "tcp.analysis.lost_segment || tcp.analysis.ack_lost_segment"); n == 0 {
		t.Errorf("lost segment: tshark sees none")
	}
	dup := build(func(s []seg) []seg {
		for i := range s {
			s[i].dup = true
		}
		return s
	})
	if n, segs := tsharkCount(t, dup, "tcp.analysis.retransmission || tcp.analysis.spurious_retransmission"), len(xs)*2; n < segs {
		t.Errorf("duplicates: tshark sees %d retransmissions, want at least %d", n, segs)
	}
	ooo := build(func(s []seg) []seg {
		i := findSeg(s, 3, 1)
		s[i], s[i+1] = s[i+1], s[i]
		return s
	})
	if n := tsharkCount(t, ooo, "tcp.analysis.out_of_order || tcp.analysis.retransmission"); n == 0 {
		t.Errorf("out of order: tshark sees nothing")
	}
}
