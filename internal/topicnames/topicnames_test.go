package topicnames

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/framefacts"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testframes"
)

// respFrame frames a kmsg (independent encoder) response with its header.
func respFrame(r kmsg.Response, corr int32) []byte {
	b := binary.BigEndian.AppendUint32(make([]byte, 4, 64), uint32(corr))
	if r.IsFlexible() && r.Key() != 18 {
		b = append(b, 0)
	}
	b = r.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

var (
	idOrders   = [16]byte{0xaa, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	idPayments = [16]byte{0xbb, 1}
	idUnknown  = [16]byte{0xcc, 1}
)

func metadata(names map[[16]byte]string) []byte {
	r := kmsg.NewPtrMetadataResponse()
	r.Version = 12
	for _, id := range [][16]byte{idOrders, idPayments} {
		if n, ok := names[id]; ok {
			t := kmsg.NewMetadataResponseTopic()
			t.Topic, t.TopicID = kmsg.StringPtr(n), id
			t.Partitions = []kmsg.MetadataResponseTopicPartition{{ErrorCode: 0}}
			r.Topics = append(r.Topics, t)
		}
	}
	// A topic the broker does not know: error, zero id; learnt from nothing.
	bad := kmsg.NewMetadataResponseTopic()
	bad.Topic, bad.ErrorCode = kmsg.StringPtr("missing"), 3
	r.Topics = append(r.Topics, bad)
	return respFrame(r, 1)
}

func fetchResponse() []byte {
	r := kmsg.NewPtrFetchResponse()
	r.Version = 13
	for _, id := range [][16]byte{idOrders, idUnknown} {
		t := kmsg.NewFetchResponseTopic()
		t.TopicID = id
		p := kmsg.NewFetchResponseTopicPartition()
		p.ErrorCode = 6
		t.Partitions = append(t.Partitions, p)
		r.Topics = append(r.Topics, t)
	}
	return respFrame(r, 2)
}

func decodeResp(t *testing.T, c *codec.Codec, key, v int16, b []byte, spans bool) *codec.Frame {
	t.Helper()
	api, _ := c.Reg.API(key)
	f, err := c.DecodeResponse(b, api, v, codec.Options{Spans: spans})
	if err != nil {
		t.Fatalf("decoding %s v%d: %v", api.Name, v, err)
	}
	return f
}

func TestLearnAndAnnotate(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	m := New()
	md := decodeResp(t, c, 3, 12, metadata(map[[16]byte]string{idOrders: "orders", idPayments: "pay\nments"}), false)
	if n := m.Learn(md, 10); n != 2 {
		t.Fatalf("learnt %d pairs from the Metadata response, want 2", n)
	}
	if n := m.Learn(md, 11); n != 0 {
		t.Errorf("learnt %d pairs again, want 0", n)
	}
	if _, ok := m.Lookup(idOrders, 10); ok {
		t.Error("a name is used at the position that learns it")
	}
	if name, ok := m.Lookup(idOrders, 11); !ok || name != "orders" {
		t.Errorf("Lookup after: %q %v", name, ok)
	}

	fetch := decodeResp(t, c, 1, 13, fetchResponse(), true)
	ft := fetch.SpanTree()
	if n := m.Annotate(ft, 5); n != 0 {
		t.Errorf("annotated %d rows before the Metadata response", n)
	}
	if n := m.Annotate(ft, 12); n != 1 {
		t.Fatalf("annotated %d rows, want 1", n)
	}
	var notes []string
	ft.Walk(ft.Root(), func(id span.ID, _ int) {
		if f := ft.Desc(id).Field; f != nil && f.Name == "TopicId" {
			notes = append(notes, ft.ValueText(id))
		}
	})
	want := []string{"= aa010203-0405-0607-0809-0a0b0c0d0e0f (topic \"orders\")", "= cc010000-0000-0000-0000-000000000000"}
	if diff := cmp.Diff(want, notes); diff != "" {
		t.Errorf("TopicId values (-want +got):\n%s", diff)
	}
	if n := m.Annotate(ft, 12); n != 0 {
		t.Errorf("annotated %d rows again, want 0", n)
	}

	// Facts of the Fetch response: the id resolved, errors anywhere.
	facts := framefacts.Of(fetch, m.Resolver(12))
	if diff := cmp.Diff(framefacts.Facts{Topics: []string{"orders"}, Errors: []int16{0, 6, 6}}, facts); diff != "" {
		t.Errorf("facts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(facts, framefacts.OfTree(ft, m.Resolver(12))); diff != "" {
		t.Errorf("facts from the tree (-values +tree):\n%s", diff)
	}
	if facts := framefacts.Of(fetch, m.Resolver(3)); len(facts.Topics) != 0 {
		t.Errorf("topics before the names were learnt: %v", facts.Topics)
	}
	if facts := framefacts.Of(md, nil); !cmp.Equal(facts.Topics, []string{"orders", "pay\nments", "missing"}) || !cmp.Equal(facts.Errors, []int16{0, 0, 0, 0, 3}) {
		t.Errorf("Metadata facts: %+v", facts)
	}

	// A re-created topic: the same id under another name (crafted, but
	// the later name wins only after it was learnt).
	md2 := decodeResp(t, c, 3, 12, metadata(map[[16]byte]string{idOrders: "orders-v2"}), false)
	m.Learn(md2, 20)
	for before, want := range map[int64]string{15: "orders", 21: "orders-v2"} {
		if name, _ := m.Lookup(idOrders, before); name != want {
			t.Errorf("Lookup before %d: %q, want %q", before, name, want)
		}
	}
	// Names are quoted and escaped in the note.
	fetch2 := decodeResp(t, c, 1, 13, fetchResponse(), true)
	m2 := New()
	m2.add(idOrders, "a\"b\x1b", 0)
	ft2 := fetch2.SpanTree()
	m2.Annotate(ft2, 1)
	found := false
	ft2.Walk(ft2.Root(), func(id span.ID, _ int) {
		found = found || strings.Contains(ft2.ValueText(id), `(topic "a\"b\x1b")`)
	})
	if !found {
		t.Error("the note does not escape the name")
	}
}

// TestLearnTree: the pairs learnt from a response's tree are those learnt
// from its values.
func TestLearnTree(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	names := map[[16]byte]string{idOrders: "orders", idPayments: "pay\nments"}
	md := decodeResp(t, c, 3, 12, metadata(names), true)
	fromValues, fromTree := New(), New()
	if n := fromValues.Learn(md, 10); n != 2 {
		t.Fatalf("learnt %d pairs from values", n)
	}
	if n := fromTree.LearnTree(md.SpanTree(), md.API.Response, md.Version, 10); n != 2 {
		t.Fatalf("learnt %d pairs from the tree, want 2", n)
	}
	for id, want := range names {
		if got, ok := fromTree.Lookup(id, 11); !ok || got != want {
			t.Errorf("%x: %q %v, want %q", id, got, ok, want)
		}
	}
	// A response that cannot name ids teaches nothing, even with ids.
	fetch := decodeResp(t, c, 1, 13, fetchResponse(), true)
	if n := New().LearnTree(fetch.SpanTree(), fetch.API.Response, fetch.Version, 0); n != 0 {
		t.Errorf("learnt %d pairs from a Fetch response", n)
	}
	// DescribeTopicPartitions, a nested struct's pair.
	r := kmsg.NewPtrDescribeTopicPartitionsResponse()
	tp := kmsg.NewDescribeTopicPartitionsResponseTopic()
	tp.Topic, tp.TopicID = kmsg.StringPtr("events"), idPayments
	r.Topics = append(r.Topics, tp)
	f := decodeResp(t, c, 75, 0, respFrame(r, 4), true)
	m := New()
	if n := m.LearnTree(f.SpanTree(), f.API.Response, f.Version, 0); n != 1 {
		t.Fatalf("learnt %d from DescribeTopicPartitions", n)
	}
}

func TestTeaches(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	m := New()
	for _, x := range []struct {
		key, v int16
		want   bool
	}{{3, 12, true}, {3, 9, false}, {3, 10, true}, {75, 0, true}, {19, 7, true}, {19, 6, false}, {1, 12, false}, {1, 17, false}, {0, 13, false}, {12, 4, false}} {
		api, _ := c.Reg.API(x.key)
		if got := m.Teaches(api.Response, x.v); got != x.want {
			t.Errorf("%s v%d response teaches: %v, want %v", api.Name, x.v, got, x.want)
		}
		if m.Teaches(api.Request, x.v) {
			t.Errorf("%s request teaches", api.Name)
		}
	}
}

func TestMaxIDs(t *testing.T) {
	m := New()
	m.n = MaxIDs
	if m.add(idOrders, "x", 0) || m.Dropped() != 1 {
		t.Errorf("a full map took a pair (dropped %d)", m.Dropped())
	}
}

// TestLearnDescribeTopicPartitions: the other response the issue names.
func TestLearnDescribeTopicPartitions(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	r := kmsg.NewPtrDescribeTopicPartitionsResponse()
	r.Version = 0
	tp := kmsg.NewDescribeTopicPartitionsResponseTopic()
	tp.Topic, tp.TopicID = kmsg.StringPtr("events"), idPayments
	r.Topics = append(r.Topics, tp)
	f := decodeResp(t, c, 75, 0, respFrame(r, 4), false)
	m := New()
	if n := m.Learn(f, 0); n != 1 {
		t.Fatalf("learnt %d", n)
	}
	if name, ok := m.Lookup(idPayments, 1); !ok || name != "events" {
		t.Errorf("%q %v", name, ok)
	}
}

// TestOnePositionKeepsOneName: a response that names one id many times,
// alternating two names (a hostile broker's Metadata), holds one entry
// for it (the last name: a lookup after that position sees no other), not
// one per pair, which would fill the map (dropping other ids' names) and
// make every lookup of an earlier position walk them all.
func TestOnePositionKeepsOneName(t *testing.T) {
	m := New()
	const pairs = 10000
	for i := range pairs {
		m.add(idOrders, []string{"a", "b"}[i%2], 7)
	}
	if got := len(m.ids[idOrders]); got != 1 || m.n != 1 {
		t.Errorf("%d pairs at one position: %d entries held, %d counted; want 1", pairs, got, m.n)
	}
	if name, ok := m.Lookup(idOrders, 8); !ok || name != "b" {
		t.Errorf("Lookup after the position = %q, %v; want the last name, b", name, ok)
	}
	if _, ok := m.Lookup(idOrders, 7); ok {
		t.Error("a name is used at the position that learns it")
	}
	m.add(idOrders, "c", 9)
	if name, _ := m.Lookup(idOrders, 9); name != "b" {
		t.Errorf("Lookup before the later position = %q; want b", name)
	}
	if name, _ := m.Lookup(idOrders, 10); name != "c" {
		t.Errorf("Lookup after the later position = %q; want c", name)
	}
}

// TestMaxNameBytes: the names a map holds are bounded in bytes too; a
// pair that would pass the bound is dropped and counted, and a shorter
// name replacing one of its position still fits.
func TestMaxNameBytes(t *testing.T) {
	m := New()
	if !m.add(idOrders, "abcd", 1) {
		t.Fatal("an empty map refused a pair")
	}
	m.bytes = MaxNameBytes - 1
	if m.add(idPayments, "xy", 2) || m.Dropped() != 1 {
		t.Errorf("a pair past MaxNameBytes was learnt (dropped %d)", m.Dropped())
	}
	if !m.add(idOrders, "abc", 1) || m.bytes != MaxNameBytes-2 {
		t.Errorf("a shorter name of the same position: %d bytes held; want %d", m.bytes, MaxNameBytes-2)
	}
}
