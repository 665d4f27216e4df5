package diff

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
)

var (
	loadMu sync.Mutex
	loaded = map[string]*codec.Codec{}
)

// load returns the codec of a release, loading it once per test binary.
func load(t testing.TB, release string) *codec.Codec {
	t.Helper()
	loadMu.Lock()
	defer loadMu.Unlock()
	if c, ok := loaded[release]; ok {
		return c
	}
	reg, err := schema.Load(testshared.Spec(t, release))
	if err != nil {
		t.Fatalf("loading %s: %v", release, err)
	}
	reg.Label = release
	c := codec.New(reg)
	loaded[release] = c
	return c
}

// specComment returns the text of the // comment on line n of a Kafka spec
// file in ../shared: the tests compare extracted comments with Kafka's own
// file at test time, so no Kafka sentence is written into this repository.
func specComment(t *testing.T, release, file string, n int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testshared.Spec(t, release), file))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	if n < 1 || n > len(lines) {
		t.Fatalf("%s has %d lines, not %d", file, len(lines), n)
	}
	_, text, ok := strings.Cut(lines[n-1], "//")
	if !ok {
		t.Fatalf("%s:%d has no comment: %q", file, n, lines[n-1])
	}
	return strings.TrimSpace(text)
}

func versionDiff(t *testing.T, release, name string, a, b int16) *VersionDiff {
	t.Helper()
	c := load(t, release)
	api, ok := c.Reg.APIByName(name)
	if !ok {
		t.Fatalf("%s has no API %s", release, name)
	}
	d, err := Versions(c, api, a, b)
	if err != nil {
		t.Fatalf("Versions(%s, %d, %d): %v", name, a, b, err)
	}
	return d
}

func commentTexts(cs []Comment) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Text)
	}
	return out
}

// The expectations below come from reading the spec files in
// ../shared/kafka-spec, not from running this code.

// DescribeAclsRequest/Response 4.3: validVersions 1-3, flexibleVersions 2+;
// every field is "0+" or "1+", and the only comment about version 3 is
// the one on line 24 of both files (its text is read from ../shared). Nothing
// changes on the wire: v3 only allows a new enum value.
func TestDescribeAclsV2V3(t *testing.T) {
	d := versionDiff(t, "4.3", "DescribeAcls", 2, 3)
	for _, md := range []MessageDiff{d.Request, d.Response} {
		if len(md.Structs) != 0 {
			t.Errorf("%s: struct changes %+v, want none", md.Message, md.Structs)
		}
		if md.Flexible != (BoolPair{true, true}) {
			t.Errorf("%s: flexible %+v, want true at both", md.Message, md.Flexible)
		}
		if md.Size.Changed() {
			t.Errorf("%s: size %+v, want unchanged", md.Message, md.Size)
		}
		want := []Comment{{Versions: schema.Versions{Lo: 3, Hi: 3}, Lo: 3, Hi: 3, Text: specComment(t, "4.3", md.Message+".json", 24), Line: 24}}
		if diff := cmp.Diff(want, md.Comments); diff != "" {
			t.Errorf("%s comments (-want +got):\n%s", md.Message, diff)
		}
	}
	if d.Request.HeaderVersion != (IntPair{2, 2}) || d.Response.HeaderVersion != (IntPair{1, 1}) {
		t.Errorf("header versions: request %+v response %+v, want 2,2 and 1,1", d.Request.HeaderVersion, d.Response.HeaderVersion)
	}
}

