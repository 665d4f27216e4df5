package site

import (
	"fmt"
	"slices"

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
	defined := map[int16][]schema.Versions{} // by API key: disjoint, ascending
	for _, r := range rels {
		for _, api := range r.Reg.APIs {
			for _, m := range []*schema.Message{api.Request, api.Response} {
				if m == nil || m.Valid.Empty() {
					continue
				}
				vs := addRange(defined[api.Key], m.Valid)
				defined[api.Key] = vs
				if n := countVersions(vs); n > MaxVersions {
					return fmt.Errorf("site: release %s: %w", r.Label, &spec.Error{Pos: validVersionsPos(m),
						Err: fmt.Errorf("API %s (key %d) has %d versions over the loaded releases, more than the %d the site makes pages for",
							api.Name, api.Key, n, MaxVersions)})
				}
			}
		}
	}
	return nil
}

// addRange adds v to the disjoint ascending ranges vs, merging the ranges
// it overlaps or touches.
func addRange(vs []schema.Versions, v schema.Versions) []schema.Versions {
	out := make([]schema.Versions, 0, len(vs)+1)
	for _, x := range vs {
		switch {
		case int(x.Hi)+1 < int(v.Lo) || int(v.Hi)+1 < int(x.Lo):
			out = append(out, x)
		default:
			v = schema.Versions{Lo: min(x.Lo, v.Lo), Hi: max(x.Hi, v.Hi)}
		}
	}
	out = append(out, v)
	slices.SortFunc(out, func(a, b schema.Versions) int { return int(a.Lo) - int(b.Lo) })
	return out
}

func countVersions(vs []schema.Versions) int {
	n := 0
	for _, v := range vs {
		n += int(v.Hi) - int(v.Lo) + 1
	}
	return n
}

// validVersionsPos finds the validVersions of a message in its source,
// or names the file alone.
func validVersionsPos(m *schema.Message) spec.Pos {
	if f, err := spec.Parse(m.File, m.Source); err == nil && f.Message.ValidVersions.Pos.Line > 0 {
		return f.Message.ValidVersions.Pos
	}
	return spec.Pos{File: m.File}
}
