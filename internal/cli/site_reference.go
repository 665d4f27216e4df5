package cli

import (
	"net/http"

	"github.com/manifester/manifester/internal/refsite"
	"github.com/manifester/manifester/internal/server"
)

// serveReference adds the serving side of the reference layer (see
// refsite.Extension, in siteExtensions: /errors/, /types/, /headers/,
// /search/, the grammar of every API page and redirects from API keys and
// other letter cases): serve answers those redirects with 301 for any
// path below the API, where the export has redirect pages for the API
// pages themselves.
func serveReference(srv *server.Server, _ *Env) error {
	s := srv.Site()
	reg := s.Newest().Codec.Reg
	srv.Handle("GET /apis/{name}/{rest...}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target, ok := refsite.Resolve(reg, r.URL.Path)
		if !ok {
			srv.NotFound(w, r)
			return
		}
		if _, found := s.Lookup(target); !found {
			srv.NotFound(w, r)
			return
		}
		redirect(w, r, target)
	}))
	return nil
}

// redirect answers 301 to a site path, keeping the request's query.
func redirect(w http.ResponseWriter, r *http.Request, target string) {
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	http.Redirect(w, r, target, http.StatusMovedPermanently)
}
