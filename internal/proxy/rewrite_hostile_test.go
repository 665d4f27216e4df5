package proxy

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/testframes"
)

// TestNoNodePlaceholderLeftAlone: a FindCoordinator error
// (COORDINATOR_NOT_AVAILABLE, common while a group coordinator loads)
// carries Kafka's "no node" placeholder, node -1 at "" port -1. It is no
// broker address: the proxy opens no listener for it, forwards the
// response as the broker sent it, and does not take its empty host for a
// broker address shorter than the proxy's (which stops tail holding).
func TestNoNodePlaceholderLeftAlone(t *testing.T) {
	up := answerBroker(t, func(key int16, corr int32) []byte {
		r := kmsg.NewPtrFindCoordinatorResponse()
		r.Version = 3
		r.ErrorCode, r.NodeID, r.Host, r.Port = 15, -1, "", -1
		return testframes.Response(r, corr)
	})
	p, ev := start(t, up, nil)
	c := dial(t, p.Addr())
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorKey = 3, "group"
	got := roundTrip(t, c, req, 7).(*kmsg.FindCoordinatorResponse)
	if got.NodeID != -1 || got.Host != "" || got.Port != -1 {
		t.Errorf("the placeholder reached the client as node %d at %q port %d, want node -1 at \"\" port -1", got.NodeID, got.Host, got.Port)
	}
	if l := p.Listeners(); len(l) != 1 {
		t.Errorf("listeners %v, want only the first", l)
	}
	if p.tailsOff.Load() {
		t.Error("tail holding was stopped")
	}
	p.Close()
	for _, e := range ev.of(EventRewrite) {
		t.Errorf("rewrite event: %s", e.Detail)
	}
}