// FetchRequest 4.3: Topics[].Topic is "0-12" and Topics[].TopicId "13+";
// ForgottenTopicsData[].Topic "7-12" and .TopicId "13+". FetchResponse:
// Responses[].Topic "0-12", Responses[].TopicId "13+". Both flexible
// ("12+"). The smallest instance has one element per array, so each swap
// of an empty compact string (1 byte) for a uuid (16 bytes) adds 15 bytes:
// +30 for the request, +15 for the response.
func TestFetchV12V13(t *testing.T) {
	d := versionDiff(t, "4.3", "Fetch", 12, 13)
	swap := func(path, strct, topicVersions string) StructDiff {
		return StructDiff{
			Path: path, Struct: strct,
			Added:   []FieldInfo{{Name: "TopicId", Type: "uuid", Versions: "13+"}},
			Removed: []FieldInfo{{Name: "Topic", Type: "string", Versions: topicVersions}},
		}
	}
	wantReq := []StructDiff{swap("Topics", "FetchTopic", "0-12"), swap("ForgottenTopicsData", "ForgottenTopic", "7-12")}
	if diff := cmp.Diff(wantReq, d.Request.Structs, ignoreAbout); diff != "" {
		t.Errorf("request structs (-want +got):\n%s", diff)
	}
	wantResp := []StructDiff{swap("Responses", "FetchableTopicResponse", "0-12")}
	if diff := cmp.Diff(wantResp, d.Response.Structs, ignoreAbout); diff != "" {
		t.Errorf("response structs (-want +got):\n%s", diff)
	}
	if got := d.Request.Size.Delta(); got != 30 {
		t.Errorf("request size delta %d, want +30", got)
	}
	if got := d.Response.Size.Delta(); got != 15 {
		t.Errorf("response size delta %d, want +15", got)
	}
	wantReqComments := []string{specComment(t, "4.3", "FetchRequest.json", 49)}
	if diff := cmp.Diff(wantReqComments, commentTexts(d.Request.Comments)); diff != "" {
		t.Errorf("request comments (-want +got):\n%s", diff)
	}
	wantRespComments := []string{specComment(t, "4.3", "FetchResponse.json", 42)}
	if diff := cmp.Diff(wantRespComments, commentTexts(d.Response.Comments)); diff != "" {
		t.Errorf("response comments (-want +got):\n%s", diff)
	}
}

// ignoreAbout leaves the fields' about texts out of comparisons.
var ignoreAbout = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".About" }, cmp.Ignore())

