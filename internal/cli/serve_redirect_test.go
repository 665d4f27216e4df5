package cli

import (
	"io"
	"net/http"
	"testing"
)

// TestServeAPIRedirectsBelowDiff: serve answers a key or another letter
// case for the API with 301 anywhere below /apis/ (docs/site.md), the
// version-diff pages included, reversed pairs (served, not built) too;
// a pair no page answers stays 404.
func TestServeAPIRedirectsBelowDiff(t *testing.T) {
	base := serveWith(t, "--spec", "3.9="+diffSpecs+"3.9", "--spec", "4.3="+diffSpecs+"4.3")
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(p string) (int, string) {
		resp, err := c.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Location")
	}
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
