package proxy

import (
	"io"
	"net"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/testframes"
)

// TestApiVersionsV0Answer: a broker that knows ApiVersions up to v3 (as
// kfake capped to tshark's versions does) answers kgo's v4 with a v0
// body carrying UNSUPPORTED_VERSION (35), which Kafka's clients read as
// v0 and retry lower. The proxy reads it as decode --pcap does: v0, with
// the note and the request's version, not an error; in full and summary
// modes.
func TestApiVersionsV0Answer(t *testing.T) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version, req.ClientSoftwareName, req.ClientSoftwareVersion = 4, "kgo", "1"
	in := reqFrame(req, 0)
	answer := kmsg.NewPtrApiVersionsResponse()
	answer.Version, answer.ErrorCode = 0, 35
	answer.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 18, MinVersion: 0, MaxVersion: 3}}
	out := testframes.Response(answer, 0)
	for _, summary := range []bool{false, true} {
		up := fakeBroker(t, func(c net.Conn) {
			io.ReadFull(c, make([]byte, len(in)))
			c.Write(out)
		})
		p, ev := start(t, up, func(c *Config) { c.Summary = summary })
		c := dial(t, p.Addr())
		c.Write(in)
		if _, err := io.ReadFull(c, make([]byte, len(out))); err != nil {
			t.Fatal(err)
		}
		c.Close()
		p.Close()
		var resp *Event
		for _, e := range ev.of(EventFrame) {
			if e.Dir == "response" {
				resp = e
			}
		}
		if resp == nil {
			t.Fatalf("summary %v: no response event", summary)
		}
		f := resp.Frame
		if f.Error != "" || f.API != "ApiVersions" || f.Version != 0 || f.RequestVersion == nil || *f.RequestVersion != 4 ||
			!strings.Contains(f.Note, "read as v0") || f.Roundtrip == nil || !*f.Roundtrip {
			t.Errorf("summary %v: the v0 answer: error %q, %s v%d, request_version %v, note %q, roundtrip %v",
				summary, f.Error, f.API, f.Version, f.RequestVersion, f.Note, f.Roundtrip)
		}
	}
}
