package diff

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func findChange(d *ReleaseDiff, name string) *APIChange {
	for i := range d.Changed {
		if d.Changed[i].Name == name {
			return &d.Changed[i]
		}
	}
	return nil
}

// 3.9 -> 4.0, from the spec files: LeaderAndIsr (key 4, 3.9 "0-7"),
// StopReplica (5, "0-4"), UpdateMetadata (6, "0-8") and ControlledShutdown
// (7, "0-3") all become "validVersions": "none" in 4.0. Fetch goes from
// "0-17" to "4-17" and Produce from "0-11" to "3-12". No API is added.
func TestRelease39To40(t *testing.T) {
	d := Releases(load(t, "3.9").Reg, load(t, "4.0").Reg)
	wantRemoved := []APIRef{
		{Key: 4, Name: "LeaderAndIsr", Versions: "0-7", Reserved: true},
		{Key: 5, Name: "StopReplica", Versions: "0-4", Reserved: true},
		{Key: 6, Name: "UpdateMetadata", Versions: "0-8", Reserved: true},
		{Key: 7, Name: "ControlledShutdown", Versions: "0-3", Reserved: true},
	}
	if diff := cmp.Diff(wantRemoved, d.Removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	if len(d.Added) != 0 {
		t.Errorf("added %+v, want none", d.Added)
	}
	fetch := findChange(d, "Fetch")
	if fetch == nil {
		t.Fatal("Fetch not in the changes")
	}
	if fetch.Lowest != "raised" || fetch.Valid != (StringPair{"0-17", "4-17"}) ||
		!cmp.Equal(fetch.RemovedVersions, []string{"0-3"}) || len(fetch.NewVersions) != 0 {
		t.Errorf("Fetch change %+v, want 0-17 -> 4-17, baseline raised, v0-3 removed", fetch)
	}
	produce := findChange(d, "Produce")
	if produce == nil || !cmp.Equal(produce.RemovedVersions, []string{"0-2"}) || !cmp.Equal(produce.NewVersions, []string{"12"}) {
		t.Errorf("Produce change %+v, want v0-2 removed and v12 new", produce)
	}
	// Heartbeat's request lists ["zkBroker", "broker"] in 3.9 and
	// ["broker"] in 4.0; its versions stay 0-4.
	hb := findChange(d, "Heartbeat")
	if hb == nil || !cmp.Equal(hb.ListenersRemoved, []string{"zkBroker"}) || len(hb.ListenersAdded) != 0 || hb.Lowest != "" {
		t.Errorf("Heartbeat change %+v, want only listener zkBroker removed", hb)
	}
}

// Produce across the 4.0 baseline: 3.9 "0-11", 4.3 "3-13". InitProducerId:
// 3.9 "0-5", 4.3 "0-6" with latestVersionUnstable, so v6 is new and
// unstable.
func TestRelease39To43(t *testing.T) {
	d := Releases(load(t, "3.9").Reg, load(t, "4.3").Reg)
	produce := findChange(d, "Produce")
	want := &APIChange{Key: 0, Name: "Produce", Valid: StringPair{"0-11", "3-13"}, Lowest: "raised",
		RemovedVersions: []string{"0-2"}, NewVersions: []string{"12-13"}, ListenersRemoved: []string{"zkBroker"}}
	if diff := cmp.Diff(want, produce); diff != "" {
		t.Errorf("Produce (-want +got):\n%s", diff)
	}
	ipid := findChange(d, "InitProducerId")
	if ipid == nil || ipid.Unstable == nil || *ipid.Unstable != (StringPair{"", "6"}) || !cmp.Equal(ipid.NewVersions, []string{"6"}) {
		t.Errorf("InitProducerId %+v, want new v6, unstable none -> 6", ipid)
	}
	var unstable bool
	for _, u := range d.Unstable {
		if u.Name == "InitProducerId" && u.Versions == "6" {
			unstable = true
		}
	}
	if !unstable {
		t.Errorf("InitProducerId v6 not among 4.3's unstable versions %+v", d.Unstable)
	}
}

func TestReleaseSame(t *testing.T) {
	r := load(t, "4.3").Reg
	d := Releases(r, r)
	if len(d.Added)+len(d.Removed)+len(d.Changed) != 0 {
		t.Errorf("diff of a release with itself: %+v", d)
	}
}

// Key 74 is ListClientMetricsResourcesRequest ("0") in 4.0 and
// ListConfigResourcesRequest ("0-1") in 4.1. The v0 response renames the
// body's ClientMetricsResources ([]ClientMetricsResource) to
// ConfigResources ([]ConfigResource) and its Name to ResourceName: the
// same bytes under new names, which the diff shows as renames.
func TestReleaseRename(t *testing.T) {
	d := Releases(load(t, "4.0").Reg, load(t, "4.1").Reg)
	c := findChange(d, "ListConfigResources")
	if c == nil {
		t.Fatal("key 74 not among the changes")
	}
	redefined := c.Redefined
	c.Redefined = nil
	want := &APIChange{Key: 74, Name: "ListConfigResources", FormerName: "ListClientMetricsResources",
		Valid: StringPair{"0", "0-1"}, NewVersions: []string{"1"}}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("key 74 (-want +got):\n%s", diff)
	}
	if len(redefined) != 1 || redefined[0].Version != 0 || redefined[0].Request != nil {
		t.Fatalf("redefined %+v, want the v0 response only", redefined)
	}
	// The array and its struct's one field are renamed, at v0 the same
	// bytes: changes of name (and the array's element type), nothing
	// removed or added.
	want2 := []StructDiff{
		{Path: "", Struct: "ListConfigResourcesResponse", Changed: []FieldChange{{Name: "ConfigResources", Changes: []Change{
			{Property: "name", From: "ClientMetricsResources", To: "ConfigResources"},
			{Property: "type", From: "[]ClientMetricsResource", To: "[]ConfigResource"}}}}},
		{Path: "ConfigResources", Struct: "ConfigResource", Changed: []FieldChange{{Name: "ResourceName", Changes: []Change{
			{Property: "name", From: "Name", To: "ResourceName"}}}}},
	}
	if diff := cmp.Diff(want2, redefined[0].Response, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("v0 response (-want +got):\n%s", diff)
	}
}

// VoteRequest: 3.9 names Topics[].Partitions[] fields CandidateEpoch and
// CandidateId ("0+"), 4.0 names them ReplicaEpoch and ReplicaId, at the
// same places with the same types: renames, not fields removed and added.
func TestReleaseRedefinedVote(t *testing.T) {
	d := Releases(load(t, "3.9").Reg, load(t, "4.0").Reg)
	c := findChange(d, "Vote")
	if c == nil || len(c.Redefined) == 0 || c.Redefined[0].Version != 0 {
		t.Fatalf("Vote %+v, want v0 redefined", c)
	}
	var names []string
	for _, sd := range c.Redefined[0].Request {
		if sd.Path != "Topics.Partitions" {
			continue
		}
		for _, f := range sd.Removed {
			names = append(names, "-"+f.Name)
		}
		for _, f := range sd.Added {
			names = append(names, "+"+f.Name)
		}
		for _, fc := range sd.Changed {
			for _, ch := range fc.Changes {
				names = append(names, "~"+fc.Name+" "+ch.Property+" "+ch.From+" "+ch.To)
			}
		}
	}
	want := []string{"~ReplicaEpoch name CandidateEpoch ReplicaEpoch", "~ReplicaId name CandidateId ReplicaId"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("Vote v0 Topics.Partitions (-want +got):\n%s", diff)
	}
}
