package cli

import (
	"net/http"
	"strings"

	"github.com/manifester/manifester/internal/histsite"
	"github.com/manifester/manifester/internal/refsite"
	"github.com/manifester/manifester/internal/server"
	"github.com/manifester/manifester/internal/site"
)

// siteHistory puts the version and release history on the site that build
// and serve make: "changes" and "accepted by Kafka" on every API page,
// /apis/<Name>/diff/..., /releases/, removed APIs' pages and
// /vectors/<release>.jsonl.
var siteHistory = histsite.New()

// serveHistory answers the diffs the static site does not hold: it holds
// every pair A < B; serve answers B > A. A key or another letter case for
// the API is redirected as serveReference redirects it elsewhere below
// /apis/ (this pattern is more specific than its).
func serveHistory(srv *server.Server, _ *Env) error {
	s := srv.Site()
	reg := s.Newest().Codec.Reg
	h := siteHistory.Handler(s)
	srv.Handle("GET /apis/{name}/diff/{pair}/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target, ok := refsite.Resolve(reg, r.URL.Path)
		if !ok {
			h.ServeHTTP(w, r)
			return
		}
		if !diffServed(s, target) {
			srv.NotFound(w, r)
			return
		}
		redirect(w, r, target)
	}))
	return nil
}

// diffServed reports whether serve answers a diff page: the site holds it,
// or it is the reverse of a pair the site holds.
func diffServed(s *site.Site, p string) bool {
	if _, ok := s.Lookup(p); ok {
		return true
	}
	dir, pair, ok := strings.Cut(strings.TrimSuffix(p, "/"), "/diff/")
	if !ok {
		return false
	}
	from, to, ok := strings.Cut(pair, "..")
	if !ok {
		return false
	}
	_, ok = s.Lookup(dir + "/diff/" + to + ".." + from + "/")
	return ok
}
