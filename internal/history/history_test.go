package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/manifester/manifester/internal/release"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
	"github.com/manifester/manifester/internal/vectors"
)

// allReleases are the releases in ../shared/kafka-spec, oldest first:
// trunk (4.5.0-SNAPSHOT) is the newest.
var allReleases = []string{"3.9", "4.0", "4.1", "4.2", "4.3", "trunk"}

var (
	regMu sync.Mutex
	regs  = map[string]*schema.Registry{}
)

func registry(t testing.TB, label string) *schema.Registry {
	t.Helper()
	regMu.Lock()
	defer regMu.Unlock()
	if r, ok := regs[label]; ok {
		return r
	}
	r, err := schema.Load(testshared.Spec(t, label))
	if err != nil {
		t.Fatalf("loading %s: %v", label, err)
	}
	r.Label = label
	regs[label] = r
	return r
}

// build returns a history of the labelled releases (oldest first).
func build(t testing.TB, labels ...string) *History {
	t.Helper()
	var rels []*release.Release
	for _, l := range labels {
		rels = append(rels, &release.Release{Label: l, Reg: registry(t, l)})
	}
	h, err := New(rels)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestNewRejects(t *testing.T) {
	if _, err := New(nil); err == nil {
		t.Error("New(nil): no error")
	}
	r := registry(t, "4.3")
	if _, err := New([]*release.Release{{Label: "x", Reg: r}, {Label: "x", Reg: r}}); err == nil {
		t.Error("two releases labelled x: no error")
	}
	if _, err := New([]*release.Release{{Label: "x"}}); err == nil {
		t.Error("release without registry: no error")
	}
}

// From the spec files: ProduceRequest validVersions are 3.9 "0-11",
// 4.0 "3-12", 4.1-4.3 and trunk "3-13"; none is unstable.
func TestAcceptedProduce(t *testing.T) {
	h := build(t, allReleases...)
	cases := []struct {
		v    int16
		want Acceptance
	}{
		{2, Acceptance{First: "3.9", Last: "3.9", Releases: []string{"3.9"}}},
		{3, Acceptance{First: "3.9", Last: "trunk", Releases: allReleases, Current: true}},
		{12, Acceptance{First: "4.0", Last: "trunk", Releases: []string{"4.0", "4.1", "4.2", "4.3", "trunk"}, Current: true}},
		{13, Acceptance{First: "4.1", Last: "trunk", Releases: []string{"4.1", "4.2", "4.3", "trunk"}, Current: true}},
		{14, Acceptance{Releases: []string{}}},
	}
	for _, c := range cases {
		for _, kind := range []schema.MessageType{schema.TypeRequest, schema.TypeResponse} {
			got := h.Accepted(0, kind, c.v)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Produce v%d %s (-want +got):\n%s", c.v, kind, diff)
			}
		}
	}
}

