package proxy

import (
	"slices"
	"testing"
)

// TestAdvertisingAPIs pins which 4.3 responses carry broker addresses
// (struct with Host, Port and a node id), read from the specs: every API
// whose response spec has such a struct, and none of the ones whose Host
// fields are something else (ACL hosts, Kafka Streams user endpoints,
// quorum listener names).
func TestAdvertisingAPIs(t *testing.T) {
	c := testCodec(t)
	var got []string
	for _, api := range AdvertisingAPIs(c.Reg) {
		got = append(got, api.Name)
	}
	for _, want := range []string{"Produce", "Fetch", "Metadata", "FindCoordinator", "DescribeCluster", "ShareFetch",
		"ShareAcknowledge", "Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "FetchSnapshot", "UpdateRaftVoter"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s responses advertise brokers, but are not rewritten (got %v)", want, got)
		}
	}
	for _, not := range []string{"DescribeAcls", "DeleteAcls", "StreamsGroupHeartbeat", "StreamsGroupDescribe", "DescribeQuorum", "ApiVersions"} {
		if slices.Contains(got, not) {
			t.Errorf("%s responses hold no broker address, but would be rewritten", not)
		}
	}
}

// TestHoldOnlyVersionsWithAddresses: only the versions of a response that
// carry address fields are held whole; the others stream through.
func TestHoldOnlyVersionsWithAddresses(t *testing.T) {
	c := testCodec(t)
	hold := holdTable(c.Reg)
	for _, tc := range []struct {
		key, version int16
		want         bool
	}{
		{0, 9, false}, {0, 10, true}, // Produce NodeEndpoints: v10+
		{1, 15, false}, {1, 16, true}, // Fetch NodeEndpoints: v16+
		{3, 0, true}, {3, 13, true}, // Metadata brokers: always
		{10, 0, true}, {10, 4, true}, // FindCoordinator: top level v0-3, Coordinators v4+
		{12, 4, false}, // Heartbeat: never
	} {
		if got := hold[holdKey{tc.key, tc.version}]; got != tc.want {
			t.Errorf("API %d v%d: held %v, want %v", tc.key, tc.version, got, tc.want)
		}
	}
}
