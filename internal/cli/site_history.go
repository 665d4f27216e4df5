package cli

import (
	"net/http"

	"github.com/manifester/manifester/internal/histsite"
	"github.com/manifester/manifester/internal/refsite"
	"github.com/manifester/manifester/internal/server"
)

// siteHistory puts the version and release history on the site that build
// and serve make: "changes" and "accepted by Kafka" on every API page,
// /apis/<Name>/diff/..., /releases/, removed APIs' pages and
// /vectors/<release>.jsonl.
var siteHistory = histsite.New()

// serveHistory answers the diffs the static site does not hold: the
// reversed pairs (B > A), and, for an API of more than
// histsite.AllPairsMax versions, the forward pairs that are neither
// adjacent nor to the newest. A key or another letter case for the API is
// redirected as serveReference redirects it elsewhere below /apis/ (this
// pattern is more specific than its).
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
		if _, held := s.Lookup(target); !held && !h.Serves(target) {
			srv.NotFound(w, r)
			return
		}
		redirect(w, r, target)
	}))
	return nil
}
