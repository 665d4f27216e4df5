package framefacts

import (
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
)

func testCodec(t *testing.T) *codec.Codec {
	t.Helper()
	reg, err := schema.Load(testshared.Spec(t, "4.3"))
	if err != nil {
		t.Fatal(err)
	}
	return codec.New(reg)
}

func TestOf(t *testing.T) {
	c := testCodec(t)
	// A request naming topics in an array of strings (kmsg encodes).
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.Version = 5
	del.TopicNames = []string{"a", "b", "a"}
	f, err := c.DecodeRequest(kmsg.NewRequestFormatter().AppendRequest(nil, del, 1), codec.Options{Spans: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := Of(f, nil); !cmp.Equal(got, Facts{Topics: []string{"a", "b"}}) {
		t.Errorf("DeleteTopics v5: %+v", got)
	}
	sameFromTree(t, f, nil)

	// Errors at every depth of an OffsetCommit response, names by struct.
	r := kmsg.NewPtrOffsetCommitResponse()
	r.Version = 8
	for _, name := range []string{"x", "y"} {
		tp := kmsg.NewOffsetCommitResponseTopic()
		tp.Topic = name
		for _, e := range []int16{0, 25} {
			p := kmsg.NewOffsetCommitResponseTopicPartition()
			p.ErrorCode = e
			tp.Partitions = append(tp.Partitions, p)
		}
		r.Topics = append(r.Topics, tp)
	}
	b := binary.BigEndian.AppendUint32(make([]byte, 4, 64), 1)
	b = append(b, 0)
	b = r.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	api, _ := c.Reg.API(8)
	rf, err := c.DecodeResponse(b, api, 8, codec.Options{Spans: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := Of(rf, nil); !cmp.Equal(got, Facts{Topics: []string{"x", "y"}, Errors: []int16{0, 25, 0, 25}}) {
		t.Errorf("OffsetCommit v8: %+v", got)
	}
	sameFromTree(t, rf, nil)
	if got := Of(nil, nil); len(got.Topics)+len(got.Errors) != 0 {
		t.Errorf("nil frame: %+v", got)
	}
}

// sameFromTree checks that OfTree finds in f's tree what Of finds in its
// values.
func sameFromTree(t *testing.T, f *codec.Frame, names TopicName) {
	t.Helper()
	if diff := cmp.Diff(Of(f, names), OfTree(f.SpanTree(), names)); diff != "" {
		t.Errorf("%s: facts from the tree differ from the values' (-values +tree):\n%s", f.API.Name, diff)
	}
}
