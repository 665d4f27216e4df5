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
