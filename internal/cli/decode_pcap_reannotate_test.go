package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/render/jsonr"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
)

// TestReannotate: a frame annotated early (on a worker) and then again in
// the emit stage, after frames before it taught names (one of them a new
// name for an id it had named), reads as the frame decoded afresh and
// annotated once with every name: the early note is replaced, not kept.
func TestReannotate(t *testing.T) {
	reg, err := schema.Load(decSpec)
	if err != nil {
		t.Fatal(err)
	}
	c := codec.New(reg)
	md, _ := reg.API(3)
	teach := func(sel *frameSelector, name string, at int) {
		r := kmsg.NewPtrMetadataResponse()
		r.Version = 12
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic, mt.TopicID = kmsg.StringPtr(name), topicOrders
		r.Topics = append(r.Topics, mt)
		f := report.Decode(c, pcapResp(r, 1), report.Options{Kind: schema.TypeResponse, API: md, Version: 12})
		if f.Error != "" {
			t.Fatalf("metadata response: %s", f.Error)
		}
		sel.learnEmitted(f.SpanTree(), md.Response, 12, at)
	}
	fetch := trafficReq("billing", fetchReq(topicOrders), 7)
	line := func(r *report.Frame) string {
		b, err := jsonr.AppendLine(nil, r, jsonr.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	sel := newFrameSelector(c, nil)
	teach(sel, "orders", 1)
	early := report.Decode(c, fetch, report.Options{Lean: true})
	if _, rows := sel.annotateEarly(early, 5); rows != 1 {
		t.Fatalf("%d topic-id rows", rows)
	}
	if !strings.Contains(line(early), `(topic \"orders\")`) {
		t.Fatal("the early annotation did not name the id")
	}
	teach(sel, "orders-v2", 3) // before the frame, learnt after its annotation
	sel.reannotate(early, 5)

	fresh := report.Decode(c, fetch, report.Options{Lean: true})
	sel.names.AnnotateRows(fresh.SpanTree(), 5)
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
