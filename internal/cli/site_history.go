package cli

import (
	"github.com/manifester/manifester/internal/histsite"
	"github.com/manifester/manifester/internal/server"
)

// siteHistory puts the version and release history on the site that build
// and serve make: "changes" and "accepted by Kafka" on every API page,
// /apis/<Name>/diff/..., /releases/, removed APIs' pages and
// /vectors/<release>.jsonl.
var siteHistory = histsite.New()

// serveHistory answers the diffs the static site does not hold: it holds
// every pair A < B; serve answers B > A.
func serveHistory(srv *server.Server, _ *Env) error {
	srv.Handle("GET /apis/{name}/diff/{pair}/", siteHistory.Handler(srv.Site()))
	return nil
}
