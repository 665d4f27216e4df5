package cli

import (
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/capture"
)

// TestDecodeStdinWithoutDash: a pipe on stdin is read without "-", as cat
// does; an empty one is a usage error.
func TestDecodeStdinWithoutDash(t *testing.T) {
	frame := decCreateTopics(7)
	code, want, errs := decRun(t, frame, "decode", "--spec", decSpec, "-")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for name, in := range map[string][]byte{"raw": frame, "hex": []byte(hex.EncodeToString(frame) + "\n")} {
		code, out, errs := decRun(t, in, "decode", "--spec", decSpec)
		if code != ExitOK || out != want {
			t.Errorf("%s on stdin without -: exit %d, same output %t: %s", name, code, out == want, errs)
		}
	}
	if code, _, errs := decRun(t, nil, "decode", "--spec", decSpec); code != ExitUsage || !strings.Contains(errs, "nothing to decode") {
		t.Errorf("empty stdin: exit %d: %s", code, errs)
	}
}

// TestDecodeCaptureByMagic: a pcap or pcapng given as FILE or on stdin is
// read as a capture (as with --pcap), not decoded as one Kafka frame;
// --kind there is said to have no effect.
func TestDecodeCaptureByMagic(t *testing.T) {
	xs := pcapExchanges()
	for _, f := range []capture.Format{capture.PCAP, capture.PCAPNG} {
		path := writePcap(t, xs, f, true, 0)
		code, want, errs := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json")
		if code != ExitOK {
			t.Fatalf("--pcap: exit %d: %s", code, errs)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for name, run := range map[string]func() (int, string, string){
			"FILE": func() (int, string, string) {
				return decRun(t, nil, "decode", "--spec", decSpec, path, "--format", "json")
			},
			"stdin -": func() (int, string, string) {
				return decRun(t, data, "decode", "--spec", decSpec, "-", "--format", "json")
			},
			"stdin alone": func() (int, string, string) { return decRun(t, data, "decode", "--spec", decSpec, "--format", "json") },
		} {
			code, out, errs := run()
			if code != ExitOK || out != want {
				t.Errorf("%v %s: exit %d, same lines as --pcap %t: %s", f, name, code, out == want, errs)
			}
			if !strings.Contains(errs, "packets") || strings.Contains(errs, "api_key 512") {
				t.Errorf("%v %s: stderr %q", f, name, errs)
			}
		}
		_, _, errs = decRun(t, nil, "decode", "--spec", decSpec, path, "--kind", "response")
		if !strings.Contains(errs, "warning: --kind has no effect") {
			t.Errorf("--kind with a capture: no warning: %s", errs)
		}
	}
}

// TestDecodeDumpFromTool: the dumps people paste, made by the real tools
// from a real frame when they are installed.
func TestDecodeDumpFromTool(t *testing.T) {
	frame := decCreateTopics(7)
	path := filepath.Join(t.TempDir(), "f.bin")
	if err := os.WriteFile(path, frame, 0o644); err != nil {
		t.Fatal(err)
	}
	_, want, _ := decRun(t, frame, "decode", "--spec", decSpec, "-")
	for _, tool := range [][]string{{"hexdump", "-C"}, {"hexdump"}, {"od", "-A", "x", "-t", "x1"}, {"xxd", "-a"}, {"xxd"}} {
		if _, err := exec.LookPath(tool[0]); err != nil {
			t.Logf("%s not installed (hexin's tests cover its checked-in sample)", tool[0])
			continue
		}
		dump, err := exec.Command(tool[0], append(tool[1:], path)...).Output()
		if err != nil {
			t.Fatal(err)
		}
		for name, in := range map[string]string{"LF": string(dump), "CRLF with BOM": "\uFEFF" + strings.ReplaceAll(string(dump), "\n", "\r\n")} {
			code, out, errs := decRun(t, []byte(in), "decode", "--spec", decSpec)
			if code != ExitOK || out != want {
				t.Errorf("%q %s: exit %d, same output %t: %s", tool, name, code, out == want, errs)
			}
		}
	}
}

// TestDecodeJunkBounded: a large file that is no frame gets its error
// first and a grid of at most --grid-max bytes (64 KiB by default).
func TestDecodeJunkBounded(t *testing.T) {
	junk := make([]byte, 1<<20)
	for i := range junk {
		junk[i] = byte(i*7 + i>>8)
	}
	junk[0] = 0x7f // a size prefix far larger than the data
	code, out, errs := decRun(t, junk, "decode", "--spec", decSpec)
	if code != ExitFailure || !strings.Contains(errs, "size prefix") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[1], "error:") {
		t.Errorf("the error is not first: %q", lines[:2])
	}
	if !strings.Contains(out, "the first 65536 shown, 983040 left out") || strings.Count(out, "\n") > 4096+200 {
		t.Errorf("grid not bounded: %d lines", strings.Count(out, "\n"))
	}
	if !strings.Contains(out, "\n0ffff0  ") && !strings.Contains(out, "\nfff0  ") {
		t.Errorf("no last row of the bounded grid")
	}
	_, all, _ := decRun(t, junk, "decode", "--spec", decSpec, "--grid-max", "0")
	if !strings.Contains(all, "\nffff0  ") || !strings.Contains(all, "\n00000  ") {
		t.Errorf("--grid-max 0: offsets do not widen to five digits past 0xffff")
	}
}
