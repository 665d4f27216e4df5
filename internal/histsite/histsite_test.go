package histsite

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/release"
	htmlr "github.com/manifester/manifester/internal/render/html"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/server"
	"github.com/manifester/manifester/internal/site"
	"github.com/manifester/manifester/internal/testshared"
)

var specRoot = testshared.SpecPath("") + "/"

// allReleases are the releases in ../shared/kafka-spec, oldest first:
// trunk (4.5.0-SNAPSHOT) is the newest.
var allReleases = []string{"3.9", "4.0", "4.1", "4.2", "4.3", "trunk"}

// benchReleases are the releases the benchmark figures were measured with;
// trunk is left out so that they stay comparable.
var benchReleases = []string{"3.9", "4.0", "4.1", "4.2", "4.3"}

type built struct {
	once sync.Once
	site *site.Site
	ext  *Ext
	err  error
}

var (
	builtAll, builtOne built
	regsMu             sync.Mutex
	regs               = map[string]*codec.Codec{}
)

// loadRelease loads one release's specs once.
func loadRelease(t testing.TB, label string) *release.Release {
	t.Helper()
	testshared.Dir(t)
	regsMu.Lock()
	defer regsMu.Unlock()
	if c, ok := regs[label]; ok {
		return &release.Release{Label: label, Codec: c}
	}
	reg, err := schema.Load(specRoot + label)
	if err != nil {
		t.Fatal(err)
	}
	reg.Label = label
	c := codec.New(reg)
	regs[label] = c
	return &release.Release{Label: label, Codec: c}
}

