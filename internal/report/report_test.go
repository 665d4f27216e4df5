package report

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testframes"
	"github.com/manifester/manifester/internal/wire"
)

func TestDecodeClean(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	b := testframes.Request("kgo", testframes.CreateTopics(7), 42)
	f := Decode(c, b, Options{Roundtrip: true})
	if !f.OK() || f.Error != "" || f.Roundtrip == nil || !*f.Roundtrip {
		t.Fatalf("not clean: %+v", f)
	}
	if f.Kind != "request" || f.APIKey != 19 || f.API != "CreateTopics" || f.Version != 7 || f.CorrelationID != 42 ||
		f.Size != len(b) || f.HeaderVersion != 2 || f.ClientID == nil || *f.ClientID != "kgo" {
		t.Errorf("header facts wrong: %+v", f)
	}
	var body map[string]any
	if err := json.Unmarshal(f.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body["validateOnly"] != true || body["Topics"].([]any)[0].(map[string]any)["Name"] != "orders" {
		t.Errorf("body JSON: %s", f.Body)
	}
}

// TestNonCanonical feeds frames that decode but are not what a writer
// produces, and checks the first difference and its explanation.
func TestNonCanonical(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	base := testframes.Request("kgo", testframes.CreateTopics(7), 1)
	// The request header's tagged-field count sits after the client id:
	// size 4 + key 2 + version 2 + corr 4 + client id 2+3 = offset 17.
	if base[17] != 0 {
		t.Fatalf("expected the header tag count at 17, got %x", base[17])
	}
	cases := []struct {
		name   string
		mutate func([]byte) []byte
		off    int
		field  string
		reason string
	}{
		{"redundant varint", func(b []byte) []byte {
			return fixSize(slices.Insert(slices.Clone(b), 17, 0x80))
		}, 17, "RequestHeader.tagged_fields", "redundant varint bytes"},
		{"bool 2", func(b []byte) []byte {
			b = append([]byte(nil), b...)
			b[len(b)-2] = 2 // validateOnly, before the body's tag count
			return b
		}, len(base) - 2, "CreateTopicsRequest.validateOnly", "bool written as 0x02"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.mutate(base)
			f := Decode(c, in, Options{Roundtrip: true})
			if f.Error != "" {
				t.Fatalf("did not decode: %s", f.Error)
			}
			if f.Roundtrip == nil || *f.Roundtrip || f.OK() {
				t.Fatalf("round trip passed on non-canonical input")
			}
			d := f.RoundtripDiff
			if d.Offset != tc.off || d.Field != tc.field || !strings.Contains(d.Reason, tc.reason) {
				t.Errorf("diff %+v; want offset %d field %s reason %q", d, tc.off, tc.field, tc.reason)
			}
			if tr := f.SpanTree(); tr.Flag(tr.LeafAt(tr.Root(), d.Offset)) != "non-canonical" {
				t.Errorf("tree does not flag the leaf at 0x%x", d.Offset)
			}
		})
	}
}

