package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/stats"
	"github.com/manifester/manifester/internal/testframes"
)

// TestStatsApiVersionsV0Answer: a broker answers an ApiVersions request
// at a version it does not know (v4 to a broker that has v3, kfake capped
// as tshark's Kafka dissector is; v5, newer than the 4.3 spec) with a v0
// body carrying UNSUPPORTED_VERSION (35), which Kafka's clients, decode
// --pcap and tshark read (tshark: kafka.error 35). stats must count each
// such exchange as answered under its request's version, with the error
// and nothing undecoded: from the capture, with a filter, and from the
// JSON lines of decode --pcap.
func TestStatsApiVersionsV0Answer(t *testing.T) {
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("kgo"))
	answer := kmsg.NewPtrApiVersionsResponse()
	answer.Version, answer.ErrorCode = 0, 35
	answer.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 18, MinVersion: 0, MaxVersion: 3}}
	var xs []pcapExchange
	for i, v := range []int16{4, 5} {
		av := kmsg.NewPtrApiVersionsRequest()
		av.Version, av.ClientSoftwareName, av.ClientSoftwareVersion = v, "kgo", "1"
		xs = append(xs, pcapExchange{f.AppendRequest(nil, av, int32(i)), testframes.Response(answer, int32(i)), 18, v})
	}
	path := writeScript(t, true, exchangeFrames(xs))

	check := func(name string, args ...string) {
		t.Helper()
		code, out, errOut := decRun(t, nil, append([]string{"stats", "--spec", decSpec, "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		var s stats.Summary
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		if len(s.APIs) != 2 {
			t.Fatalf("%s: %d rows, want ApiVersions v4 and v5: %+v", name, len(s.APIs), s.APIs)
		}
		for i, a := range s.APIs {
			if a.APIKey != 18 || a.Version != xs[i].ver || a.Requests != 1 || a.Responses != 1 || a.Unanswered != 0 ||
				a.Undecoded != 0 || a.Errors["UNSUPPORTED_VERSION"] != 1 || len(a.Errors) != 1 {
				t.Errorf("%s: row %d: %+v, want ApiVersions v%d answered once with UNSUPPORTED_VERSION", name, i, a, xs[i].ver)
			}
		}
	}
	check("stats --pcap", "--pcap", path)
	check("stats --pcap --filter", "--pcap", path, "--filter", "api == ApiVersions")

	code, lines, errOut := decRun(t, nil, "decode", "--spec", decSpec, "--pcap", path, "--format", "json")
	if code != 0 {
		t.Fatalf("decode --pcap: exit %d: %s", code, errOut)
	}
	jl := filepath.Join(t.TempDir(), "decode.jsonl")
	if err := os.WriteFile(jl, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	check("stats of decode --pcap's JSON lines", jl)
}
