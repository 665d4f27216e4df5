package proxy

import (
	"io"
	"net"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testframes"
)

// TestTopicIDNames: a Fetch by topic id before and after a Metadata
// response that names the id; only the later one is annotated, in the
// request and in the response.
func TestTopicIDNames(t *testing.T) {
	id := [16]byte{0x11, 0x22, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
	fetch := func(corr int32) ([]byte, []byte) {
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.ReplicaID = 13, -1
		rt := kmsg.NewFetchRequestTopic()
		rt.TopicID = id
		req.Topics = append(req.Topics, rt)
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = 13
		pt := kmsg.NewFetchResponseTopic()
		pt.TopicID = id
		resp.Topics = append(resp.Topics, pt)
		return reqFrame(req, corr), testframes.Response(resp, corr)
	}
	mdReq := kmsg.NewPtrMetadataRequest()
	mdReq.Version = 12
	md := kmsg.NewPtrMetadataResponse()
	md.Version = 12
	mt := kmsg.NewMetadataResponseTopic()
	mt.Topic, mt.TopicID = kmsg.StringPtr("orders"), id
	md.Topics = append(md.Topics, mt)
	f1, r1 := fetch(1)
	f3, r3 := fetch(3)
	exchanges := [][2][]byte{{f1, r1}, {reqFrame(mdReq, 2), testframes.Response(md, 2)}, {f3, r3}}

	up := fakeBroker(t, func(c net.Conn) {
		for _, x := range exchanges {
			if _, err := io.ReadFull(c, make([]byte, len(x[0]))); err != nil {
				return
			}
			c.Write(x[1])
		}
	})
	p, ev := start(t, up, func(c *Config) { c.NoRewrite = true })
	c := dial(t, p.Addr())
	for _, x := range exchanges {
		c.Write(x[0])
		if _, err := io.ReadFull(c, make([]byte, len(x[1]))); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	p.Close()
	frames := ev.of(EventFrame)
	if len(frames) != 6 {
		t.Fatalf("%d frames", len(frames))
	}
	const note = `(topic "orders")`
	for i, e := range frames {
		var sb strings.Builder
		tr := e.Frame.SpanTree()
		if tr == nil || tr.Root() == span.None {
			t.Fatalf("frame %d has no tree", i)
		}
		tr.Walk(tr.Root(), func(id span.ID, _ int) {
			sb.WriteString(tr.ValueText(id) + "\n")
		})
		named := strings.Contains(sb.String(), note)
		if named != (i >= 4) {
			t.Errorf("frame %d (%s): named %v", i, e.Frame.Summary(), named)
		}
	}
}
