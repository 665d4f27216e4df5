package cli

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/manifester/manifester/internal/histsite"
)

// TestServeAPIRedirectsBelowDiff: serve answers a key or another letter
// case for the API with 301 anywhere below /apis/ (docs/site.md), the
// version-diff pages included, reversed pairs (served, not built) too;
// a pair no page answers stays 404.
func TestServeAPIRedirectsBelowDiff(t *testing.T) {
	base := serveWith(t, "--spec", "3.9="+diffSpecs+"3.9", "--spec", "4.3="+diffSpecs+"4.3")
	get := noRedirectGet(t, base)
	for from, to := range map[string]string{
		"/apis/fetch/diff/v4..v5/":        "/apis/Fetch/diff/v4..v5/",
		"/apis/1/diff/v4..v5/?x=1":        "/apis/Fetch/diff/v4..v5/?x=1",
		"/apis/FETCH/diff/v13..v12/":      "/apis/Fetch/diff/v13..v12/",
		"/apis/1/diff/v13..v12/":          "/apis/Fetch/diff/v13..v12/",
		"/apis/leaderandisr/diff/v0..v7/": "/apis/LeaderAndIsr/diff/v0..v7/",
		"/apis/alterconfigs/diff/v2..v0/": "/apis/AlterConfigs/diff/v2..v0/",
		"/apis/alterconfigs/v1/":          "/apis/AlterConfigs/v1/",
		"/apis/33/diff/":                  "/apis/AlterConfigs/diff/",
	} {
		if code, loc := get(from); code != http.StatusMovedPermanently || loc != to {
			t.Errorf("GET %s: %d to %q, want 301 to %s", from, code, loc, to)
		}
	}
	for _, p := range []string{"/apis/fetch/diff/v4..v99/", "/apis/1/diff/v0..v4/", "/apis/nosuch/diff/v1..v2/", "/apis/Fetch/diff/v4..v99/"} {
		if code, loc := get(p); code != http.StatusNotFound {
			t.Errorf("GET %s: %d %q, want 404", p, code, loc)
		}
	}
	for _, p := range []string{"/apis/Fetch/diff/v13..v12/", "/apis/LeaderAndIsr/diff/v7..v0/"} {
		if code, _ := get(p); code != http.StatusOK {
			t.Errorf("GET %s: %d, want 200", p, code)
		}
	}
}

// TestServeRedirectsUnbuiltForwardPair: for an API of more than
// histsite.AllPairsMax versions the site holds only adjacent pairs and
// those to the newest; serve answers the others, and a key or another
// letter case for the API is redirected to them as to the built ones.
func TestServeRedirectsUnbuiltForwardPair(t *testing.T) {
	dir := t.TempDir()
	const last = histsite.AllPairsMax + 7
	files := map[string]string{
		"RequestHeader.json": `{"type": "header", "name": "RequestHeader", "validVersions": "1-2", "flexibleVersions": "2+",
  "fields": [{"name": "RequestApiKey", "type": "int16", "versions": "0+"}, {"name": "RequestApiVersion", "type": "int16", "versions": "0+"},
    {"name": "CorrelationId", "type": "int32", "versions": "0+"},
    {"name": "ClientId", "type": "string", "versions": "1+", "nullableVersions": "1+", "flexibleVersions": "none"}]}`,
		"ResponseHeader.json": `{"type": "header", "name": "ResponseHeader", "validVersions": "0-1", "flexibleVersions": "1+",
  "fields": [{"name": "CorrelationId", "type": "int32", "versions": "0+"}]}`,
		"WideRequest.json": fmt.Sprintf(`{"apiKey": 1000, "type": "request", "name": "WideRequest", "validVersions": "0-%d", "flexibleVersions": "none",
  "fields": [{"name": "Count", "type": "int32", "versions": "0+"}, {"name": "Later", "type": "int64", "versions": "20+"}]}`, last),
		"WideResponse.json": fmt.Sprintf(`{"apiKey": 1000, "type": "response", "name": "WideResponse", "validVersions": "0-%d", "flexibleVersions": "none",
  "fields": [{"name": "ErrorCode", "type": "int16", "versions": "0+"}]}`, last),
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := serveWith(t, "--spec", dir)
	get := noRedirectGet(t, base)
	for from, to := range map[string]string{
		"/apis/wide/diff/v3..v30/": "/apis/Wide/diff/v3..v30/", // neither built nor reversed
		"/apis/1000/diff/v30..v3/": "/apis/Wide/diff/v30..v3/",
		"/apis/WIDE/diff/v3..v4/":  "/apis/Wide/diff/v3..v4/", // built
	} {
		if code, loc := get(from); code != http.StatusMovedPermanently || loc != to {
			t.Errorf("GET %s: %d to %q, want 301 to %s", from, code, loc, to)
		}
		if code, _ := get(to); code != http.StatusOK {
			t.Errorf("GET %s: %d, want 200", to, code)
		}
	}
	if code, _ := get(fmt.Sprintf("/apis/wide/diff/v3..v%d/", last+1)); code != http.StatusNotFound {
		t.Errorf("a version the API lacks: %d, want 404", code)
	}
}

// noRedirectGet returns a GET of a path below base that follows no
// redirect: the answer's status and Location.
func noRedirectGet(t *testing.T, base string) func(p string) (int, string) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return func(p string) (int, string) {
		t.Helper()
		resp, err := c.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Location")
	}
}