func build(t testing.TB, b *built, labels []string) (*site.Site, *Ext) {
	t.Helper()
	b.once.Do(func() {
		var rels []*release.Release
		for _, l := range labels {
			rels = append(rels, loadRelease(t, l))
		}
		b.ext = New()
		b.site, b.err = site.Build(site.Options{Releases: rels, Extensions: []site.Extension{b.ext.Extension()}})
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.site, b.ext
}

// siteAll is the site with the six releases loaded, siteOne with 4.3 only.
func siteAll(t testing.TB) *site.Site { s, _ := build(t, &builtAll, allReleases); return s }
func siteOne(t testing.TB) *site.Site { s, _ := build(t, &builtOne, []string{"4.3"}); return s }

func parse(t *testing.T, s *site.Site, path string) *html.Node {
	t.Helper()
	a, ok := s.Lookup(path)
	if !ok {
		t.Fatalf("no page at %s", path)
	}
	if a.ContentType != site.TypeHTML {
		t.Fatalf("%s has content type %s", path, a.ContentType)
	}
	doc, err := html.Parse(bytes.NewReader(a.Body))
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	return doc
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, c string) bool {
	return slices.Contains(strings.Fields(attr(n, "class")), c)
}

func find(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func byID(t *testing.T, n *html.Node, id string) *html.Node {
	t.Helper()
	els := find(n, func(n *html.Node) bool { return attr(n, "id") == id })
	if len(els) != 1 {
		t.Fatalf("%d elements with id %q", len(els), id)
	}
	return els[0]
}

func elems(n *html.Node, a atom.Atom, class string) []*html.Node {
	return find(n, func(n *html.Node) bool { return n.DataAtom == a && (class == "" || hasClass(n, class)) })
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// structFields returns, for each h4 heading of a changes block, the texts
// of the items of the list after it.
func structFields(n *html.Node) map[string][]string {
	out := map[string][]string{}
	for _, h := range elems(n, atom.H4, "") {
		ul := h.NextSibling
		for ul != nil && ul.Type != html.ElementNode {
			ul = ul.NextSibling
		}
		if ul == nil || ul.DataAtom != atom.Ul {
			continue
		}
		for li := ul.FirstChild; li != nil; li = li.NextSibling {
			if li.DataAtom == atom.Li {
				out[text(h)] = append(out[text(h)], attr(li, "class")+" "+text(li))
			}
		}
	}
	return out
}

// specLine returns the 1-based line of the spec file holding s.
func specLine(t *testing.T, rel, file, s string) int {
	t.Helper()
	b, err := os.ReadFile(testshared.Path(t, "kafka-spec", rel, file))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	t.Fatalf("%s of %s has no line with %q", file, rel, s)
	return 0
}

func TestDescribeAclsChangesV2V3(t *testing.T) {
	s := siteAll(t)
	doc := parse(t, s, "/apis/DescribeAcls/")
	sec := byID(t, doc, "changes")
	if h := text(elems(sec, atom.H2, "")[0]); h != "Changes from v2" {
		t.Errorf("changes heading %q", h)
	}
	// The spec's comment, with the line it is on in each file.
	var quotes []string
	for _, q := range elems(sec, atom.Blockquote, "") {
		quotes = append(quotes, text(q))
	}
	for _, file := range []string{"DescribeAclsRequest.json", "DescribeAclsResponse.json"} {
		// The comment's text is read from ../shared, not quoted here.
		n := specLine(t, "4.3", file, "// Version 3 ")
		b, err := os.ReadFile(testshared.Path(t, "kafka-spec", "4.3", file))
		if err != nil {
			t.Fatal(err)
		}
		_, comment, _ := strings.Cut(strings.Split(string(b), "\n")[n-1], "//")
		want := fmt.Sprintf("%s (%s, line %d)", strings.TrimSpace(comment), file, n)
		if !slices.Contains(quotes, want) {
			t.Errorf("changes quote %q missing; have %q", want, quotes)
		}
	}
	if got := summaryItems(doc); !slices.Contains(got, "Changes from v2=no field changes") {
		t.Errorf("DescribeAcls v3 summary %q", got)
	}
	// v3 changes no field: the user resource type is a new enum value.
	if got := elems(sec, atom.P, "nofields"); len(got) != 2 {
		t.Errorf("%d 'No field changes.' paragraphs, want 2 (request and response)", len(got))
	}
	links := find(sec, func(n *html.Node) bool { return hasClass(n, "fulldiff") })
	if len(links) != 1 || attr(links[0], "href") != "/apis/DescribeAcls/diff/v2..v3/" {
		t.Fatalf("full diff link: %v", links)
	}
	if _, ok := s.Lookup("/apis/DescribeAcls/diff/v2..v3/"); !ok {
		t.Error("the full diff page is missing")
	}
}

func TestFetchV13Changes(t *testing.T) {
	s := siteAll(t)
	for _, p := range []string{"/apis/Fetch/v13/", "/apis/Fetch/diff/v12..v13/"} {
		doc := parse(t, s, p)
		root := doc
		if strings.Contains(p, "/v13/") {
			root = byID(t, doc, "changes")
		}
		got := structFields(root)
		for _, tc := range []struct{ heading, item string }{
			{"FetchRequest.Topics (FetchTopic)", "chg-del − Topic string (versions 0-12)"},
			{"FetchRequest.Topics (FetchTopic)", "chg-add + TopicId uuid (versions 13+)"},
			{"FetchRequest.ForgottenTopicsData (ForgottenTopic)", "chg-add + TopicId uuid (versions 13+)"},
			{"FetchResponse.Responses (FetchableTopicResponse)", "chg-del − Topic string (versions 0-12)"},
			{"FetchResponse.Responses (FetchableTopicResponse)", "chg-add + TopicId uuid (versions 13+)"},
		} {
			if !slices.Contains(got[tc.heading], tc.item) {
				t.Errorf("%s: %s lacks %q; has %q", p, tc.heading, tc.item, got[tc.heading])
			}
		}
	}
	// The summary counts them: Topic -> TopicId in three structs.
	if got := summaryItems(parse(t, s, "/apis/Fetch/v13/")); !slices.Contains(got, "Changes from v12=+3 −3 ~0 fields") {
		t.Errorf("Fetch v13 summary %q", got)
	}
	if got := summaryItems(parse(t, s, "/apis/ApiVersions/v3/")); !slices.Contains(got, "Changes from v2=+6 −0 ~0 fields, becomes flexible") {
		t.Errorf("ApiVersions v3 summary %q", got)
	}
	// Every pair of Fetch's versions in 4.3 (4-18) has its page, and the
	// index of pairs links each.
	idx := parse(t, s, "/apis/Fetch/diff/")
	n := 0
	for a := 4; a <= 18; a++ {
		for b := a + 1; b <= 18; b++ {
			p := fmt.Sprintf("/apis/Fetch/diff/v%d..v%d/", a, b)
			if _, ok := s.Lookup(p); !ok {
				t.Errorf("no page at %s", p)
			}
			if len(find(idx, func(n *html.Node) bool { return attr(n, "href") == p })) != 1 {
				t.Errorf("the pair index does not link %s", p)
			}
			n++
		}
	}
	if n != 105 {
		t.Fatalf("counted %d pairs", n)
	}
	// A wide pair gathers the changes in between: v4 -> v18 adds TopicId.
	wide := structFields(parse(t, s, "/apis/Fetch/diff/v4..v18/"))
	if !slices.Contains(wide["FetchRequest.Topics (FetchTopic)"], "chg-add + TopicId uuid (versions 13+)") {
		t.Errorf("v4..v18: %q", wide["FetchRequest.Topics (FetchTopic)"])
	}
}

type acceptedCells struct {
	link                                   string
	reqFirst, reqLast, respFirst, respLast string
	current                                bool
}

func acceptedTable(t *testing.T, doc *html.Node) map[string]acceptedCells {
	t.Helper()
	tables := elems(byID(t, doc, "accepted"), atom.Table, "accepted")
	if len(tables) != 1 {
		t.Fatalf("%d accepted tables", len(tables))
	}
	out := map[string]acceptedCells{}
	for _, tr := range elems(tables[0], atom.Tr, "") {
		ths := elems(tr, atom.Th, "")
		tds := elems(tr, atom.Td, "")
		if len(tds) == 0 || hasClass(tr, "gap") {
			continue
		}
		c := acceptedCells{reqFirst: text(tds[0]), reqLast: text(tds[1]), respFirst: text(tds[2]), respLast: text(tds[3]), current: hasClass(tr, "current")}
		if as := elems(ths[0], atom.A, ""); len(as) == 1 {
			c.link = attr(as[0], "href")
		}
		out[text(ths[0])] = c
	}
	return out
}

func TestProduceAcceptedBy(t *testing.T) {
	s := siteAll(t)
	doc := parse(t, s, "/apis/Produce/")
	rows := acceptedTable(t, doc)
	// From the specs: Produce is "0-11" in 3.9 and "3-12" (12 stable) in
	// 4.0 and later, up to "3-13" in 4.3 and trunk, the newest loaded.
	for _, v := range []string{"v0", "v1", "v2"} {
		want := acceptedCells{link: "/apis/Produce/" + v + "/", reqFirst: "3.9", reqLast: "3.9", respFirst: "3.9", respLast: "3.9"}
		if rows[v] != want {
			t.Errorf("%s: %+v, want %+v (only through 3.9, its page built from 3.9)", v, rows[v], want)
		}
	}
	if r := rows["v3"]; r.reqFirst != "3.9" || r.reqLast != "trunk" || r.link != "/apis/Produce/v3/" {
		t.Errorf("v3: %+v, want first 3.9, last trunk, linked", r)
	}
	if r := rows["v12"]; r.reqFirst != "4.0" || r.reqLast != "trunk" {
		t.Errorf("v12: %+v, want first 4.0, last trunk", r)
	}
	var cur []string
	for v, r := range rows {
		if r.current {
			cur = append(cur, v)
		}
	}
	top := fmt.Sprintf("v%d", loadRelease(t, "trunk").Codec.Reg.APIs[0].Request.Valid.Hi)
	if len(cur) != 1 || cur[0] != top {
		t.Errorf("current rows %v, want [%s]", cur, top)
	}
	// The summary names the first and last release accepting the version.
	v3 := parse(t, s, "/apis/Produce/v3/")
	if !slices.Contains(summaryItems(v3), "Accepted by Kafka=3.9 to trunk") {
		t.Errorf("Produce v3 summary: %q", summaryItems(v3))
	}
	// The lowest version says what older releases still define.
	if p := elems(byID(t, v3, "changes"), atom.P, "nochanges"); len(p) != 1 || !strings.Contains(text(p[0]), "Older loaded releases also define v0-v2") {
		t.Errorf("Produce v3 changes: %v", p)
	}
}

func summaryItems(doc *html.Node) []string {
	var out []string
	for _, dl := range elems(doc, atom.Dl, "summary") {
		for _, dt := range elems(dl, atom.Dt, "") {
			dd := dt.NextSibling
			for dd != nil && dd.DataAtom != atom.Dd {
				dd = dd.NextSibling
			}
			if dd != nil {
				out = append(out, text(dt)+"="+text(dd))
			}
		}
	}
	return out
}

func TestReleasesPage(t *testing.T) {
	s := siteAll(t)
	doc := parse(t, s, ReleasesPath)
	var ids []string
	for _, sec := range elems(doc, atom.Section, "reldiff") {
		ids = append(ids, attr(sec, "id"))
	}
	want := []string{"r3.9-4.0", "r4.0-4.1", "r4.1-4.2", "r4.2-4.3", "r4.3-trunk", "r3.9-trunk"}
	if !slices.Equal(ids, want) {
		t.Fatalf("release diff sections %q, want %q", ids, want)
	}
	sec := byID(t, doc, "r3.9-4.0")
	var removed []string
	for _, ul := range elems(sec, atom.Ul, "removed") {
		for _, li := range elems(ul, atom.Li, "") {
			removed = append(removed, text(li))
		}
	}
	// The four keys 4.0 keeps reserved, with the versions 3.9 defines.
	wantRemoved := []string{
		"4 LeaderAndIsr v0-7 (key reserved in 4.0)",
		"5 StopReplica v0-4 (key reserved in 4.0)",
		"6 UpdateMetadata v0-8 (key reserved in 4.0)",
		"7 ControlledShutdown v0-3 (key reserved in 4.0)",
	}
	if !slices.Equal(removed, wantRemoved) {
		t.Errorf("3.9 -> 4.0 removed %q, want %q", removed, wantRemoved)
	}
	for _, name := range []string{"LeaderAndIsr", "StopReplica", "UpdateMetadata", "ControlledShutdown"} {
		if len(find(sec, func(n *html.Node) bool { return attr(n, "href") == "/apis/"+name+"/" })) == 0 {
			t.Errorf("3.9 -> 4.0 does not link %s's page", name)
		}
	}
	// Produce's 4.0 baseline.
	found := false
	for _, tr := range elems(sec, atom.Tr, "") {
		var cells []string
		for _, td := range elems(tr, atom.Td, "") {
			cells = append(cells, text(td))
		}
		if len(cells) == 3 && cells[0] == "0" && cells[1] == "Produce" && strings.HasPrefix(cells[2], "versions 0-11 -> 3-12; baseline raised; removed v0-2") {
			found = true
		}
	}
	if !found {
		t.Error("3.9 -> 4.0 lacks Produce's raised baseline")
	}
	// Every release's vectors are linked, and the header links here.
	for _, l := range allReleases {
		if len(find(doc, func(n *html.Node) bool { return attr(n, "href") == "/vectors/"+l+".jsonl" })) != 1 {
			t.Errorf("no link to /vectors/%s.jsonl", l)
		}
	}
	for _, p := range []string{"/", "/apis/Fetch/", ReleasesPath, "/apis/Fetch/diff/v12..v13/"} {
		nav := find(parse(t, s, p), func(n *html.Node) bool { return n.DataAtom == atom.Nav && attr(n, "aria-label") == "Site" })
		if len(nav) != 1 || len(find(nav[0], func(n *html.Node) bool { return attr(n, "href") == ReleasesPath })) != 1 {
			t.Errorf("%s: the header does not link %s", p, ReleasesPath)
		}
	}
}

// requestFrame returns the bytes of the request grid of a page.
func requestFrame(t *testing.T, doc *html.Node) []byte {
	t.Helper()
	sec := byID(t, doc, "request")
	var b []byte
	for _, td := range elems(sec, atom.Td, "b") {
		x, err := hex.DecodeString(text(td))
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, x...)
	}
	return b
}

func TestLeaderAndIsrRemovedPage(t *testing.T) {
	s := siteAll(t)
	doc := parse(t, s, "/apis/LeaderAndIsr/")
	h1 := elems(doc, atom.H1, "")[0]
	if got := text(h1); got != "LeaderAndIsr removed in 4.0" {
		t.Errorf("title %q", got)
	}
	if len(elems(h1, atom.Span, "removed")) != 1 {
		t.Error("no removed badge")
	}
	note := elems(doc, atom.P, "note-removed")
	if len(note) != 1 || !strings.HasPrefix(text(note[0]), "LeaderAndIsr was removed in Kafka 4.0") ||
		!strings.Contains(text(note[0]), "built from Kafka 3.9") {
		t.Errorf("removed note: %v", note)
	}
	// A real page: every version of 3.9 (0-7), and the request at v7 is a
	// frame franz-go's kmsg parses and re-encodes to the same body.
	for v := 0; v <= 7; v++ {
		for _, p := range []string{fmt.Sprintf("/apis/LeaderAndIsr/v%d/", v), fmt.Sprintf("/apis/LeaderAndIsr/v%d.json", v)} {
			if _, ok := s.Lookup(p); !ok {
				t.Errorf("no page at %s", p)
			}
		}
	}
	frame := requestFrame(t, doc)
	if len(frame) < 16 || int(binary.BigEndian.Uint32(frame)) != len(frame)-4 {
		t.Fatalf("request frame of %d bytes has a wrong size prefix", len(frame))
	}
	if key, ver := binary.BigEndian.Uint16(frame[4:]), binary.BigEndian.Uint16(frame[6:]); key != 4 || ver != 7 {
		t.Fatalf("header says key %d v%d, want 4 v7", key, ver)
	}
	// Request header v2: correlation id, nullable client id, empty tags.
	off := 12
	if n := int16(binary.BigEndian.Uint16(frame[off:])); n > 0 {
		off += 2 + int(n)
	} else {
		off += 2
	}
	if frame[off] != 0 {
		t.Fatalf("header tagged fields %d", frame[off])
	}
	body := frame[off+1:]
	req := kmsg.NewLeaderAndISRRequest()
	req.Version = 7
	if err := req.ReadFrom(body); err != nil {
		t.Fatalf("kmsg cannot read the body: %v", err)
	}
	if again := req.AppendTo(nil); !bytes.Equal(again, body) {
		t.Errorf("kmsg re-encodes the body as %x, page has %x", again, body)
	}
	// The index marks the key removed and links the page.
	idx := parse(t, s, "/")
	var row *html.Node
	for _, tr := range elems(idx, atom.Tr, "") {
		if attr(tr, "data-key") == "4" {
			row = tr
		}
	}
	if row == nil || len(elems(row, atom.Span, "removed")) != 1 || text(elems(row, atom.Span, "removed")[0]) != "removed in 4.0" {
		t.Errorf("index row of key 4 has no 'removed in 4.0' badge")
	}
	// Its version diffs exist too.
	if _, ok := s.Lookup("/apis/LeaderAndIsr/diff/v0..v7/"); !ok {
		t.Error("no /apis/LeaderAndIsr/diff/v0..v7/")
	}
}

func TestVectorsPerRelease(t *testing.T) {
	s := siteAll(t)
	for _, l := range allReleases {
		a, ok := s.Lookup("/vectors/" + l + ".jsonl")
		if !ok {
			t.Fatalf("no /vectors/%s.jsonl", l)
		}
		// Each line is one vector of that release: its API key and version
		// are valid there.
		reg := loadRelease(t, l).Codec.Reg
		sc := bufio.NewScanner(bytes.NewReader(a.Body))
		sc.Buffer(nil, 1<<24)
		keyRe := regexp.MustCompile(`"api_key":\s*(\d+)`)
		verRe := regexp.MustCompile(`"version":\s*(\d+)`)
		n := 0
		for sc.Scan() {
			k, v := keyRe.FindSubmatch(sc.Bytes()), verRe.FindSubmatch(sc.Bytes())
			if k == nil || v == nil {
				t.Fatalf("%s: line without api_key/version: %.80s", l, sc.Text())
			}
			var key, ver int16
			fmt.Sscan(string(k[1]), &key)
			fmt.Sscan(string(v[1]), &ver)
			api, ok := reg.API(key)
			if !ok || !api.Request.Valid.Contains(ver) {
				t.Fatalf("%s: vector for key %d v%d, which %s does not define", l, key, ver, l)
			}
			n++
		}
		if n == 0 {
			t.Errorf("/vectors/%s.jsonl is empty", l)
		}
	}
	// 3.9 has LeaderAndIsr vectors; 4.3 has none.
	a39, _ := s.Lookup("/vectors/3.9.jsonl")
	a43, _ := s.Lookup("/vectors/4.3.jsonl")
	if !bytes.Contains(a39.Body, []byte(`"LeaderAndIsr"`)) || bytes.Contains(a43.Body, []byte(`"LeaderAndIsr"`)) {
		t.Error("LeaderAndIsr vectors should be in 3.9's file only")
	}
}

func TestSingleRelease(t *testing.T) {
	s := siteOne(t)
	doc := parse(t, s, "/apis/Produce/")
	acc := byID(t, doc, "accepted")
	if p := elems(acc, atom.P, "nohistory"); len(p) != 1 || !strings.HasPrefix(text(p[0]), "Only Kafka 4.3 is loaded, so there is no release history") {
		t.Errorf("accepted section: %q", text(acc))
	}
	if len(elems(acc, atom.Table, "")) != 0 {
		t.Error("an accepted-by table with one release")
	}
	if !slices.Contains(summaryItems(doc), "Accepted by Kafka=4.3 (only release loaded)") {
		t.Errorf("summary %q", summaryItems(doc))
	}
	// Version changes need no other release.
	if got := structFields(byID(t, parse(t, s, "/apis/Fetch/v13/"), "changes")); !slices.Contains(got["FetchRequest.Topics (FetchTopic)"], "chg-add + TopicId uuid (versions 13+)") {
		t.Errorf("Fetch v13 changes with one release: %q", got)
	}
	rel := parse(t, s, ReleasesPath)
	if p := elems(rel, atom.P, "nohistory"); len(p) != 1 || !strings.Contains(text(p[0]), "no release history") {
		t.Errorf("releases page: %q", text(rel))
	}
	if len(elems(rel, atom.Section, "reldiff")) != 0 {
		t.Error("release diffs with one release")
	}
	if _, ok := s.Lookup("/vectors/4.3.jsonl"); !ok {
		t.Error("no /vectors/4.3.jsonl")
	}
	// LeaderAndIsr stays the reserved-key page.
	lai := parse(t, s, "/apis/LeaderAndIsr/")
	if len(elems(lai, atom.Span, "removed")) != 0 || len(elems(lai, atom.Span, "reserved")) != 1 {
		t.Error("with 4.3 alone, LeaderAndIsr should be the reserved page")
	}
	if _, ok := s.Lookup("/apis/LeaderAndIsr/v0/"); ok {
		t.Error("a LeaderAndIsr version page without 3.9")
	}
}

// TestEscaped gives releases labels with markup: they come out as text,
// and a label that cannot name a file gets no vectors file.
func TestEscaped(t *testing.T) {
	r39, r43 := loadRelease(t, "3.9"), loadRelease(t, "4.3")
	r39.Label, r43.Label = `<b id="x">old</b>`, `new"><script>alert(1)</script>`
	ext := New()
	s, err := site.Build(site.Options{Releases: []*release.Release{r39, r43}, Extensions: []site.Extension{ext.Extension()}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{ReleasesPath, "/apis/Produce/", "/apis/LeaderAndIsr/", "/apis/LeaderAndIsr/diff/v1..v2/"} {
		doc := parse(t, s, p)
		if n := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.B || attr(n, "id") == "x" }); len(n) != 0 {
			t.Errorf("%s: a label became markup", p)
		}
		scripts := elems(doc, atom.Script, "")
		if len(scripts) != 1 || attr(scripts[0], "src") != "/static/site.js" {
			t.Errorf("%s: %d scripts", p, len(scripts))
		}
		if p == ReleasesPath && !strings.Contains(text(doc), `Kafka <b id="x">old</b> →`) {
			t.Errorf("%s: the label is not shown as text", p)
		}
	}
	for _, p := range s.Paths() {
		if strings.HasPrefix(p, "/vectors/") {
			t.Errorf("vectors file %s for an unsafe label", p)
		}
	}
}

// TestPagesWellFormed checks the kinds of pages the extension makes: no
// duplicate ids, no inline script or style, no other origin.
func TestPagesWellFormed(t *testing.T) {
	s := siteAll(t)
	for _, p := range []string{"/apis/Fetch/", "/apis/Fetch/v4/", "/apis/LeaderAndIsr/", "/apis/LeaderAndIsr/v0/", "/apis/Produce/v0/", "/apis/Produce/v2/", "/apis/Fetch/v3/", "/apis/Produce/", "/apis/Fetch/diff/",
		"/apis/Fetch/diff/v4..v18/", ReleasesPath, "/apis/ApiVersions/diff/v2..v3/"} {
		doc := parse(t, s, p)
		ids := map[string]bool{}
		for _, n := range find(doc, func(n *html.Node) bool { return attr(n, "id") != "" }) {
			if id := attr(n, "id"); ids[id] {
				t.Errorf("%s: duplicate id %q", p, id)
			} else {
				ids[id] = true
			}
		}
		for _, n := range find(doc, func(*html.Node) bool { return true }) {
			for _, a := range n.Attr {
				if a.Key == "style" || strings.HasPrefix(a.Key, "on") {
					t.Errorf("%s: attribute %s", p, a.Key)
				}
				if (a.Key == "href" || a.Key == "src" || a.Key == "action") && !strings.HasPrefix(a.Val, "/") && !strings.HasPrefix(a.Val, "#") &&
					(n.DataAtom != atom.A || !htmlr.IsReferenceLink(a.Val)) { // KIP and Jira numbers in schema comments may leave
					t.Errorf("%s: %s=%q leaves the site", p, a.Key, a.Val)
				}
			}
			if n.DataAtom == atom.Style || (n.DataAtom == atom.Script && attr(n, "src") == "") {
				t.Errorf("%s: inline %s", p, n.Data)
			}
		}
		// Every site link resolves.
		for _, a := range elems(doc, atom.A, "") {
			h := attr(a, "href")
			if strings.HasPrefix(h, "/") {
				if _, ok := s.Lookup(strings.SplitN(h, "#", 2)[0]); !ok {
					t.Errorf("%s links %s, which the site lacks", p, h)
				}
			}
		}
	}
}

// TestServeReversedPairs checks the handler `manifester serve` registers:
// pairs the static site lacks (newer to older) are rendered on request.
func TestServeReversedPairs(t *testing.T) {
	s, ext := build(t, &builtAll, allReleases)
	srv := server.New(s)
	srv.HandlePages("GET /apis/{name}/diff/{pair}/", &server.Pages{Source: ext.Handler(s)})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	get := func(p string) (int, string) {
		resp, err := http.Get(hs.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/apis/Fetch/diff/v13..v12/")
	if code != 200 {
		t.Fatalf("reversed pair: %d", code)
	}
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if h := text(elems(doc, atom.H1, "")[0]); h != "Fetch v13 → v12" {
		t.Errorf("title %q", h)
	}
	if got := structFields(doc)["FetchRequest.Topics (FetchTopic)"]; !slices.Contains(got, "chg-add + Topic string (versions 0-12)") {
		t.Errorf("reverse view: %q", got)
	}
	// Removed APIs too, from their release.
	if code, _ := get("/apis/LeaderAndIsr/diff/v7..v0/"); code != 200 {
		t.Errorf("LeaderAndIsr reversed pair: %d", code)
	}
	// A pre-rendered pair is the site's bytes.
	_, pre := get("/apis/Fetch/diff/v12..v13/")
	if a, _ := s.Lookup("/apis/Fetch/diff/v12..v13/"); pre != string(a.Body) {
		t.Error("a pre-rendered pair is not served from the site")
	}
	for _, p := range []string{"/apis/Fetch/diff/v3..v2/", "/apis/Fetch/diff/v12..v12/", "/apis/Fetch/diff/v99999..v1/",
		"/apis/Nope/diff/v1..v0/", "/apis/Fetch/diff/x/", "/apis/Fetch/diff/v13..v12%3Cb%3E/"} {
		if code, body := get(p); code != 404 || !strings.Contains(body, "Page not found") {
			t.Errorf("%s: %d, want the 404 page", p, code)
		}
	}
}

// BenchmarkBuildAll builds the whole site in memory with the five releases
// loaded (already parsed): API pages, history sections, every version
// pair, /releases/, removed APIs, per-release vectors, gzip of every file.
func BenchmarkBuildAll(b *testing.B) {
	var rels []*release.Release
	for _, l := range benchReleases {
		rels = append(rels, loadRelease(b, l))
	}
	b.ResetTimer()
	for range b.N {
		ext := New()
		if _, err := site.Build(site.Options{Releases: rels, Extensions: []site.Extension{ext.Extension()}}); err != nil {
			b.Fatal(err)
		}
	}
}
