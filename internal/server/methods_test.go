package server

import (
	"net/http"
	"testing"

	"github.com/manifester/manifester/internal/site"
)

// TestDynamicGETOtherMethods registers a GET handler as serve registers
// the reverse diff pages ("GET /apis/{name}/diff/{pair}/", pages the site
// does not hold): other methods there get 405 with Allow: GET, HEAD, as
// on the site's own pages. They used to get 404.
func TestDynamicGETOtherMethods(t *testing.T) {
	for _, base := range []string{"", "/p/"} {
		st := testSite(t)
		prefix := "/"
		if base != "" {
			st = smallSiteAt(t, base)
			prefix = base
		}
		srv := New(st)
		RegisterDecode(srv, st)
		srv.Handle("GET /apis/{name}/diff/{pair}/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", site.TypeHTML)
			w.Write([]byte("<p>diff</p>"))
		}))
		path := prefix + "apis/ApiVersions/diff/v3..v1/"
		for _, m := range []string{"POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
			w := do(t, srv, m, path, nil)
			if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" || w.Header().Get("Content-Type") == "" {
				t.Errorf("%s %s: %d, Allow %q, Content-Type %q; want 405, GET, HEAD", m, path, w.Code, w.Header().Get("Allow"), w.Header().Get("Content-Type"))
			}
			checkSecurity(t, w)
		}
		for _, m := range []string{"GET", "HEAD"} {
			if w := do(t, srv, m, path, nil); w.Code != http.StatusOK {
				t.Errorf("%s %s: %d, want 200", m, path, w.Code)
			}
		}
		// Paths no handler takes stay 404 for every method.
		if w := do(t, srv, "POST", prefix+"no/such/page/", nil); w.Code != http.StatusNotFound {
			t.Errorf("POST to an unknown path: %d, want 404", w.Code)
		}
		// The decode form still posts to its page.
		if w := do(t, srv, "PUT", prefix+"decode/", nil); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD, POST" {
			t.Errorf("PUT /decode/: %d, Allow %q", w.Code, w.Header().Get("Allow"))
		}
	}
}

// smallSiteAt is smallSite with the decode page under a base path.
func smallSiteAt(t *testing.T, base string) *site.Site {
	t.Helper()
	return smallSiteWith(t, site.Options{BasePath: base, DecodePage: true})
}
