package refsite

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// ids returns every element id of an HTML page.
func ids(t *testing.T, body []byte) map[string]bool {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if a.Key == "id" {
					out[a.Val] = true
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}

// TestSearchIndexLinksResolve checks that every entry of the search index
// links to a page of the built site and, where it has a fragment, to an
// element of that page: every field's tree row, every tagged-field table,
// every error's row.
func TestSearchIndexLinksResolve(t *testing.T) {
	s, reg := site43(t)
	a, ok := s.Lookup(SearchIndexPath)
	if !ok {
		t.Fatal("no search index")
	}
	var entries []Entry
	if err := json.Unmarshal(a.Body, &entries); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	pageIDs := map[string]map[string]bool{}
	for _, e := range entries {
		kinds[e.Kind]++
		if e.Href == "" {
			if e.Kind != "record" {
				t.Errorf("%s %s has no link", e.Kind, e.Name)
			}
			continue
		}
		u, err := url.Parse(e.Href)
		if err != nil {
			t.Fatalf("%s: %v", e.Href, err)
		}
		pa, ok := s.Lookup(u.Path)
		if !ok {
			t.Errorf("%s %s: %s is not a page", e.Kind, e.Name, u.Path)
			continue
		}
		if u.Fragment == "" {
			continue
		}
		if pageIDs[u.Path] == nil {
			pageIDs[u.Path] = ids(t, pa.Body)
		}
		if !pageIDs[u.Path][u.Fragment] {
			t.Errorf("%s %s (%s): no element #%s on %s", e.Kind, e.Name, e.Info, u.Fragment, u.Path)
		}
	}
	if kinds["api"] != len(reg.APIs) {
		t.Errorf("%d API entries for %d APIs", kinds["api"], len(reg.APIs))
	}
	errorNames := 0 // an entry per name: a renamed code has two
	for _, c := range ErrorCodes() {
		errorNames++
		if c.Formerly != "" {
			errorNames++
		}
	}
	if kinds["error"] != errorNames || kinds["field"] < 1000 || kinds["tagged"] < 20 {
		t.Errorf("index kinds: %v", kinds)
	}
}

// TestPagesRender checks the reference pages are in the site, in its
// layout, with what each promises.
func TestPagesRender(t *testing.T) {
	s, reg := site43(t)
	for _, p := range []string{ErrorsPath, TypesPath, HeadersPath, SearchPath, SearchJSPath} {
		if _, ok := s.Lookup(p); !ok {
			t.Fatalf("no %s", p)
		}
	}
	errs, _ := s.Lookup(ErrorsPath)
	eids := ids(t, errs.Body)
	for _, c := range ErrorCodes() {
		if !eids[c.Name] {
			t.Errorf("/errors/ has no #%s", c.Name)
		}
	}
	types, _ := s.Lookup(TypesPath)
	tids := ids(t, types.Body)
	for _, ty := range PrimitiveTypes() {
		if !tids[ty.Name] {
			t.Errorf("/types/ has no #%s", ty.Name)
		}
	}
	hdr, _ := s.Lookup(HeadersPath)
	hids := ids(t, hdr.Body)
	for _, api := range reg.APIs {
		if !api.Reserved() && !hids["api-"+itoa(api.Key)] {
			t.Errorf("/headers/ has no row for %s", api.Name)
		}
	}
	search, _ := s.Lookup(SearchPath)
	if !bytes.Contains(search.Body, []byte(`<script src="/static/search.js" defer></script>`)) ||
		!bytes.Contains(search.Body, []byte("<noscript>")) {
		t.Error("search page lacks its script or its no-script fallback")
	}
	// Every page carries the navigation to the reference pages.
	idx, _ := s.Lookup("/")
	for _, href := range []string{ErrorsPath, TypesPath, HeadersPath, SearchPath} {
		if !bytes.Contains(idx.Body, []byte(`<a href="`+href+`">`)) {
			t.Errorf("index has no link to %s", href)
		}
	}
}

// TestAPIPageExtras checks an API page's grammar section, its error-code
// links and its since-version notes.
func TestAPIPageExtras(t *testing.T) {
	s, reg := site43(t)
	a, _ := s.Lookup("/apis/AlterConfigs/v2/")
	body := string(a.Body)
	for _, want := range []string{`<section id="grammar" class="extra">`, `id="grammar-request"`, `id="grammar-response"`,
		"AlterConfigs Request (Version: 2) =&gt; [resources] validate_only _tagged_fields",
		`<a href="/errors/#NONE">= 0</a>`, `id="request-tagged"`} {
		if !strings.Contains(body, want) {
			t.Errorf("AlterConfigs v2 page lacks %q", want)
		}
	}
	// Fetch has fields added over its versions: each field row of the
	// highest version says since when, matching the spec.
	fetch, _ := reg.APIByName("Fetch")
	f, _ := s.Lookup("/apis/Fetch/")
	fb := string(f.Body)
	n := 0
	for _, fl := range fetch.Request.Body.Fields {
		if fl.Versions.Lo > fetch.Request.Valid.Lo && fl.Versions.Contains(fetch.Request.Valid.Hi) && !fl.IsTagged(fetch.Request.Valid.Hi) {
			n++
			row := `id="request:FetchRequest.` + fl.Name + `"`
			i := strings.Index(fb, row)
			if i < 0 {
				t.Errorf("no row for %s", fl.Name)
				continue
			}
			end := strings.Index(fb[i:], "</tr>")
			if want := "(since v" + itoa(fl.Versions.Lo) + ")"; !strings.Contains(fb[i:i+end], want) {
				t.Errorf("row of %s lacks %q", fl.Name, want)
			}
		}
	}
	if n == 0 {
		t.Error("no Fetch field added after v0 checked")
	}
}

func TestRedirects(t *testing.T) {
	s, reg := site43(t)
	for from, to := range Redirects(reg) {
		a, ok := s.Lookup(from)
		if !ok {
			t.Errorf("no redirect page at %s", from)
			continue
		}
		if !bytes.Contains(a.Body, []byte(`content="0; url=`+to+`"`)) {
			t.Errorf("%s does not lead to %s", from, to)
		}
		if _, ok := s.Lookup(to); !ok {
			t.Errorf("%s leads to missing %s", from, to)
		}
	}
	for in, want := range map[string]string{
		"/apis/33/": "/apis/AlterConfigs/", "/apis/alterconfigs/v1/": "/apis/AlterConfigs/v1/",
		"/apis/ALTERCONFIGS": "/apis/AlterConfigs/", "/apis/1/diff/v3..v4/": "/apis/Fetch/diff/v3..v4/",
	} {
		if got, ok := Resolve(reg, in); !ok || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"/apis/AlterConfigs/", "/apis/NoSuchAPI/", "/apis/9999/", "/errors/"} {
		if got, ok := Resolve(reg, in); ok {
			t.Errorf("Resolve(%q) = %q, want no redirect", in, got)
		}
	}
}