// InitProducerIdRequest: 3.9 and 4.0 "0-5"; 4.1, 4.2, 4.3 and trunk "0-6"
// with "latestVersionUnstable": true. The response has no such flag.
func TestAcceptedUnstable(t *testing.T) {
	h := build(t, allReleases...)
	got := h.Accepted(22, schema.TypeRequest, 6)
	want := Acceptance{Releases: []string{}, Unstable: []string{"4.1", "4.2", "4.3", "trunk"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("InitProducerId v6 request (-want +got):\n%s", diff)
	}
	got = h.Accepted(22, schema.TypeResponse, 6)
	want = Acceptance{First: "4.1", Last: "trunk", Releases: []string{"4.1", "4.2", "4.3", "trunk"}, Current: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("InitProducerId v6 response (-want +got):\n%s", diff)
	}
}

// LeaderAndIsr (key 4) is "0-7" in 3.9 and "none" from 4.0 on; the same
// holds for StopReplica (5, "0-4"), UpdateMetadata (6, "0-8") and
// ControlledShutdown (7, "0-3").
func TestRemoved(t *testing.T) {
	h := build(t, allReleases...)
	type row struct {
		Key                   int16
		Name, Last, RemovedIn string
		Reserved              bool
		Lo, Hi                int16
	}
	var got []row
	for _, r := range h.Removed() {
		if r.Release.Label != r.LastRelease || r.API.Key != r.Key {
			t.Errorf("%s: release %s, API key %d do not match", r.Name, r.Release.Label, r.API.Key)
		}
		got = append(got, row{r.Key, r.Name, r.LastRelease, r.RemovedIn, r.Reserved, r.API.Request.Valid.Lo, r.API.Request.Valid.Hi})
	}
	want := []row{
		{4, "LeaderAndIsr", "3.9", "4.0", true, 0, 7},
		{5, "StopReplica", "3.9", "4.0", true, 0, 4},
		{6, "UpdateMetadata", "3.9", "4.0", true, 0, 8},
		{7, "ControlledShutdown", "3.9", "4.0", true, 0, 3},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Removed (-want +got):\n%s", diff)
	}
	if got := build(t, "4.0", "4.3").Removed(); len(got) != 0 {
		t.Errorf("Removed without 3.9 loaded = %+v, want none", got)
	}
	rel, api, ok := h.Defining(4)
	if !ok || rel.Label != "3.9" || api.Name != "LeaderAndIsr" {
		t.Errorf("Defining(4) = %v, %v, %v", rel, api, ok)
	}
	key, err := h.Lookup("LeaderAndIsr")
	if err != nil || key != 4 {
		t.Errorf("Lookup(LeaderAndIsr) = %d, %v", key, err)
	}
	if _, err := h.Lookup("NoSuchApi"); err == nil {
		t.Error("Lookup(NoSuchApi): no error")
	}
}

// LeaderAndIsr's table has rows v0..v7, each accepted by 3.9 only.
func TestTableRemovedAPI(t *testing.T) {
	h := build(t, allReleases...)
	rows := h.Table(4)
	if len(rows) != 8 || rows[0].Version != 0 || rows[7].Version != 7 {
		t.Fatalf("Table(4) has %d rows, want v0..v7", len(rows))
	}
	for _, r := range rows {
		want := Acceptance{First: "3.9", Last: "3.9", Releases: []string{"3.9"}}
		if diff := cmp.Diff(want, r.Request); diff != "" {
			t.Errorf("v%d request (-want +got):\n%s", r.Version, diff)
		}
	}
}

// Fetch 3.9 "0-17", 4.0 "4-17", 4.3 "4-18": the table spans v0..v18.
func TestTableSpansReleases(t *testing.T) {
	h := build(t, "3.9", "4.0", "4.3")
	rows := h.Table(1)
	if len(rows) != 19 || rows[0].Version != 0 || rows[18].Version != 18 {
		t.Fatalf("Table(1) has %d rows", len(rows))
	}
	if r := rows[3].Request; r.First != "3.9" || r.Last != "3.9" || r.Current {
		t.Errorf("Fetch v3: %+v, want 3.9 only", r)
	}
	if r := rows[18].Request; r.First != "4.3" || r.Last != "4.3" || !r.Current {
		t.Errorf("Fetch v18: %+v, want 4.3 only", r)
	}
}

func TestReleaseDiffs(t *testing.T) {
	h := build(t, allReleases...)
	ds := h.ReleaseDiffs()
	if len(ds) != len(allReleases)-1 {
		t.Fatalf("%d diffs, want %d", len(ds), len(allReleases)-1)
	}
	for i, d := range ds {
		if d.From != allReleases[i] || d.To != allReleases[i+1] {
			t.Errorf("diff %d is %s -> %s", i, d.From, d.To)
		}
	}
	if len(ds[0].Removed) != 4 {
		t.Errorf("3.9 -> 4.0 removes %d APIs, want 4", len(ds[0].Removed))
	}
	if _, err := h.ReleaseDiff("3.9", "5.0"); err == nil {
		t.Error("ReleaseDiff to an unloaded release: no error")
	}
	if _, _, ok := h.ReleaseFor(0, 2, 13); ok {
		t.Error("ReleaseFor(Produce, 2, 13): no release has both")
	}
	if r, _, ok := h.ReleaseFor(0, 3, 12); !ok || r.Label != "trunk" {
		t.Errorf("ReleaseFor(Produce, 3, 12) = %v, want trunk, the newest", r)
	}
}

type vkey struct {
	Name    string
	Version int16
	Kind    string
}

func index(vs []vectors.Vector) map[vkey]vectors.Vector {
	m := map[vkey]vectors.Vector{}
	for _, v := range vs {
		m[vkey{v.Name, v.Version, v.Kind}] = v
	}
	return m
}

// Vectors follow each release's ranges: Produce v0 (3.9 "0-11") is only
// in 3.9's, Produce v13 (4.3 "3-13") only in 4.3's, LeaderAndIsr only in
// 3.9's. HeartbeatRequest and HeartbeatResponse differ between 3.9 and
// 4.3 only in the request's listeners, so their vectors are equal.
func TestVectorsPerRelease(t *testing.T) {
	h := build(t, "3.9", "4.3")
	old, err := h.Vectors("3.9")
	if err != nil {
		t.Fatal(err)
	}
	cur, err := h.Vectors("4.3")
	if err != nil {
		t.Fatal(err)
	}
	o, c := index(old), index(cur)
	for _, k := range []vkey{{"Produce", 0, "request"}, {"Produce", 2, "response"}, {"LeaderAndIsr", 7, "request"}} {
		if _, ok := o[k]; !ok {
			t.Errorf("3.9 vectors lack %v", k)
		}
		if _, ok := c[k]; ok {
			t.Errorf("4.3 vectors have %v", k)
		}
	}
	for _, k := range []vkey{{"Produce", 13, "request"}, {"Fetch", 18, "response"}} {
		if _, ok := c[k]; !ok {
			t.Errorf("4.3 vectors lack %v", k)
		}
		if _, ok := o[k]; ok {
			t.Errorf("3.9 vectors have %v", k)
		}
	}
	for v := int16(0); v <= 4; v++ {
		for _, kind := range []string{"request", "response"} {
			k := vkey{"Heartbeat", v, kind}
			if o[k] != c[k] || o[k].Hex == "" {
				t.Errorf("Heartbeat v%d %s: 3.9 %+v, 4.3 %+v", v, kind, o[k], c[k])
			}
		}
	}
	if _, err := h.Vectors("4.1"); err == nil {
		t.Error("vectors of an unloaded release: no error")
	}
}

func TestVectorLines(t *testing.T) {
	h := build(t, "4.0")
	want, err := h.Vectors("4.0")
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.VectorLines("4.0")
	if err != nil {
		t.Fatal(err)
	}
	var got []vectors.Vector
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v vectors.Vector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("line %d: %v", len(got)+1, err)
		}
		got = append(got, v)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("VectorLines does not parse back to Vectors (-want +got):\n%s", diff)
	}
}

