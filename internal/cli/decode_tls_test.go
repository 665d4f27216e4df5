package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/cli"
	"github.com/manifester/manifester/internal/tlstest"
)

// TestDecodeTLSCapture: decode --pcap and stats --pcap read a capture of
// Kafka over TLS with --tls-keylog: every frame decodes cleanly, the
// connection line and the JSON lines name the session, the summary counts
// the decrypted connections; without a key log the command says how to
// read them; a bad key log line is an error naming the file and line;
// --tls-keylog without a capture is a usage error.
func TestDecodeTLSCapture(t *testing.T) {
	// Kafka 2.4's request versions, which the 4.3 spec has.
	s := tlstest.KafkaTLS(t, tlstest.Options{Records: 4, Consume: true, MaxVersions: tlstest.TsharkVersions()})
	dir := t.TempDir()
	var pcap bytes.Buffer
	if err := tlstest.WritePcap(&pcap, capture.PCAPNG, s.Recordings...); err != nil {
		t.Fatal(err)
	}
	capPath, keyPath := filepath.Join(dir, "tls.pcapng"), filepath.Join(dir, "keys.log")
	for p, b := range map[string][]byte{capPath: pcap.Bytes(), keyPath: s.KeyLog} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	session := "TLS 1.3 TLS_AES_128_GCM_SHA256"
	n := len(s.Recordings)

	code, out, errs := mainRun(t, nil, "decode", "--spec", specDir43, "--pcap", capPath, "--tls-keylog", keyPath)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if c := strings.Count(out, "decrypted: "+session+" (offsets are in the decrypted stream)"); c != n {
		t.Errorf("%d connection lines name the session, want %d:\n%s", c, n, out)
	}
	for _, api := range []string{"request ApiVersions(18)", "request Produce(0)", "response Produce(0)", "request Fetch(1)"} {
		if !strings.Contains(out, api) {
			t.Errorf("no %q in the output", api)
		}
	}
	if want := fmt.Sprintf("%d connections (%d TLS connections decrypted)", n, n); !strings.Contains(errs, want) || strings.Contains(errs, "not decrypted") {
		t.Errorf("summary lacks %q:\n%s", want, errs)
	}

	code, out, errs = mainRun(t, nil, "decode", "--spec", specDir43, "--pcap", capPath, "--tls-keylog", keyPath, "--format", "json")
	if code != cli.ExitOK {
		t.Fatalf("json: exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		var f struct {
			TLS   string `json:"tls"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatal(err)
		}
		if f.TLS != session || f.Error != "" {
			t.Errorf("line %s: tls %q, error %q", l[:min(len(l), 120)], f.TLS, f.Error)
		}
	}

	code, out, errs = mainRun(t, nil, "stats", "--spec", specDir43, "--pcap", capPath, "--tls-keylog", keyPath, "--format", "json")
	if code != cli.ExitOK || !strings.Contains(out, `"Produce"`) {
		t.Errorf("stats: exit %d, output %.300s, stderr %s", code, out, errs)
	}

	// No key log: nothing decoded, and the way to decode it said.
	code, out, errs = mainRun(t, nil, "decode", "--spec", specDir43, "--pcap", capPath)
	hint := fmt.Sprintf("%d TLS connections not read: give --tls-keylog FILE", n)
	if out != "" || !strings.Contains(errs, hint) || !strings.Contains(errs, fmt.Sprintf("%d connections ignored (%d TLS)", n, n)) {
		t.Errorf("without a key log: exit %d, stdout %q, stderr %s", code, out, errs)
	}

	// A bad line.
	bad := filepath.Join(dir, "bad.log")
	if err := os.WriteFile(bad, append(append([]byte(nil), s.KeyLog...), "CLIENT_RANDOM 00 11\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	lineNo := bytes.Count(s.KeyLog, []byte("\n")) + 1
	code, _, errs = mainRun(t, nil, "decode", "--spec", specDir43, "--pcap", capPath, "--tls-keylog", bad)
	if want := fmt.Sprintf("%s:%d: CLIENT_RANDOM: a client random of 1 bytes, want 32", bad, lineNo); code == cli.ExitOK || !strings.Contains(errs, want) {
		t.Errorf("bad key log: exit %d, stderr %s (want %q)", code, errs, want)
	}

	code, _, errs = mainRun(t, nil, "decode", "--spec", specDir43, "--hex", "00", "--tls-keylog", keyPath)
	if code != cli.ExitUsage || !strings.Contains(errs, "--tls-keylog goes with a capture") {
		t.Errorf("--tls-keylog with --hex: exit %d, %s", code, errs)
	}
}