// ApiVersions 4.3: flexibleVersions "3+" on both sides. The request header
// goes from v1 to v2 at the flexible switch, while the response header
// stays v0 (Kafka's exception: clients must read the response header
// before they know the broker's versions). The request adds
// ClientSoftwareName and ClientSoftwareVersion ("3+"); the response adds
// the tagged fields SupportedFeatures (tag 0), FinalizedFeaturesEpoch
// (tag 1, default -1), FinalizedFeatures (tag 2) and ZkMigrationReady
// (tag 3, default false).
func TestApiVersionsFlexibleSwitch(t *testing.T) {
	d := versionDiff(t, "4.3", "ApiVersions", 2, 3)
	if d.Request.Flexible != (BoolPair{false, true}) || d.Response.Flexible != (BoolPair{false, true}) {
		t.Errorf("flexible: request %+v response %+v, want false->true", d.Request.Flexible, d.Response.Flexible)
	}
	if d.Request.HeaderVersion != (IntPair{1, 2}) {
		t.Errorf("request header %+v, want 1->2", d.Request.HeaderVersion)
	}
	if d.Response.HeaderVersion != (IntPair{0, 0}) {
		t.Errorf("response header %+v, want 0->0", d.Response.HeaderVersion)
	}
	if len(d.Request.Structs) != 1 || len(d.Request.Structs[0].Added) != 2 ||
		d.Request.Structs[0].Added[0].Name != "ClientSoftwareName" || d.Request.Structs[0].Added[1].Name != "ClientSoftwareVersion" {
		t.Errorf("request structs %+v, want ClientSoftwareName and ClientSoftwareVersion added", d.Request.Structs)
	}
	if len(d.Response.Structs) != 1 {
		t.Fatalf("response structs %+v, want one", d.Response.Structs)
	}
	type tagged struct {
		Name, Default string
		Tag           int32
	}
	var got []tagged
	for _, f := range d.Response.Structs[0].Added {
		if f.Tag == nil {
			t.Errorf("added response field %s is not tagged", f.Name)
			continue
		}
		got = append(got, tagged{f.Name, f.Default, *f.Tag})
	}
	want := []tagged{{"SupportedFeatures", "", 0}, {"FinalizedFeaturesEpoch", "-1", 1}, {"FinalizedFeatures", "", 2}, {"ZkMigrationReady", "false", 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("response tagged fields (-want +got):\n%s", diff)
	}
	// v2 -> v3 request: "Versions 0 through 2 ... are the same." is about
	// 0-2 and so is not between; the v3 comment is.
	if got := commentTexts(d.Request.Comments); len(got) != 1 || got[0] != specComment(t, "4.3", "ApiVersionsRequest.json", 23) {
		t.Errorf("request comments %q", got)
	}
}

// ProduceRequest 3.9 (validVersions 0-11): TransactionalId is "versions":
// "3+", "nullableVersions": "3+", "default": "null". Version 3 is the first
// version 4.0 and later still accept (see the release tests).
func TestProduceV2V3In39(t *testing.T) {
	d := versionDiff(t, "3.9", "Produce", 2, 3)
	want := []StructDiff{{Path: "", Struct: "ProduceRequest", Added: []FieldInfo{{
		Name: "TransactionalId", Type: "string", Versions: "3+", Nullable: true, Default: "null",
	}}}}
	if diff := cmp.Diff(want, d.Request.Structs, ignoreAbout); diff != "" {
		t.Errorf("request structs (-want +got):\n%s", diff)
	}
	// A nullable string that is empty in the smallest instance: int16
	// length 0, two bytes.
	if got := d.Request.Size.Delta(); got != 2 {
		t.Errorf("request size delta %d, want +2", got)
	}
	if len(d.Response.Structs) != 0 {
		t.Errorf("response structs %+v, want none", d.Response.Structs)
	}
}

// MetadataRequest 4.3: Topics is "nullableVersions": "1+", so from v0 to
// v1 the field changes from not nullable to nullable.
func TestMetadataNullableChange(t *testing.T) {
	d := versionDiff(t, "4.3", "Metadata", 0, 1)
	var found bool
	for _, sd := range d.Request.Structs {
		for _, fc := range sd.Changed {
			if sd.Path == "" && fc.Name == "Topics" {
				found = true
				want := []Change{{Property: "nullable", From: "false", To: "true", Detail: "nullableVersions 1+"}}
				if diff := cmp.Diff(want, fc.Changes); diff != "" {
					t.Errorf("Topics changes (-want +got):\n%s", diff)
				}
			}
		}
	}
	if !found {
		t.Errorf("no change reported for Topics: %+v", d.Request.Structs)
	}
}

func TestVersionsRejectsInvalidVersion(t *testing.T) {
	c := load(t, "4.3")
	api, _ := c.Reg.APIByName("Produce")
	if _, err := Versions(c, api, 2, 3); err == nil {
		t.Fatal("Produce v2 in 4.3 (validVersions 3-13): no error")
	}
	if d, err := Previous(c, api, 3); d != nil || err != nil {
		t.Errorf("Previous of the lowest version = %v, %v; want nil, nil", d, err)
	}
	d, err := Previous(c, api, 4)
	if err != nil || d.From != 3 || d.To != 4 {
		t.Errorf("Previous(4) = %+v, %v; want 3 -> 4", d, err)
	}
}

// fieldChanges on hand-built fields: tagged and tag, default, type and a
// field's own flexibleVersions.
func TestFieldChanges(t *testing.T) {
	str := &schema.Type{Kind: schema.KindString, Name: "string"}
	i32 := &schema.Type{Kind: schema.KindInt32, Name: "int32"}
	a := &schema.Field{Name: "X", Type: str, Versions: schema.All, Nullable: schema.None, Tagged: schema.Versions{Lo: 2, Hi: schema.MaxVersion}, Tag: 1}
	b := &schema.Field{Name: "X", Type: i32, Versions: schema.All, Nullable: schema.None, Tagged: schema.Versions{Lo: 2, Hi: schema.MaxVersion}, Tag: 4,
		Default: schema.Default{Text: "7"}, HasFlexible: true, Flexible: schema.Versions{Lo: 3, Hi: schema.MaxVersion}}
	got := fieldChanges(a, 1, a, 2)
	want := []Change{{Property: "tagged", From: "false", To: "true", Detail: "taggedVersions 2+"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("same field, v1 -> v2 (-want +got):\n%s", diff)
	}
	got = fieldChanges(a, 2, b, 2)
	want = []Change{
		{Property: "type", From: "string", To: "int32"},
		{Property: "tag", From: "1", To: "4"},
		{Property: "default", From: "(implicit)", To: "7"},
		{Property: "flexibleVersions", From: "(message's)", To: "3+"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("two fields at v2 (-want +got):\n%s", diff)
	}
}

// FetchRequest 4.3: Topics[].Partitions[].CurrentLeaderEpoch is "9+",
// default -1; the response is "the same as version 8". Nested structs are
// matched by field path.
func TestFetchV8V9Nested(t *testing.T) {
	d := versionDiff(t, "4.3", "Fetch", 8, 9)
	want := []StructDiff{{Path: "Topics.Partitions", Struct: "FetchPartition", Added: []FieldInfo{{
		Name: "CurrentLeaderEpoch", Type: "int32", Versions: "9+", Default: "-1",
	}}}}
	if diff := cmp.Diff(want, d.Request.Structs, ignoreAbout); diff != "" {
		t.Errorf("request structs (-want +got):\n%s", diff)
	}
	if got := d.Request.Size.Delta(); got != 4 {
		t.Errorf("request size delta %d, want +4 (one int32)", got)
	}
	if len(d.Response.Structs) != 0 || d.Response.Size.Changed() {
		t.Errorf("response: %+v, size %+v; want no change", d.Response.Structs, d.Response.Size)
	}
	if got := commentTexts(d.Response.Comments); len(got) != 1 || got[0] != specComment(t, "4.3", "FetchResponse.json", 35) {
		t.Errorf("response comments %q", got)
	}
}

// A reversed diff swaps added and removed.
func TestReversedDiff(t *testing.T) {
	fwd := versionDiff(t, "4.3", "Fetch", 12, 13)
	rev := versionDiff(t, "4.3", "Fetch", 13, 12)
	if len(fwd.Request.Structs) != len(rev.Request.Structs) {
		t.Fatalf("forward %d structs, reverse %d", len(fwd.Request.Structs), len(rev.Request.Structs))
	}
	for i := range fwd.Request.Structs {
		f, r := fwd.Request.Structs[i], rev.Request.Structs[i]
		if !cmp.Equal(f.Added, r.Removed) || !cmp.Equal(f.Removed, r.Added) {
			t.Errorf("%s: forward %+v, reverse %+v", f.Path, f, r)
		}
	}
	if rev.Request.Size.Delta() != -fwd.Request.Size.Delta() {
		t.Errorf("size deltas %d and %d", fwd.Request.Size.Delta(), rev.Request.Size.Delta())
	}
	if !cmp.Equal(fwd.Request.Comments, rev.Request.Comments) {
		t.Errorf("comments differ: %+v vs %+v", fwd.Request.Comments, rev.Request.Comments)
	}
}

// ControlledShutdownRequest 3.9 ("0-3", flexible "3+"): v0 is sent with
// request header v0 (no client id), v1 with header v1, Kafka's second
// header exception.
func TestControlledShutdownHeader(t *testing.T) {
	d := versionDiff(t, "3.9", "ControlledShutdown", 0, 1)
	if d.Request.HeaderVersion != (IntPair{0, 1}) {
		t.Errorf("request header %+v, want 0 -> 1", d.Request.HeaderVersion)
	}
	// Header v1 adds the nullable client id: an int16 length, 0 for "".
	if got := d.Request.Size.Delta(); got != 2 {
		t.Errorf("request size delta %d, want +2", got)
	}
}
