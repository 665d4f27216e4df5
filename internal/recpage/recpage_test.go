package recpage_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/recpage"
	"github.com/manifester/manifester/internal/recschema"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testshared"
)

var shared = testshared.Join()

// spanTiles checks that the leaves of t cover t's bytes, [0, size), in
// order.
func spanTiles(t *span.Tree, size int) string {
	if t.Root() == span.None || len(t.Bytes) != size {
		return "the tree is empty or not over the page's bytes"
	}
	at := 0
	for _, id := range t.Leaves(t.Root()) {
		n := t.N(id)
		if int(n.Off) != at {
			return t.Path(id) + " starts at " + itoa(int(n.Off)) + ", want " + itoa(at)
		}
		at += int(n.Len)
	}
	if at != size {
		return "leaves end at " + itoa(at) + ", want " + itoa(size)
	}
	return ""
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestEveryRecordTypeAndVersion builds the page of every record type at
// every valid version of the 4.3 and trunk record schemas: the smallest
// instance, framed as Kafka's serdes frame it, decodes back without a
// flag, its leaves tile its bytes, and the framing is right.
func TestEveryRecordTypeAndVersion(t *testing.T) {
	testshared.Dir(t)
	for _, rel := range []string{"4.3", "trunk"} {
		reg, err := schema.Load(filepath.Join(shared, "kafka-spec", rel))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := recschema.Load(filepath.Join(shared, "kafka-records", rel))
		if err != nil {
			t.Fatal(err)
		}
		c := codec.New(reg)
		c.SetRecordSchemas(recs)
		n := 0
		for _, r := range recs.Messages() {
			for _, v := range recpage.Versions(r.Msg) {
				p, err := recpage.Build(c, r, v)
				if err != nil {
					t.Errorf("%s %s v%d: %v", rel, r.Msg.Name, v, err)
					continue
				}
				n++
				if s := spanTiles(p.Spans, p.Size); s != "" {
					t.Errorf("%s %s v%d: spans: %s", rel, r.Msg.Name, v, s)
				}
				var first []string
				top := p.Spans.Kids(p.Spans.Root())
				for _, k := range top {
					first = append(first, p.Spans.DisplayName(k))
				}
				if p.Type == "metadata" && p.Spans.ValueText(top[1]) != "= "+strconv.Itoa(int(r.Msg.APIKey))+" ("+r.Msg.Name+")" {
					t.Errorf("%s %s v%d: api_key %s", rel, r.Msg.Name, v, p.Spans.ValueText(top[1]))
				}
				if p.Type == "coordinator-key" && p.Spans.ValueText(top[0]) != "= "+strconv.Itoa(int(r.Msg.APIKey))+" ("+r.Msg.Name+")" {
					t.Errorf("%s %s v%d: type %s", rel, r.Msg.Name, v, p.Spans.ValueText(top[0]))
				}
				want := map[string]string{"coordinator-key": "type " + r.Msg.Name, "coordinator-value": "version " + r.Msg.Name,
					"metadata": "frame_version api_key version " + r.Msg.Name}[p.Type]
				if want != "" && strings.Join(first, " ") != want {
					t.Errorf("%s %s v%d: children %v, want %s", rel, r.Msg.Name, v, first, want)
				}
			}
		}
		if n < 100 {
			t.Errorf("%s: only %d record pages", rel, n)
		}
	}
}
