package codec_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/span"
)

// metadataFrame is a Metadata v12 response frame (written by kmsg) with
// the given number of topics of three partitions each.
func metadataFrame(topics int) []byte {
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 12
	for i := 0; i < 3; i++ {
		b := kmsg.NewMetadataResponseBroker()
		b.NodeID, b.Host, b.Port = int32(i), fmt.Sprintf("broker-%d", i), 9092
		resp.Brokers = append(resp.Brokers, b)
	}
	for i := 0; i < topics; i++ {
		t := kmsg.NewMetadataResponseTopic()
		name := fmt.Sprintf("topic-%d", i)
		t.Topic = &name
		for p := 0; p < 3; p++ {
			pt := kmsg.NewMetadataResponseTopicPartition()
			pt.Partition, pt.Leader = int32(p), int32(p)
			pt.Replicas, pt.ISR = []int32{0, 1, 2}, []int32{0, 1}
			t.Partitions = append(t.Partitions, pt)
		}
		resp.Topics = append(resp.Topics, t)
	}
	b := []byte{0, 0, 0, 0, 0, 0, 0, 7, 0} // size, correlation id, header tags
	b = resp.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// TestAllocsIndependentOfFieldCount decodes a Metadata response and one
// with ten times the topics (ten times the nodes) into a reused tree:
// without values both cost the same number of allocations; with values
// (slabs of Values) far fewer than one per node.
func TestAllocsIndependentOfFieldCount(t *testing.T) {
	if raceOn {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	r := loadRelease(t, "4.3")
	api, _ := r.reg.APIByName("Metadata")
	small, large := metadataFrame(20), metadataFrame(200)
	for _, noValues := range []bool{true, false} {
		tr := &span.Tree{}
		opts := codec.Options{Spans: true, Tree: tr, NoValues: noValues}
		count := func(b []byte) (float64, int) {
			if _, err := r.c.DecodeResponse(b, api, 12, opts); err != nil { // warm the tree's buffers
				t.Fatal(err)
			}
			return testing.AllocsPerRun(20, func() {
				if _, err := r.c.DecodeResponse(b, api, 12, opts); err != nil {
					t.Fatal(err)
				}
			}), tr.Len()
		}
		as, ns := count(small)
		al, nl := count(large)
		if nl < 9*ns {
			t.Fatalf("the large frame has %d nodes, the small one %d", nl, ns)
		}
		t.Logf("noValues=%v: %d nodes %.0f allocations, %d nodes %.0f allocations", noValues, ns, as, nl, al)
		if noValues && al != as {
			t.Errorf("NoValues: %.0f allocations for %d nodes, %.0f for %d: want the same", as, ns, al, nl)
		}
		// Values come from slabs: far fewer allocations than nodes.
		if !noValues && al > float64(nl)/40 {
			t.Errorf("with values: %.0f allocations for %d nodes", al, nl)
		}
	}
}
