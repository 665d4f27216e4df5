package codec_test

import (
	"slices"
	"strings"
	"testing"
)

// TestKmsgTrunkNewProtocol checks that the kmsg comparison covers what
// trunk adds over 4.3 (new API keys such as StreamsGroupTopologyDescriptionUpdate
// and UnregisterController, new versions such as ApiVersions v5,
// TxnOffsetCommit v6, DeleteGroups v3): every triple trunk has and 4.3 has
// not is either compared byte for byte with kmsg or skipped because kmsg
// v1.15.1 does not know the key or version, and the skips are counted and
// said. A skip for any other reason (a field kmsg lacks, a layout that
// differs) fails.
func TestKmsgTrunkNewProtocol(t *testing.T) {
	trunk, old := loadRelease(t, "trunk"), loadRelease(t, "4.3")
	inOld := map[string]bool{}
	for _, tr := range triples(old.reg) {
		inOld[tr.String()] = true
	}
	var fresh []string
	for _, tr := range triples(trunk.reg) {
		if !inOld[tr.String()] {
			fresh = append(fresh, tr.String())
		}
	}
	if len(fresh) < 14 {
		t.Fatalf("trunk has only %d triples 4.3 has not (%v); want at least the 14 of APIs 93 and 94 and the new versions", len(fresh), fresh)
	}
	_, skipped := compareSmallest(t, trunk)
	why := map[string]string{}
	for _, s := range skipped {
		name, reason, _ := strings.Cut(s, ": ")
		why[name] = reason
	}
	compared, unknown := 0, 0
	for _, name := range fresh {
		reason, skip := why[name]
		switch {
		case !skip:
			compared++
		case strings.HasPrefix(reason, "kmsg's highest version is") || strings.HasPrefix(reason, "kmsg has no "):
			unknown++
			t.Logf("skipped %s: %s (kmsg v1.15.1 does not know it)", name, reason)
		default:
			t.Errorf("%s is new in trunk and was skipped: %s", name, reason)
		}
	}
	t.Logf("trunk: %d triples new since 4.3: %d compared with kmsg, %d skipped as unknown to kmsg", len(fresh), compared, unknown)
	if compared == 0 {
		t.Error("none of trunk's new triples was compared with kmsg")
	}
	for _, want := range []string{
		"StreamsGroupTopologyDescriptionUpdate(93) v0 request", "UnregisterController(94) v0 response",
		"ApiVersions(18) v5 request", "TxnOffsetCommit(28) v6 response", "DeleteGroups(42) v3 request",
	} {
		if _, skip := why[want]; skip || !slices.Contains(fresh, want) {
			t.Errorf("%s: new in trunk %v, skipped %v; want it compared", want, slices.Contains(fresh, want), skip)
		}
	}
}
