package site

import (
	"fmt"

	"github.com/manifester/manifester/internal/release"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/spec"
)

// MaxVersions is the most versions of one API, counted over every loaded
// release, that [Build] makes pages for: an API with more is refused.
// Every version has its page and its JSON, each as large as the API's
// spec, so an API's pages cost its versions times its spec. Package
// schema accepts at most 64 versions in one file, but the versions of an
// API add up over releases (a release defining v0-v63, the next v64-v127,
// and so on), and extensions build pages for the older releases' versions
// too. Kafka's widest API has 19 versions over all its releases (Fetch
// v0-v18); 1,024 leaves fifty times that.
const MaxVersions = 1024

// checkVersions fails when an API has more than [MaxVersions] versions
// over the releases (oldest first): the error names the release and the
// validVersions that go over, as "FooRequest.json:5:20".
func checkVersions(rels []*release.Release) error {
	// The versions seen of each API, by key: package schema holds a
	// message to schema.MaxValidVersions, so each adds few.
	seen := map[int16]map[int16]bool{}
	for _, r := range rels {
		for _, api := range r.Reg.APIs {
			for _, m := range []*schema.Message{api.Request, api.Response} {
				if m == nil || m.Valid.Empty() {
					continue
				}
				vs := seen[api.Key]
				if vs == nil {
					vs = map[int16]bool{}
					seen[api.Key] = vs
				}
				for v := int(m.Valid.Lo); v <= int(m.Valid.Hi); v++ {
					vs[int16(v)] = true
				}
				if n := len(vs); n > MaxVersions {
					return fmt.Errorf("site: release %s: %w", r.Label, &spec.Error{Pos: validVersionsPos(m),
						Err: fmt.Errorf("API %s (key %d) has %d versions over the loaded releases, more than the %d the site makes pages for",
							api.Name, api.Key, n, MaxVersions)})
				}
			}
		}
	}
	return nil
}

// validVersionsPos finds the validVersions of a message in its source,
// or names the file alone.
func validVersionsPos(m *schema.Message) spec.Pos {
	if f, err := spec.Parse(m.File, m.Source); err == nil && f.Message.ValidVersions.Pos.Line > 0 {
		return f.Message.ValidVersions.Pos
	}
	return spec.Pos{File: m.File}
}
