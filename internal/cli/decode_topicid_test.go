package cli

import (
	"github.com/manifester/manifester/internal/testframes"

	"encoding/hex"
	"strings"
	"testing"
)

const ordersID = "0a0b0c0d-0102-0304-0506-0708090a0b0c"

func TestDecodePcapTopicIDNames(t *testing.T) {
	path := writeTraffic(t, trafficConns()[:2])
	code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 11 {
		t.Fatalf("%d lines", len(lines))
	}
	named := `= ` + ordersID + ` (topic \"orders\")`
	// Frames 0 and 1 come before the Metadata response (frame 3) that
	// names the id; frames 4 and 5 after it; conn 2 (frames 8, 9) uses
	// the name conn 1 learnt for payments.
	for i, want := range map[int]string{0: "", 1: "", 4: named, 5: named,
		8: `(topic \"payments\")`, 9: `(topic \"payments\")`} {
		has := strings.Contains(lines[i], `(topic \"`)
		if want == "" && has {
			t.Errorf("frame %d is annotated before the name was seen: %.300s", i, lines[i])
		}
		if want != "" && !strings.Contains(lines[i], want) {
			t.Errorf("frame %d lacks %s", i, want)
		}
	}
	if strings.Contains(lines[3], `(topic \"`) {
		t.Error("the Metadata response annotates its own ids")
	}

	code, out, errOut = decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "-v", "--filter", "correlation_id == 3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if n := strings.Count(out, `TopicId `); n != 2 || strings.Count(out, ordersID+` (topic "orders")`) != 2 {
		t.Errorf("text tree: %d TopicId lines, want 2 named ones:\n%s", n, out)
	}
}

func TestDecodeStreamTopicIDNames(t *testing.T) {
	// Two Metadata v12 responses back to back (--kind response): the ids
	// of the second are named by the first.
	one := testframes.Response(metadataResp(), 5)
	in := hex.EncodeToString(append(append([]byte{}, one...), one...))
	code, out, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--kind", "response", "--api", "Metadata", "--version", "12", "--hex", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	second := out[strings.Index(out, "frame 1 at offset"):]
	if strings.Contains(out[:len(out)-len(second)], `(topic "`) || !strings.Contains(second, ordersID+` (topic "orders")`) {
		t.Errorf("stream output:\n%s", out)
	}
}
