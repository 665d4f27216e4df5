package annotate

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testshared"
)

// TestDecodedNotes decodes an ApiVersions response built by kmsg and checks
// the notes on its error code, API keys and finalized-features epoch.
func TestDecodedNotes(t *testing.T) {
	reg, err := schema.Load(testshared.Spec(t, "4.3"))
	if err != nil {
		t.Fatal(err)
	}
	c := codec.New(reg)
	c.Annotate = New(reg)
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 3
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	for _, k := range []int16{0, 18, 92, 999} {
		ak := kmsg.NewApiVersionsResponseApiKey()
		ak.ApiKey = k
		resp.ApiKeys = append(resp.ApiKeys, ak)
	}
	api, _ := reg.Lookup("ApiVersions")
	_, root, err := c.DecodeBody(api.Response, 3, resp.AppendTo(nil), codec.Options{Spans: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	root.Walk(func(n *span.Node, _ int) {
		if n.IsLeaf() {
			got[n.Path()] = n.ValueText()
		}
	})
	for path, want := range map[string]string{
		"ErrorCode":                    "= 35 (UNSUPPORTED_VERSION)",
		"ApiKeys.ApiVersion[0].ApiKey": "= 0 (Produce)",
		"ApiKeys.ApiVersion[1].ApiKey": "= 18 (ApiVersions)",
		"ApiKeys.ApiVersion[2].ApiKey": "= 92 (DeleteShareGroupOffsets)",
		"ApiKeys.ApiVersion[3].ApiKey": "= 999 (unknown API)",
	} {
		if got[path] != want {
			t.Errorf("%s: got %q, want %q", path, got[path], want)
		}
	}
}

func TestNames(t *testing.T) {
	for code, want := range map[int16]string{0: "NONE", -1: "UNKNOWN_SERVER_ERROR", 3: "UNKNOWN_TOPIC_OR_PARTITION", 32000: "unknown error code"} {
		if got := ErrorName(code); got != want {
			t.Errorf("ErrorName(%d) = %q, want %q", code, got, want)
		}
	}
	f := &schema.Field{Name: "LogAppendTimeMs", Type: &schema.Type{Kind: schema.KindInt64}}
	n := &span.Node{Val: span.ValInt, Int: 1700000000000}
	Annotate(f, n)
	if n.Note != "2023-11-14T22:13:20.000Z" {
		t.Errorf("timestamp note %q", n.Note)
	}
	f.Name = "RetentionTimeMs"
	n = &span.Node{Val: span.ValInt, Int: 1700000000000}
	Annotate(f, n)
	if n.Note != "" {
		t.Errorf("a retention time got a date: %q", n.Note)
	}
}
