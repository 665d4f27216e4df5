package histsite

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// switcher returns the hrefs of the version switcher's main group and of
// its "older releases" group, and the href marked current.
func switcher(t *testing.T, doc *html.Node) (main, older []string, current string) {
	t.Helper()
	navs := elems(doc, atom.Nav, "versions")
	if len(navs) != 1 {
		t.Fatalf("%d version switchers", len(navs))
	}
	for _, ul := range elems(navs[0], atom.Ul, "") {
		for _, a := range elems(ul, atom.A, "") {
			h := attr(a, "href")
			if hasClass(ul, "older") {
				older = append(older, h)
			} else {
				main = append(main, h)
			}
			if attr(a, "aria-current") == "page" {
				current = h
			}
		}
	}
	return main, older, current
}

func footerText(t *testing.T, doc *html.Node) string {
	t.Helper()
	fs := elems(doc, atom.Footer, "")
	if len(fs) != 1 {
		t.Fatalf("%d footers", len(fs))
	}
	return text(fs[0])
}

func TestProduceOldVersionPages(t *testing.T) {
	s := siteAll(t)
	// Produce is "0-11" in 3.9 and starts at v3 from 4.0 on: v0-v2 get
	// pages built from 3.9, and their JSON.
	for v := 0; v <= 2; v++ {
		for _, p := range []string{fmt.Sprintf("/apis/Produce/v%d/", v), fmt.Sprintf("/apis/Produce/v%d.json", v)} {
			if _, ok := s.Lookup(p); !ok {
				t.Errorf("no page at %s", p)
			}
		}
	}
	doc := parse(t, s, "/apis/Produce/v2/")
	h1 := elems(doc, atom.H1, "")[0]
	if b := elems(h1, atom.Span, "removed"); len(b) != 1 || text(b[0]) != "removed in 4.0" {
		t.Errorf("title %q: want a 'removed in 4.0' badge", text(h1))
	}
	note := elems(doc, atom.P, "note-removed")
	if len(note) != 1 || !strings.HasPrefix(text(note[0]), "v2 of Produce was removed in Kafka 4.0; this page is built from the 3.9 specs") {
		t.Errorf("removed note: %q", func() []string {
			var out []string
			for _, n := range note {
				out = append(out, text(n))
			}
			return out
		}())
	}
	if items := summaryItems(doc); !slices.Contains(items, "Accepted by Kafka=3.9 only") || !slices.Contains(items, "Removed in=Kafka 4.0") {
		t.Errorf("summary %q", items)
	}
	if f := footerText(t, doc); !strings.Contains(f, "Kafka 3.9 message specs") || strings.Contains(f, "4.3") || strings.Contains(f, "trunk") {
		t.Errorf("footer %q, want it to name 3.9 only", f)
	}

	// The request grid: a Produce v2 frame (request header v1) whose body
	// is what franz-go's kmsg encodes for a default Produce v2 request.
	frame := requestFrame(t, doc)
	if len(frame) < 14 || int(binary.BigEndian.Uint32(frame)) != len(frame)-4 {
		t.Fatalf("request frame of %d bytes has a wrong size prefix", len(frame))
	}
	if key, ver := binary.BigEndian.Uint16(frame[4:]), binary.BigEndian.Uint16(frame[6:]); key != 0 || ver != 2 {
		t.Fatalf("header says key %d v%d, want 0 v2", key, ver)
	}
	off := 12 // size, key, version, correlation id; then the client id
	if n := int16(binary.BigEndian.Uint16(frame[off:])); n > 0 {
		off += 2 + int(n)
	} else {
		off += 2
	}
	body := frame[off:]
	req := kmsg.NewPtrProduceRequest()
	req.Version = 2
	if err := req.ReadFrom(body); err != nil {
		t.Fatalf("kmsg cannot read the body %x: %v", body, err)
	}
	if len(req.Topics) != 1 || len(req.Topics[0].Partitions) != 1 {
		t.Errorf("kmsg reads acks %d, timeout %d, %d topics", req.Acks, req.TimeoutMillis, len(req.Topics))
	}
	if again := req.AppendTo(nil); !bytes.Equal(again, body) {
		t.Errorf("kmsg re-encodes the body as %x, page has %x", again, body)
	}
	// The same bytes as the 3.9 test vectors (manifester vectors --spec 3.9=...).
	if vec, ok := s.Lookup(VectorsPath("3.9")); !ok || !bytes.Contains(vec.Body, []byte(`"`+hex.EncodeToString(frame)+`"`)) {
		t.Errorf("the request frame %x is not among the 3.9 vectors", frame)
	}

	// The switcher: the newest release's versions, then v0-v2 apart.
	main, older, cur := switcher(t, doc)
	if want := []string{"/apis/Produce/v0/", "/apis/Produce/v1/", "/apis/Produce/v2/"}; !slices.Equal(older, want) {
		t.Errorf("older group %q, want %q", older, want)
	}
	if cur != "/apis/Produce/v2/" {
		t.Errorf("current %q", cur)
	}
	if len(main) == 0 || main[0] != "/apis/Produce/v3/" || main[len(main)-1] != "/apis/Produce/v13/" {
		t.Errorf("main group %q, want v3-v13 of the newest release", main)
	}
	// The pages of the newest release (trunk) show the same older group and
	// link the old pages from the accepted-by table (TestProduceAcceptedBy
	// checks the table).
	top := parse(t, s, "/apis/Produce/")
	if _, older, _ := switcher(t, top); len(older) != 3 || older[2] != "/apis/Produce/v2/" {
		t.Errorf("trunk page's older group %q", older)
	}
	if f := footerText(t, top); !strings.Contains(f, "Kafka trunk message specs") {
		t.Errorf("trunk page footer %q", f)
	}
	// Fetch v0-v3 too (3.9 "0-16", 4.0 on from v4).
	for v := 0; v <= 3; v++ {
		p := fmt.Sprintf("/apis/Fetch/v%d/", v)
		if f := footerText(t, parse(t, s, p)); !strings.Contains(f, "Kafka 3.9 message specs") {
			t.Errorf("%s footer %q", p, f)
		}
	}
	// v1 changed from v0 in 3.9, shown inline without a full-diff link.
	v1 := parse(t, s, "/apis/Produce/v1/")
	ch := byID(t, v1, "changes")
	if len(elems(ch, atom.A, "fulldiff")) != 0 || len(elems(ch, atom.Form, "")) != 0 {
		t.Error("old version page links a diff page the site does not hold")
	}
	if !strings.Contains(text(ch), "What v1 of Produce changed from v0 in Kafka 3.9") {
		t.Errorf("changes: %q", text(ch))
	}
}

func TestRemovedFooter(t *testing.T) {
	s := siteAll(t)
	for _, p := range []string{"/apis/LeaderAndIsr/", "/apis/LeaderAndIsr/v0/"} {
		if f := footerText(t, parse(t, s, p)); !strings.Contains(f, "Kafka 3.9 message specs") || strings.Contains(f, "4.3") || strings.Contains(f, "trunk") {
			t.Errorf("%s footer %q", p, f)
		}
	}
}

func TestNoOldVersionPagesAlone(t *testing.T) {
	s := siteOne(t)
	for _, p := range []string{"/apis/Produce/v2/", "/apis/Produce/v2.json", "/apis/Fetch/v0/"} {
		if _, ok := s.Lookup(p); ok {
			t.Errorf("a page at %s with 4.3 alone", p)
		}
	}
	if _, older, _ := switcher(t, parse(t, s, "/apis/Produce/")); len(older) != 0 {
		t.Errorf("older group %q with 4.3 alone", older)
	}
}
