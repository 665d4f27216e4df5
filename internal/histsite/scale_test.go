package histsite

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/release"
	htmlr "github.com/manifester/manifester/internal/render/html"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/server"
	"github.com/manifester/manifester/internal/site"
)

// craftedHeaders are the two header specs every synthetic release needs.
const craftedHeaders = `{"type": "header", "name": "RequestHeader", "validVersions": "1-2", "flexibleVersions": "2+",
  "fields": [{"name": "RequestApiKey", "type": "int16", "versions": "0+"}, {"name": "RequestApiVersion", "type": "int16", "versions": "0+"},
    {"name": "CorrelationId", "type": "int32", "versions": "0+"},
    {"name": "ClientId", "type": "string", "versions": "1+", "nullableVersions": "1+", "flexibleVersions": "none"}]}`

const craftedResponseHeader = `{"type": "header", "name": "ResponseHeader", "validVersions": "0-1", "flexibleVersions": "1+",
  "fields": [{"name": "CorrelationId", "type": "int32", "versions": "0+"}]}`

// craftedSpec is the request of the API "Crafted" (key 1000) at
// validVersions lo..lo+n-1 with the given number of int32 fields: field i
// exists from version lo+i%n on, or (odd i) up to it, so that every
// version adds and removes fields and any two versions differ in about
// fields*|b-a|/n of them.
func craftedSpec(lo, n, fields int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"apiKey": 1000, "type": "request", "name": "CraftedRequest", "validVersions": "%d-%d", "flexibleVersions": "none",
  "fields": [`, lo, lo+n-1)
	for i := range fields {
		if i > 0 {
			b.WriteString(",\n    ")
		}
		v := lo + i%n
		vs := fmt.Sprintf("%d+", v)
		if i%2 == 1 {
			vs = fmt.Sprintf("%d-%d", lo, v)
		}
		fmt.Fprintf(&b, `{"name": "CraftedField%05d", "type": "int32", "versions": "%s", "about": "A crafted field."}`, i, vs)
	}
	b.WriteString("]}\n")
	return b.String()
}

// craftedRelease writes and loads a release holding the API "Crafted":
// validVersions lo..lo+n-1, fields fields (see [craftedSpec]).
func craftedRelease(t testing.TB, label string, lo, n, fields int) *release.Release {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"RequestHeader.json":  craftedHeaders,
		"ResponseHeader.json": craftedResponseHeader,
		"CraftedRequest.json": craftedSpec(lo, n, fields),
		"CraftedResponse.json": fmt.Sprintf(`{"apiKey": 1000, "type": "response", "name": "CraftedResponse", "validVersions": "%d-%d", "flexibleVersions": "none",
  "fields": [{"name": "ErrorCode", "type": "int16", "versions": "0+"}]}`, lo, lo+n-1),
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := schema.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	reg.Label = label
	return &release.Release{Label: label, Codec: codec.New(reg)}
}

// BenchmarkCraftedSite builds, compressed, the site of the audit's
// crafted spec: one API of 64 versions (the most package schema accepts)
// and 2,000 fields, every version adding or removing some. It reports the
// site's bytes and files, the bytes of its diff pages and the peak heap
// of a build (package hostile's Measure):
//
//	go test ./internal/histsite -run '^$' -bench CraftedSite -benchtime 1x
func BenchmarkCraftedSite(b *testing.B) {
	rel := craftedRelease(b, "1.0", 0, 64, 2000)
	for range b.N {
		var s *site.Site
		var err error
		u := hostile.Measure(func() {
			s, err = site.Build(site.Options{Releases: []*release.Release{rel}, Extensions: []site.Extension{New().Extension()}})
		})
		if err != nil {
			b.Fatal(err)
		}
		var diffBytes int64
		for _, p := range s.Paths() {
			if strings.Contains(p, "/diff/v") {
				a, _ := s.Lookup(p)
				diffBytes += int64(len(a.Body))
			}
		}
		b.ReportMetric(float64(s.Stats.Bytes)/1e6, "site-MB")
		b.ReportMetric(float64(s.Stats.Files), "files")
		b.ReportMetric(float64(diffBytes)/1e6, "diff-MB")
		b.ReportMetric(float64(u.Peak)/1e6, "peak-MB")
	}
}

// buildCrafted builds the site of the given releases without compressing.
func buildCrafted(t *testing.T, rels ...*release.Release) (*site.Site, *Ext) {
	t.Helper()
	ext := New()
	s, err := site.Build(site.Options{Releases: rels, Extensions: []site.Extension{ext.Extension()}, NoCompress: true})
	if err != nil {
		t.Fatal(err)
	}
	return s, ext
}

// checkRatio fails unless the site bytes of big over small are within 20%
// of want, the ratio of their version counts, and its files grow no
// faster (they may grow slower: the files of the newest release's diffs
// and the static files stay).
func checkRatio(t *testing.T, small, big *site.Site, want float64) {
	t.Helper()
	bytes := float64(big.Stats.Bytes) / float64(small.Stats.Bytes)
	files := float64(big.Stats.Files) / float64(small.Stats.Files)
	t.Logf("bytes %d -> %d (x%.2f), files %d -> %d (x%.2f); versions x%.2f",
		small.Stats.Bytes, big.Stats.Bytes, bytes, small.Stats.Files, big.Stats.Files, files, want)
	if bytes > want*1.2 || bytes < want*0.8 {
		t.Errorf("site bytes grew x%.2f for x%.2f versions: not linear", bytes, want)
	}
	if files > want*1.2 {
		t.Errorf("site files grew x%.2f for x%.2f versions: not linear", files, want)
	}
}

// TestSiteGrowsLinearly builds the site of an API with 33 and with 64
// versions (both above ManyVersions), 400 fields each way: its bytes and
// files grow with the version count, not its square (every pair of
// versions, each with its diff, grew them x3.8).
func TestSiteGrowsLinearly(t *testing.T) {
	small, _ := buildCrafted(t, craftedRelease(t, "1.0", 0, 33, 400))
	big, _ := buildCrafted(t, craftedRelease(t, "1.0", 0, 64, 400))
	checkRatio(t, small, big, 64.0/33)
}

// disjointReleases are k releases of the API "Crafted", release i
// defining versions 64i to 64i+63: the newest's pages have 64(k-1) older
// versions, each with its page.
func disjointReleases(t testing.TB, k, fields int) []*release.Release {
	var rels []*release.Release
	for i := range k {
		rels = append(rels, craftedRelease(t, fmt.Sprintf("1.%d", i), 64*i, 64, fields))
	}
	return rels
}

// TestOlderVersionsGrowLinearly builds the site of 2 and of 8 releases
// with disjoint versions (128 and 512 version pages): the version
// switcher's "older releases" group and the "accepted by Kafka" table,
// which list every version on every page, show windows, so the site grows
// with the version count.
func TestOlderVersionsGrowLinearly(t *testing.T) {
	small, _ := buildCrafted(t, disjointReleases(t, 2, 20)...)
	big, _ := buildCrafted(t, disjointReleases(t, 8, 20)...)
	checkRatio(t, small, big, 4)
	doc := parse(t, big, "/apis/Crafted/v200/")
	rows := acceptedTable(t, doc)
	if len(rows) > 2*htmlr.WindowSpan+3 {
		t.Errorf("the accepted table of v200 has %d rows", len(rows))
	}
	for _, v := range []int{0, 192, 200, 208, 511} {
		if _, ok := rows[fmt.Sprintf("v%d", v)]; !ok {
			t.Errorf("the accepted table of v200 lacks v%d", v)
		}
	}
	if c := rows["v200"]; !c.current || c.reqFirst != "1.3" {
		t.Errorf("v200's row: %+v", c)
	}
	if gaps := elems(byID(t, doc, "accepted"), atom.Tr, "gap"); len(gaps) != 2 {
		t.Errorf("%d gap rows, want 2", len(gaps))
	}
	checkLinks(t, big, "/apis/Crafted/v200/", "/apis/Crafted/v511/", "/apis/Crafted/v0/", "/apis/Crafted/diff/")
}

// checkLinks fails for each link of the pages to a site path the site
// lacks.
func checkLinks(t *testing.T, s *site.Site, paths ...string) {
	t.Helper()
	for _, p := range paths {
		doc := parse(t, s, p)
		for _, n := range find(doc, func(n *html.Node) bool { return attr(n, "href") != "" || attr(n, "action") != "" }) {
			for _, h := range []string{attr(n, "href"), attr(n, "action")} {
				if strings.HasPrefix(h, "/") {
					if _, ok := s.Lookup(strings.SplitN(h, "#", 2)[0]); !ok {
						t.Errorf("%s links %s, which the site lacks", p, h)
					}
				}
			}
		}
	}
}

// TestManyVersionsDiffs checks the diffs of an API with 64 versions: the
// site holds each version's diff from the previous one and to the newest,
// and no other; the diff index lists them with every version's page and
// says that `manifester serve` answers the other pairs; the compare form
// takes version numbers rather than listing every version; no page links
// a pair the site lacks.
func TestManyVersionsDiffs(t *testing.T) {
	s, _ := buildCrafted(t, craftedRelease(t, "1.0", 0, 64, 40))
	var pairs []string
	for _, p := range s.Paths() {
		if strings.HasPrefix(p, "/apis/Crafted/diff/v") {
			pairs = append(pairs, p)
		}
	}
	var want []string
	for a := 0; a < 63; a++ {
		want = append(want, fmt.Sprintf("/apis/Crafted/diff/v%d..v%d/", a, a+1))
		if a+1 < 63 {
			want = append(want, fmt.Sprintf("/apis/Crafted/diff/v%d..v63/", a))
		}
	}
	slices.Sort(want)
	if !slices.Equal(pairs, want) {
		t.Errorf("%d diff pages, want the %d adjacent and to-newest pairs", len(pairs), len(want))
	}
	idx := parse(t, s, "/apis/Crafted/diff/")
	for _, p := range want {
		if len(find(idx, func(n *html.Node) bool { return attr(n, "href") == p })) != 1 {
			t.Errorf("the diff index does not link %s", p)
		}
	}
	for v := range 64 {
		if p := fmt.Sprintf("/apis/Crafted/v%d/", v); len(find(idx, func(n *html.Node) bool { return attr(n, "href") == p })) != 1 {
			t.Errorf("the diff index does not link %s", p)
		}
	}
	if len(elems(idx, atom.Table, "pairs")) != 0 {
		t.Error("the diff index has the table of every pair")
	}
	if txt := text(idx); !strings.Contains(txt, "manifester serve") || !strings.Contains(txt, "125 pairs") {
		t.Errorf("the diff index does not say which pairs serve answers: %q", txt)
	}
	for _, p := range []string{"/apis/Crafted/v30/", "/apis/Crafted/diff/", "/apis/Crafted/diff/v30..v31/"} {
		doc := parse(t, s, p)
		if n := len(elems(doc, atom.Option, "")); n != 0 {
			t.Errorf("%s: the compare form lists %d options", p, n)
		}
		var inputs []string
		for _, in := range elems(doc, atom.Input, "") {
			inputs = append(inputs, attr(in, "name")+" "+attr(in, "type")+" "+attr(in, "min")+"-"+attr(in, "max"))
		}
		if !slices.Equal(inputs, []string{"from number 0-63", "to number 0-63"}) {
			t.Errorf("%s: compare form inputs %q", p, inputs)
		}
	}
	checkLinks(t, s, "/apis/Crafted/", "/apis/Crafted/v0/", "/apis/Crafted/v30/", "/apis/Crafted/diff/", "/apis/Crafted/diff/v30..v31/", "/apis/Crafted/diff/v30..v63/")
}

// TestServeForwardPairs: `manifester serve` answers the pairs of an API
// with 64 versions that the static site does not hold, forward and
// reversed, and the 404 page for a version out of range.
func TestServeForwardPairs(t *testing.T) {
	s, ext := buildCrafted(t, craftedRelease(t, "1.0", 0, 64, 40))
	h := ext.Handler(s)
	srv := server.New(s)
	srv.HandlePages("GET /apis/{name}/diff/{pair}/", &server.Pages{Source: h})
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
	for _, c := range []struct {
		path  string
		title string
	}{{"/apis/Crafted/diff/v3..v40/", "Crafted v3 → v40"}, {"/apis/Crafted/diff/v40..v3/", "Crafted v40 → v3"}} {
		if _, ok := s.Lookup(c.path); ok {
			t.Fatalf("the site holds %s", c.path)
		}
		if !h.Serves(c.path) {
			t.Errorf("Serves(%s) = false", c.path)
		}
		code, body := get(c.path)
		if code != 200 {
			t.Fatalf("%s: %d", c.path, code)
		}
		doc, err := html.Parse(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if got := text(elems(doc, atom.H1, "")[0]); got != c.title {
			t.Errorf("%s: title %q", c.path, got)
		}
		// Field 4 exists from v4 on: v3 -> v40 adds it.
		if got := structFields(doc)["CraftedRequest"]; c.path == "/apis/Crafted/diff/v3..v40/" && !slices.Contains(got, "chg-add + CraftedField00004 int32 (versions 4+)") {
			t.Errorf("%s lacks the fields added: %q", c.path, got)
		}
	}
	for _, p := range []string{"/apis/Crafted/diff/v3..v64/", "/apis/Crafted/diff/v64..v3/", "/apis/Crafted/diff/v7..v7/", "/apis/Crafted/diff/v-1..v3/"} {
		if h.Serves(p) {
			t.Errorf("Serves(%s) = true", p)
		}
		if code, body := get(p); code != 404 || !strings.Contains(body, "Page not found") {
			t.Errorf("%s: %d, want the 404 page", p, code)
		}
	}
}

// TestAllPairsThreshold: an API of AllPairsMax versions keeps every pair
// and the from × to table; one more version, and the site holds the
// adjacent and to-newest pairs. Every API of Kafka's releases is under the
// threshold, so its pages keep every pair.
func TestAllPairsThreshold(t *testing.T) {
	for _, c := range []struct{ n, pairs int }{{AllPairsMax, AllPairsMax * (AllPairsMax - 1) / 2}, {AllPairsMax + 1, 2*(AllPairsMax+1) - 3}} {
		s, _ := buildCrafted(t, craftedRelease(t, "1.0", 0, c.n, 4))
		got := 0
		for _, p := range s.Paths() {
			if strings.HasPrefix(p, "/apis/Crafted/diff/v") {
				got++
			}
		}
		if got != c.pairs {
			t.Errorf("%d versions: %d diff pages, want %d", c.n, got, c.pairs)
		}
		table := len(elems(parse(t, s, "/apis/Crafted/diff/"), atom.Table, "pairs")) == 1
		if table != (c.n <= AllPairsMax) {
			t.Errorf("%d versions: pair table %v", c.n, table)
		}
	}
	widest, name := 0, ""
	for _, l := range allReleases {
		for _, api := range loadRelease(t, l).Codec.Reg.APIs {
			if n := int(api.Request.Valid.Hi) - int(api.Request.Valid.Lo) + 1; !api.Reserved() && n > widest {
				widest, name = n, l+" "+api.Name
			}
		}
	}
	t.Logf("widest real API: %s, %d versions", name, widest)
	if widest > AllPairsMax || widest > htmlr.ListMax {
		t.Errorf("%s has %d versions: real APIs lose pairs or switcher entries", name, widest)
	}
	var rels []*release.Release
	for _, l := range allReleases {
		rels = append(rels, loadRelease(t, l))
	}
	d, err := compute(rels)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, ah := range d.apis {
		if len(ah.Rows) > rows {
			rows, name = len(ah.Rows), ah.Name
		}
	}
	t.Logf("longest accepted table: %s, %d versions over %v", name, rows, allReleases)
	if rows > htmlr.ListMax {
		t.Errorf("the accepted table of %s has %d rows: real pages lose rows", name, rows)
	}
}

// TestServePairsCachedAndBounded serves the pairs of an API of 64
// versions that the site does not hold through server.Pages as `manifester
// serve` does, with a cache of 1 MiB: a pair asked again is served from
// the cache with the same bytes, the cache never holds more than its
// bound over 400 distinct pairs, a pair put out of it is rendered again
// with the same bytes, and another spelling of a pair is redirected.
func TestServePairsCachedAndBounded(t *testing.T) {
	const bound = 1 << 20
	s, ext := buildCrafted(t, craftedRelease(t, "1.0", 0, 64, 200))
	pages := &server.Pages{Source: ext.Handler(s), CacheBytes: bound}
	srv := server.New(s)
	srv.HandlePages("GET /apis/{name}/diff/{pair}/", pages)
	get := func(p string) (int, []byte, http.Header) {
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, httptest.NewRequest("GET", p, nil))
		return w.Code, w.Body.Bytes(), w.Header()
	}
	first := DiffPath("Crafted", 40, 3)
	_, want, hdr := get(first)
	if _, again, hdr2 := get(first); !bytes.Equal(again, want) || hdr2.Get("ETag") != hdr.Get("ETag") || pages.Stats().Renders != 1 {
		t.Fatalf("asked twice: equal %v, ETag %q and %q, %d renders (want 1)", bytes.Equal(again, want), hdr.Get("ETag"), hdr2.Get("ETag"), pages.Stats().Renders)
	}
	n := 1
	for a := int16(63); a > 0 && n < 400; a-- {
		for b := a - 1; b >= 0 && n < 400; b -= 3 {
			p := DiffPath("Crafted", a, b)
			if code, body, _ := get(p); code != 200 || !bytes.Contains(body, fmt.Appendf(nil, "Crafted v%d → v%d", a, b)) {
				t.Fatalf("%s: %d", p, code)
			}
			n++
			if st := pages.Stats(); st.CacheBytes > bound {
				t.Fatalf("after %d pairs: the cache holds %d bytes, over its %d", n, st.CacheBytes, bound)
			}
		}
	}
	st := pages.Stats()
	t.Logf("%d pairs rendered, %d kept in %d bytes (peak %d), the first %d bytes", n, st.Cached, st.CacheBytes, st.PeakCacheBytes, len(want))
	if st.Renders != int64(n) || st.PeakCacheBytes > bound || st.Cached >= n || st.Cached == 0 {
		t.Errorf("%d pairs: %d renders, %d kept, peak %d bytes of %d", n, st.Renders, st.Cached, st.PeakCacheBytes, bound)
	}
	if _, again, _ := get(first); !bytes.Equal(again, want) || pages.Stats().Renders != int64(n)+1 {
		t.Errorf("a pair put out and asked again: equal %v, %d renders (want %d)", bytes.Equal(again, want), pages.Stats().Renders, n+1)
	}
	if code, _, h := get("/apis/Crafted/diff/v040..v3/"); code != http.StatusMovedPermanently || h.Get("Location") != first {
		t.Errorf("v040..v3: %d to %q", code, h.Get("Location"))
	}
}
