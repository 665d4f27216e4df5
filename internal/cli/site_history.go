package cli

import (
	"context"

	"github.com/manifester/manifester/internal/histsite"
	"github.com/manifester/manifester/internal/refsite"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/server"
	"github.com/manifester/manifester/internal/site"
)

// siteHistory puts the version and release history on the site that build
// and serve make: "changes" and "accepted by Kafka" on every API page,
// /apis/<Name>/diff/..., /releases/, removed APIs' pages and
// /vectors/<release>.jsonl.
var siteHistory = histsite.New()

// serveHistory answers the diffs the static site does not hold: the
// reversed pairs (B > A), and, for an API of more than
// histsite.AllPairsMax versions, the forward pairs that are neither
// adjacent nor to the newest. They are rendered on request, a few at once,
// and kept in a cache (server.Pages, with its default limits). A key or
// another letter case for the API is redirected as serveReference
// redirects it elsewhere below /apis/ (this pattern is more specific than
// its).
func serveHistory(srv *server.Server, _ *Env) error {
	s := srv.Site()
	src := historyPages{diffs: siteHistory.Handler(s), site: s, reg: s.Newest().Codec.Reg}
	srv.HandlePages("GET /apis/{name}/diff/{pair}/", &server.Pages{Source: src})
	return nil
}

// historyPages are the diff pages rendered on demand, under every name
// refsite.Resolve takes for their API.
type historyPages struct {
	diffs *histsite.DiffHandler
	site  *site.Site
	reg   *schema.Registry
}

// Canonical resolves the API's key or letter case, then the pair: the
// path of a page the site holds or the handler renders.
func (p historyPages) Canonical(urlPath string) (string, bool) {
	if target, ok := refsite.Resolve(p.reg, urlPath); ok {
		if _, held := p.site.Lookup(target); held {
			return target, true
		}
		urlPath = target
	}
	return p.diffs.Canonical(urlPath)
}

// Render renders a diff page.
func (p historyPages) Render(ctx context.Context, urlPath string) ([]byte, error) {
	return p.diffs.Render(ctx, urlPath)
}
