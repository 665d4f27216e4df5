package report

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testframes"
)

// TestOrphan: a response without its request names no API, its
// candidates hold the true (API, version), hinted ones first, and every
// candidate re-encodes the bytes.
func TestOrphan(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	hb := kmsg.NewPtrHeartbeatResponse()
	hb.Version, hb.ErrorCode = 4, 27
	md := kmsg.NewPtrMetadataResponse()
	md.Version = 12
	topic := "orders"
	md.Topics = []kmsg.MetadataResponseTopic{{Topic: &topic, Partitions: []kmsg.MetadataResponseTopicPartition{{Partition: 1, Leader: 1, Replicas: []int32{1}}}}}
	cases := []struct {
		b        []byte
		key, ver int16
	}{{testframes.Response(hb, 9), 12, 4}, {testframes.Response(md, 9), 3, 12}}
	for _, tc := range cases {
		for _, hints := range [][]Hint{nil, {{APIKey: tc.key, Version: tc.ver}}} {
			for _, lean := range []bool{false, true} {
				f := Orphan(c, tc.b, hints, Options{Lean: lean})
				if !f.APIUnknown || f.Error != "" || !strings.Contains(f.Warning, "correlation id 9") || f.CorrelationID != 9 {
					t.Fatalf("%d v%d: %+v", tc.key, tc.ver, f)
				}
				found := false
				for i, cand := range f.Candidates {
					found = found || cand.APIKey == tc.key && cand.Version == tc.ver
					api, _ := c.Reg.API(cand.APIKey)
					d, err := c.DecodeResponse(tc.b, api, cand.Version, codecOpts())
					if err != nil {
						t.Fatalf("candidate %+v does not decode: %v", cand, err)
					}
					if enc, err := c.EncodeResponse(nil, d); err != nil || !bytes.Equal(enc, tc.b) {
						t.Errorf("candidate %+v does not re-encode the bytes", cand)
					}
					if i == 0 && hints != nil && (cand.APIKey != tc.key || cand.Version != tc.ver) {
						t.Errorf("hinted %d v%d is not first: %+v", tc.key, tc.ver, f.Candidates)
					}
				}
				if !found || len(f.Candidates) > MaxCandidates {
					t.Errorf("%d v%d not among %d candidates %+v", tc.key, tc.ver, len(f.Candidates), f.Candidates)
				}
			}
		}
	}
	// Bytes no response schema explains: an error, no candidates.
	junk := []byte{0, 0, 0, 9, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0xff}
	if f := Orphan(c, junk, nil, Options{}); f.Error == "" || len(f.Candidates) != 0 || f.OK() {
		t.Errorf("junk: %+v", f)
	}
}

// TestResponseApiVersionsRule: an ApiVersions response is read as v0 when
// its request is newer than the spec, and when it decodes at v0 but not
// at its request's version (the broker's UNSUPPORTED_VERSION answer).
func TestResponseApiVersionsRule(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	api, _ := c.Reg.API(18)
	answer := kmsg.NewPtrApiVersionsResponse()
	answer.Version, answer.ErrorCode = 0, 35
	answer.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 18, MaxVersion: 2}}
	b := testframes.Response(answer, 0)
	for _, v := range []int16{3, 9} {
		f := Response(c, b, api, v, Options{Roundtrip: true})
		if f.Error != "" || f.Version != 0 || !strings.Contains(f.Note, "v0") || f.Roundtrip == nil || !*f.Roundtrip || !strings.Contains(string(f.Body), `"ErrorCode":35`) {
			t.Errorf("request v%d: %+v", v, f)
		}
		if f.RequestVersion == nil || *f.RequestVersion != v {
			t.Errorf("request v%d: request_version %v", v, f.RequestVersion)
		}
		// ResponseValues reads it the same way, for stats and filters.
		if fv, err := ResponseValues(c, b, api, v); err != nil || fv.Version != 0 {
			t.Errorf("ResponseValues, request v%d: %v, %+v", v, err, fv)
		}
	}
	// A response to another API's request newer than the spec: a warning.
	fetch, _ := c.Reg.API(1)
	f := Response(c, b, fetch, fetch.Response.Valid.Hi+1, Options{})
	if f.Error != "" || !strings.Contains(f.Warning, "newer than this spec") || !f.OK() {
		t.Errorf("newer fetch: %+v", f)
	}
}