// API page data: LeaderAndIsr is built from 3.9 and marked removed in 4.0,
// with the v6 -> v7 change adding isKRaftController ("versions": "7+" in
// 3.9's LeaderAndIsrRequest). DescribeAcls comes from the newest, trunk
// ("1-3").
func TestAPIHistory(t *testing.T) {
	h := build(t, allReleases...)
	ah, err := h.API(4)
	if err != nil {
		t.Fatal(err)
	}
	if ah.Name != "LeaderAndIsr" || ah.Release != "3.9" || !ah.Removed || ah.RemovedIn != "4.0" || len(ah.Rows) != 8 || len(ah.Changes) != 7 {
		t.Fatalf("LeaderAndIsr history: %+v", ah)
	}
	last := ah.Changes[6]
	if last.From != 6 || last.To != 7 || len(last.Request.Structs) != 1 || len(last.Request.Structs[0].Added) != 1 ||
		last.Request.Structs[0].Added[0].Name != "isKRaftController" {
		t.Errorf("LeaderAndIsr v6 -> v7: %+v", last.Request.Structs)
	}
	ah, err = h.API(29)
	if err != nil {
		t.Fatal(err)
	}
	if ah.Release != "trunk" || ah.Removed || len(ah.Changes) != 2 || ah.Changes[0].From != 1 || ah.Changes[1].To != 3 {
		t.Errorf("DescribeAcls history: release %s removed %v, %d changes", ah.Release, ah.Removed, len(ah.Changes))
	}
	// DescribeAcls v0 is only in 3.9 (3.9 "0-3", 4.0+ "1-3").
	if r := ah.Rows[0]; r.Version != 0 || r.Request.First != "3.9" || r.Request.Last != "3.9" {
		t.Errorf("DescribeAcls v0 row %+v", r)
	}
	if _, err := h.API(999); err == nil {
		t.Error("API(999): no error")
	}
}
