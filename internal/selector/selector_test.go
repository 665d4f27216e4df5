package selector

import (
	"bytes"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/filter"
	"github.com/manifester/manifester/internal/render/jsonr"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testframes"
)

var topicOrders = [16]byte{0x0a, 0x0b, 0x0c, 0x0d, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}

func fetchReq(id [16]byte) *kmsg.FetchRequest {
	r := kmsg.NewPtrFetchRequest()
	r.Version, r.ReplicaID, r.MaxWaitMillis, r.MaxBytes = 13, -1, 500, 1<<20
	t := kmsg.NewFetchRequestTopic()
	t.TopicID = id
	t.Partitions = append(t.Partitions, kmsg.NewFetchRequestTopicPartition())
	r.Topics = append(r.Topics, t)
	return r
}

func fetchResp() *kmsg.FetchResponse {
	r := kmsg.NewPtrFetchResponse()
	r.Version = 13
	return r
}

func metadataResp(name string, id [16]byte) *kmsg.MetadataResponse {
	r := kmsg.NewPtrMetadataResponse()
	r.Version = 12
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic, mt.TopicID = kmsg.StringPtr(name), id
	r.Topics = append(r.Topics, mt)
	return r
}

// TestReannotate: a frame annotated early (on a worker) and then again in
// the emit stage, after frames before it taught names (one of them a new
// name for an id it had named), reads as the frame decoded afresh and
// annotated once with every name: the early note is replaced, not kept.
func TestReannotate(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	md, _ := c.Reg.API(3)
	teach := func(sel *Selector, name string, at int) {
		f := report.Decode(c, testframes.Response(metadataResp(name, topicOrders), 1), report.Options{Kind: schema.TypeResponse, API: md, Version: 12})
		if f.Error != "" {
			t.Fatalf("metadata response: %s", f.Error)
		}
		sel.LearnEmitted(f.SpanTree(), md.Response, 12, at)
	}
	fetch := testframes.Request("billing", fetchReq(topicOrders), 7)
	line := func(r *report.Frame) string {
		b, err := jsonr.AppendLine(nil, r, jsonr.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	sel := New(c, nil)
	teach(sel, "orders", 1)
	early := report.Decode(c, fetch, report.Options{Lean: true})
	seen, rows := sel.AnnotateEarly(early, 5)
	if rows != 1 {
		t.Fatalf("%d topic-id rows", rows)
	}
	if !strings.Contains(line(early), `(topic \"orders\")`) {
		t.Fatal("the early annotation did not name the id")
	}
	teach(sel, "orders-v2", 3) // before the frame, learnt after its annotation
	if sel.Learnt() == seen {
		t.Fatal("Learnt did not move when a name changed")
	}
	sel.Reannotate(early, 5)

	fresh := report.Decode(c, fetch, report.Options{Lean: true})
	sel.Annotate(fresh, 5)
	got, want := line(early), line(fresh)
	if got != want {
		t.Fatalf("re-annotated line differs from a fresh one:\n got %.400s\nwant %.400s", got, want)
	}
	if !strings.Contains(got, `(topic \"orders-v2\")`) || strings.Contains(got, `(topic \"orders\")`) {
		t.Fatalf("the line does not name the id by its latest name: %.600s", got)
	}
	if bytes.Count([]byte(got), []byte(`(topic \"`)) != 1 {
		t.Fatal("one topic-id row, one note")
	}
}

// TestAdmitReportOn filters the frames of a proxy log's connections: a
// response matches a client id and a topic through the request it
// answers, a topic id is matched by the name an earlier response taught,
// and the summary counts what was shown.
func TestAdmitReportOn(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	md, _ := c.Reg.API(3)
	fetchAPI, _ := c.Reg.API(1)
	flt, err := filter.Compile(`client_id == "billing" && topic == "orders"`, func(name string) (int16, error) {
		api, err := c.Reg.Lookup(name)
		if err != nil {
			return 0, err
		}
		return api.Key, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sel := New(c, flt)
	if !sel.Filters() || New(c, nil).Filters() {
		t.Fatal("Filters does not say whether the run has a filter")
	}
	frames := []struct {
		conn int
		r    *report.Frame
		want bool
	}{
		// The names are taught first (no client id: not shown).
		{1, report.Decode(c, testframes.Response(metadataResp("orders", topicOrders), 1), report.Options{Kind: schema.TypeResponse, API: md, Version: 12}), false},
		{2, report.Decode(c, testframes.Request("billing", fetchReq(topicOrders), 7), report.Options{}), true},
		{3, report.Decode(c, testframes.Request("other", fetchReq(topicOrders), 7), report.Options{}), false},
		// Responses: their client id and topics are their request's.
		{3, report.Decode(c, testframes.Response(fetchResp(), 7), report.Options{Kind: schema.TypeResponse, API: fetchAPI, Version: 13}), false},
		{2, report.Decode(c, testframes.Response(fetchResp(), 7), report.Options{Kind: schema.TypeResponse, API: fetchAPI, Version: 13}), true},
	}
	for i, f := range frames {
		if f.r.Error != "" {
			t.Fatalf("frame %d: %s", i, f.r.Error)
		}
		if got := sel.AdmitReportOn(f.r, i, f.conn); got != f.want {
			t.Errorf("frame %d (conn %d, %s %s): shown %v, want %v", i, f.conn, f.r.Kind, f.r.API, got, f.want)
		}
	}
	var b bytes.Buffer
	sel.Summary(&b)
	if !strings.Contains(b.String(), "2 of 5 frames shown") {
		t.Errorf("summary %q", b.String())
	}
}

// TestCutCorrelationID: a frame whose bytes end before its correlation id
// matches no correlation_id comparison (its id is unknown, not 0), and one
// whose bytes hold it matches by the id they hold.
func TestCutCorrelationID(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	flt, err := filter.Compile(`correlation_id == 0`, func(string) (int16, error) { return 0, nil })
	if err != nil {
		t.Fatal(err)
	}
	sel := New(c, flt)
	cut := report.Decode(c, []byte{0, 0, 0, 4, 0, 3, 0, 1}, report.Options{})
	whole := report.Decode(c, testframes.Request("billing", fetchReq(topicOrders), 0), report.Options{})
	if whole.Error != "" {
		t.Fatal(whole.Error)
	}
	if sel.AdmitReport(cut, 0) {
		t.Error("a request cut before its correlation id matched correlation_id == 0")
	}
	if !sel.AdmitReport(whole, 1) {
		t.Error("a request of correlation id 0 did not match correlation_id == 0")
	}
}

// TestForget: once a connection is forgotten (the proxy saw it close), its
// requests' facts are gone, so a response on a connection of that number
// does not take them; the other connections keep theirs.
func TestForget(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	fetchAPI, _ := c.Reg.API(1)
	flt, err := filter.Compile(`client_id == "billing"`, nil)
	if err != nil {
		t.Fatal(err)
	}
	sel := New(c, flt)
	req := func() *report.Frame {
		return report.Decode(c, testframes.Request("billing", fetchReq(topicOrders), 7), report.Options{})
	}
	resp := func() *report.Frame {
		return report.Decode(c, testframes.Response(fetchResp(), 7), report.Options{Kind: schema.TypeResponse, API: fetchAPI, Version: 13})
	}
	sel.AdmitReportOn(req(), 0, 1)
	sel.AdmitReportOn(req(), 1, 2)
	if len(sel.pending) != 2 {
		t.Fatalf("%d connections with pending requests, want 2", len(sel.pending))
	}
	sel.Forget(1)
	if _, ok := sel.pending[1]; ok || len(sel.pending) != 1 {
		t.Fatalf("connection 1 not forgotten, or another one with it: %d left", len(sel.pending))
	}
	if sel.AdmitReportOn(resp(), 2, 1) {
		t.Error("a response on a forgotten connection took the client id of a request from before")
	}
	if !sel.AdmitReportOn(resp(), 3, 2) {
		t.Error("a response on another connection lost its request's client id")
	}
}
