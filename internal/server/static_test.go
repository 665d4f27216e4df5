package server

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/release"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/site"
)

// TestStaticRevalidated: the assets under /static/ keep their URLs from
// build to build (the pages and the written site stay as they are), so a
// browser must ask again each time: no-cache, answered 304 while the
// ETag still names the bytes. They used to be cached for an hour, which
// kept a new build's CSS and script stale.
func TestStaticRevalidated(t *testing.T) {
	s := testSite(t)
	h := New(s)
	n := 0
	for _, p := range s.Paths() {
		if !strings.HasPrefix(p, "/static/") {
			continue
		}
		n++
		a, _ := s.Lookup(p)
		w := do(t, h, "GET", p, nil)
		if w.Code != 200 || w.Header().Get("Cache-Control") != "no-cache" || w.Header().Get("ETag") != a.ETag {
			t.Errorf("GET %s: %d, Cache-Control %q, ETag %q; want 200, no-cache, %s", p, w.Code, w.Header().Get("Cache-Control"), w.Header().Get("ETag"), a.ETag)
		}
		if w.Header().Get("Content-Type") == "" {
			t.Errorf("GET %s: no Content-Type", p)
		}
		checkSecurity(t, w)
		w = do(t, h, "GET", p, map[string]string{"If-None-Match": a.ETag})
		if w.Code != 304 || w.Body.Len() != 0 || w.Header().Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s with its ETag: %d, %d bytes, Cache-Control %q; want an empty 304, no-cache", p, w.Code, w.Body.Len(), w.Header().Get("Cache-Control"))
		}
	}
	if n < 2 {
		t.Fatalf("%d assets under /static/; want site.css, site.js and more", n)
	}
}

// TestStaticChangeSeen builds a site whose stylesheet differs: its ETag
// differs, so a browser holding the old one gets the new bytes.
func TestStaticChangeSeen(t *testing.T) {
	old, _ := testSite(t).Lookup("/static/site.css")
	changed := append(bytes.Clone(old.Body), "\n/* the next build */\n"...)
	st := smallSiteWith(t, site.Options{Extensions: []site.Extension{{Name: "restyle", Routes: func(b *site.Builder) error {
		return b.Replace("/static/site.css", site.TypeCSS, changed)
	}}}})
	a, _ := st.Lookup("/static/site.css")
	if a.ETag == old.ETag {
		t.Fatalf("a changed stylesheet kept its ETag %s", a.ETag)
	}
	w := do(t, New(st), "GET", "/static/site.css", map[string]string{"If-None-Match": old.ETag})
	if w.Code != 200 || !bytes.Equal(w.Body.Bytes(), changed) || w.Header().Get("ETag") != a.ETag {
		t.Errorf("the old ETag against the new stylesheet: %d, %d bytes, ETag %q; want 200 with the new bytes and %s", w.Code, w.Body.Len(), w.Header().Get("ETag"), a.ETag)
	}
}

// smallSiteWith builds a site with opts of two APIs of Kafka 4.3 (their
// spec files copied to a temporary directory), for tests that need a
// build of their own.
func smallSiteWith(t *testing.T, opts site.Options) *site.Site {
	t.Helper()
	testSite(t) // skips when the shared specs are missing
	dir := t.TempDir()
	for _, f := range []string{"ApiVersionsRequest.json", "ApiVersionsResponse.json", "SaslHandshakeRequest.json", "SaslHandshakeResponse.json"} {
		b, err := os.ReadFile(filepath.Join(spec43, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := schema.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	opts.Releases = []*release.Release{{Label: "4.3", Codec: codec.New(reg)}}
	st, err := site.Build(opts)
	if err != nil {
		t.Fatal(err)
	}
	return st
}