func fixSize(b []byte) []byte {
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// TestAlsoDecodesAs: a v4 CreateTopics request relabelled v5 (the first
// flexible version) does not decode; the report says which versions do.
func TestAlsoDecodesAs(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	b := testframes.Request("kgo", testframes.CreateTopics(4), 9)
	b[7] = 5
	f := Decode(c, b, Options{})
	if f.Error == "" || f.ErrorOffset == nil {
		t.Fatalf("relabelled frame decoded cleanly")
	}
	if !slices.Contains(f.AlsoDecodesAs, 4) || slices.Contains(f.AlsoDecodesAs, 5) {
		t.Errorf("also_decodes_as = %v; want 4 in it, not 5", f.AlsoDecodesAs)
	}
	if !errors.Is(f.Err, wire.ErrTruncated) && !errors.Is(f.Err, wire.ErrTrailing) && !errors.Is(f.Err, wire.ErrCountTooLarge) {
		t.Logf("error: %v", f.Err)
	}

	// A response decoded at the wrong version.
	api, _ := c.Reg.Lookup("CreateTopics")
	resp := kmsg.NewPtrCreateTopicsResponse()
	resp.Version = 2
	rt := kmsg.NewCreateTopicsResponseTopic()
	rt.Topic = "orders"
	resp.Topics = append(resp.Topics, rt)
	body := resp.AppendTo(nil)
	rb := binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
	rb = binary.BigEndian.AppendUint32(rb, 77)
	rb = append(rb, body...)
	f = Decode(c, rb, Options{Kind: schema.TypeResponse, API: api, Version: 5})
	if f.Error == "" || !slices.Contains(f.AlsoDecodesAs, 2) || slices.Contains(f.AlsoDecodesAs, 5) {
		t.Errorf("response at v5: error %q, also %v", f.Error, f.AlsoDecodesAs)
	}
	f = Decode(c, rb, Options{Kind: schema.TypeResponse, API: api, Version: 2, Roundtrip: true})
	if !f.OK() || f.CorrelationID != 77 {
		t.Errorf("response at v2: %+v", f)
	}
	// Without its API, the response is reported as one whose request was
	// lost: the APIs and versions that explain it, v2 of CreateTopics
	// among them, and a warning; nothing is chosen.
	f = Decode(c, rb, Options{Kind: schema.TypeResponse})
	if !f.Unnamed || !f.APIUnknown || f.Decoded != nil || !f.OK() || !strings.Contains(f.Warning, "does not name its API") ||
		!slices.Contains(f.Candidates, Candidate{APIKey: 19, Name: "CreateTopics", Version: 2}) || slices.Contains(f.Candidates, Candidate{APIKey: 19, Name: "CreateTopics", Version: 5}) {
		t.Errorf("response without API: unnamed %v, warning %q, error %q, candidates %v", f.Unnamed, f.Warning, f.Error, f.Candidates)
	}
}

// TestWideVarint: a 5-byte uvarint whose top bits Kafka's reader drops
// decodes to 0 and is explained when it does not round-trip.
func TestWideVarint(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	base := testframes.Request("kgo", testframes.CreateTopics(7), 1)
	in := fixSize(slices.Concat(base[:17], []byte{0x80, 0x80, 0x80, 0x80, 0x10}, base[18:]))
	f := Decode(c, in, Options{Roundtrip: true})
	if f.Error != "" || f.Roundtrip == nil || *f.Roundtrip || !strings.Contains(f.RoundtripDiff.Reason, "bits beyond 32") {
		t.Fatalf("error %q, diff %+v", f.Error, f.RoundtripDiff)
	}
}

// TestApiVersionsNewer: an ApiVersions request newer than the spec is an
// error that explains how brokers treat it.
func TestApiVersionsNewer(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 4
	req.ClientSoftwareName, req.ClientSoftwareVersion = "x", "1"
	b := testframes.Request("kgo", req, 0)
	b[7] = 9
	f := Decode(c, b, Options{})
	if !errors.Is(f.Err, wire.ErrVersion) || !strings.Contains(f.Error, "UNSUPPORTED_VERSION (35)") || !slices.Contains(f.AlsoDecodesAs, 4) {
		t.Errorf("error %q, also %v", f.Error, f.AlsoDecodesAs)
	}
}

// TestUnknownKeySummary: the report of a request whose API key the spec
// does not have gives the version and correlation id the frame carries
// (they come right after the key in every request header version), in
// its fields and its summary, and names no header version, which is not
// known; the error is the unknown key, at its offset.
func TestUnknownKeySummary(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	b := testframes.Request("kgo", testframes.CreateTopics(7), 42)
	binary.BigEndian.PutUint16(b[4:], 999)
	f := Decode(c, b, Options{})
	if f.OK() || !strings.Contains(f.Error, "unknown API key 999") || f.ErrorOffset == nil || *f.ErrorOffset != 4 {
		t.Fatalf("error %q at %v, want the unknown key at offset 4", f.Error, f.ErrorOffset)
	}
	if f.APIKey != 999 || f.API != "" || f.Version != 7 || f.CorrelationID != 42 {
		t.Errorf("header facts wrong: %+v", f)
	}
	want := "request api_key 999 v7 correlation_id 42, " + strconv.Itoa(len(b)) + " bytes"
	if s := f.Summary(); s != want {
		t.Errorf("summary %q, want %q", s, want)
	}
}

// TestHeaderCutShort: a frame whose bytes end inside its header reports
// only the header facts they give, in its fields (Known) and its summary,
// which says the header is cut short; nothing is read as 0.
func TestHeaderCutShort(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	metadata, ok := c.Reg.API(3)
	if !ok {
		t.Fatal("no Metadata in the spec")
	}
	all := []HeaderFacts{FactAPIKey, FactVersion, FactCorrelationID, FactHeaderVersion}
	for _, tc := range []struct {
		name, hex string
		opts      Options
		known     []HeaderFacts
		summary   string
	}{
		{"size and a byte", "0000000100", Options{}, nil, "request (header cut short), 5 bytes"},
		{"key only", "000000020003", Options{}, []HeaderFacts{FactAPIKey}, "request Metadata(3) (header cut short), 6 bytes"},
		{"key and version", "0000000400030001", Options{}, []HeaderFacts{FactAPIKey, FactVersion, FactHeaderVersion}, "request Metadata(3) v1 (header cut short), 8 bytes, header v1"},
		{"half a correlation id", "00000006000300010000", Options{}, []HeaderFacts{FactAPIKey, FactVersion, FactHeaderVersion}, "request Metadata(3) v1 (header cut short), 10 bytes, header v1"},
		{"unknown key", "0000000d0fff0001000000070003616263", Options{}, []HeaderFacts{FactAPIKey, FactVersion, FactCorrelationID}, "request api_key 4095 v1 correlation_id 7, 17 bytes"},
		// The decoder stops at a version older than the spec's; the
		// correlation id after it is still the bytes', and no header
		// version is known.
		{"version older than the spec", "0000000e0013000000000007000361626300", Options{}, []HeaderFacts{FactAPIKey, FactVersion, FactCorrelationID}, "request CreateTopics(19) v0 correlation_id 7, 18 bytes"},
		// A negative size prefix stops the decoder before the header; the
		// facts at fixed offsets are still the bytes'.
		{"negative size, key and version", "ffffffff00030001", Options{}, []HeaderFacts{FactAPIKey, FactVersion}, "request Metadata(3) v1 (header cut short), 8 bytes"},
		{"negative size, whole header", "ffffffff0003000100000007000361626300", Options{}, []HeaderFacts{FactAPIKey, FactVersion, FactCorrelationID}, "request Metadata(3) v1 correlation_id 7, 18 bytes"},
		{"response, negative size", "ffffffff00000001", Options{Kind: schema.TypeResponse, API: metadata, Version: 12}, all, "response Metadata(3) v12 correlation_id 1, 8 bytes, header v1"},
		{"response, no correlation id", "000000020000", Options{Kind: schema.TypeResponse, API: metadata, Version: 1}, []HeaderFacts{FactAPIKey, FactVersion, FactHeaderVersion}, "response Metadata(3) v1 (header cut short), 6 bytes, header v0"},
		{"response without its API", "0000000400000009", Options{Kind: schema.TypeResponse}, []HeaderFacts{FactCorrelationID}, "response (API unknown: not given) correlation_id 9, 8 bytes"},
		{"response without its API, cut", "000000040000", Options{Kind: schema.TypeResponse}, nil, "response (API unknown: not given), 6 bytes"},
	} {
		b, err := hex.DecodeString(tc.hex)
		if err != nil {
			t.Fatal(err)
		}
		f := Decode(c, b, tc.opts)
		if f.OK() {
			t.Errorf("%s: decoded cleanly", tc.name)
		}
		for _, h := range all {
			if want := slices.Contains(tc.known, h); f.Known(h) != want {
				t.Errorf("%s: Known(%d) = %v, want %v", tc.name, h, !want, want)
			}
		}
		if s := f.Summary(); s != tc.summary {
			t.Errorf("%s: summary %q, want %q", tc.name, s, tc.summary)
		}
	}
}

// TestHeaderFactsOfUnpairedResponses: a response whose request was not
// captured gives its correlation id only when its bytes hold it, and one
// at a version newer than the spec (not decoded) gives no header version.
func TestHeaderFactsOfUnpairedResponses(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	for _, tc := range []struct {
		name  string
		f     *Frame
		known HeaderFacts
		not   HeaderFacts
	}{
		{"orphan of 8 bytes", Orphan(c, []byte{0, 0, 0, 4, 0, 0, 0, 9}, nil, Options{}), FactCorrelationID, FactAPIKey | FactVersion | FactHeaderVersion},
		{"orphan of 6 bytes", Orphan(c, []byte{0, 0, 0, 2, 0, 0}, nil, Options{}), 0, FactAPIKey | FactVersion | FactCorrelationID | FactHeaderVersion},
	} {
		if !tc.f.Known(tc.known) {
			t.Errorf("%s: not all of %b known", tc.name, tc.known)
		}
		for h := HeaderFacts(1); h <= FactHeaderVersion; h <<= 1 {
			if tc.not&h != 0 && tc.f.Known(h) {
				t.Errorf("%s: fact %b known", tc.name, h)
			}
		}
	}
	metadata, _ := c.Reg.API(3)
	f := Response(c, []byte{0, 0, 0, 5, 0, 0, 0, 9, 0}, metadata, metadata.Response.Valid.Hi+1, Options{})
	if f.Warning == "" || !f.Known(FactAPIKey|FactVersion|FactCorrelationID) || f.Known(FactHeaderVersion) || f.CorrelationID != 9 {
		t.Errorf("newer response: warning %q, facts known wrong (unread %b) or correlation id %d", f.Warning, f.Unread, f.CorrelationID)
	}
}