// TestNewerAsWarning: a request at a version newer than the spec has its
// header decoded and is a warning, not an error.
func TestNewerAsWarning(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version, req.ClientSoftwareName, req.ClientSoftwareVersion = 4, "x", "1"
	b := testframes.Request("kgo", req, 77)
	b[7] = 9
	f := Decode(c, b, Options{NewerAsWarning: true, Lean: true})
	if !f.OK() || f.Error != "" || !strings.Contains(f.Warning, "ApiVersions v9 is newer than this spec (0-4); the broker will answer it as v0") ||
		f.CorrelationID != 77 || f.ClientID == nil || *f.ClientID != "kgo" || f.HeaderVersion != 2 {
		t.Fatalf("%+v", f)
	}
}

// TestCut: the captured start of a frame cut by a gap decodes as far as
// it goes and is a warning with the gap.
func TestCut(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	b := testframes.Request("kgo", testframes.CreateTopics(7), 5)
	g := Gap{Offset: 100, Size: 1448, FrameSize: int64(len(b)), Captured: 20}
	f := Cut(c, b[:20], schema.TypeRequest, nil, 0, g, Options{})
	if !f.OK() || f.Gap == nil || *f.Gap != g || f.API != "CreateTopics" || f.CorrelationID != 5 || f.Size != len(b) ||
		!strings.Contains(f.Warning, "1448 bytes not captured at stream offset 100") || f.SpanTree() == nil || f.Body != nil {
		t.Fatalf("%+v", f)
	}
}

func codecOpts() codec.Options { return codec.Options{} }

// TestCandidatesBounded: the search stops at its budget and says so,
// having tried the hinted API first. (The budget is lowered to 1 MiB: a
// 500 KB frame decoded and re-encoded once exhausts it.)
func TestCandidatesBounded(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	defer func(m int) { candidateBudgetMax = m }(candidateBudgetMax)
	candidateBudgetMax = 1 << 20
	md := kmsg.NewPtrMetadataResponse()
	md.Version = 12
	for i := int32(0); i < 20000; i++ {
		md.Brokers = append(md.Brokers, kmsg.MetadataResponseBroker{NodeID: i, Host: "broker.example", Port: 9092})
	}
	b := testframes.Response(md, 3)
	if len(b) < 400<<10 {
		t.Fatalf("frame of %d bytes", len(b))
	}
	cs, incomplete := Candidates(c, b, []Hint{{APIKey: 3, Version: 12}})
	if !incomplete || len(cs) != 1 || cs[0] != (Candidate{APIKey: 3, Name: "Metadata", Version: 12}) {
		t.Errorf("candidates %+v, incomplete %v", cs, incomplete)
	}
	f := Orphan(c, b, nil, Options{})
	if !f.CandidatesIncomplete {
		t.Errorf("orphan without hints: %d candidates, search complete", len(f.Candidates))
	}
	if len(f.Candidates) == 0 && !strings.Contains(f.Error, "within the search budget") {
		t.Errorf("orphan without hints: error %q", f.Error)
	}
}

// TestCutHeader: a frame cut before its header was captured whole names
// no API, version or correlation id.
func TestCutHeader(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	b := testframes.Request("kgo", testframes.CreateTopics(7), 5)
	f := Cut(c, b[:9], 0, nil, 0, Gap{Offset: 9, Size: 100, FrameSize: int64(len(b)), Captured: 9}, Options{Lean: true})
	if !f.APIUnknown || f.API != "" || !f.OK() || !strings.Contains(f.Summary(), "request (header not captured), "+strconv.Itoa(len(b))+" bytes (cut: 9 captured)") {
		t.Errorf("%s", f.Summary())
	}
}
