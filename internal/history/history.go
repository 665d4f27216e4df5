// Package history holds several Kafka releases at once, oldest first, and
// answers questions across them: which releases accept a version of an API
// ([History.Accepted], [History.Table]), which APIs exist only in older
// releases ([History.Removed]), what changed between consecutive releases
// ([History.ReleaseDiffs]) and the test vectors of each release
// ([History.VectorLines]).
//
// A History is built once from loaded registries and is read-only after
// that, so it is safe for concurrent use.
package history

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/manifester/manifester/internal/diff"
	"github.com/manifester/manifester/internal/release"
	"github.com/manifester/manifester/internal/schema"
)

// History is a set of releases, oldest first.
type History struct {
	Releases []*release.Release
	byLabel  map[string]*release.Release
}

// New returns the history of rels, which must be sorted oldest first and
// carry distinct labels. A release without a codec gets one (and one
// with only a codec, its registry).
func New(rels []*release.Release) (*History, error) {
	if len(rels) == 0 {
		return nil, fmt.Errorf("history: no releases")
	}
	h := &History{Releases: rels, byLabel: make(map[string]*release.Release, len(rels))}
	for _, r := range rels {
		if r == nil || r.Reg == nil && r.Codec == nil {
			return nil, fmt.Errorf("history: release without a registry")
		}
		if _, dup := h.byLabel[r.Label]; dup {
			return nil, fmt.Errorf("history: two releases are labelled %q", r.Label)
		}
		if err := r.Complete(); err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		h.byLabel[r.Label] = r
	}
	return h, nil
}

// Newest returns the newest release, which drives the pages.
func (h *History) Newest() *release.Release { return h.Releases[len(h.Releases)-1] }

// Release returns the release with the given label.
func (h *History) Release(label string) (*release.Release, bool) {
	r, ok := h.byLabel[label]
	return r, ok
}

// Labels returns the release labels, oldest first.
func (h *History) Labels() []string {
	out := make([]string, len(h.Releases))
	for i, r := range h.Releases {
		out[i] = r.Label
	}
	return out
}

// message returns the request or response message of API key in r, or nil.
func message(r *release.Release, key int16, kind schema.MessageType) *schema.Message {
	api, ok := r.Reg.API(key)
	if !ok {
		return nil
	}
	if kind == schema.TypeResponse {
		return api.Response
	}
	return api.Request
}

// Acceptance tells which loaded releases accept one version of one message.
type Acceptance struct {
	// First and Last are the oldest and newest loaded releases in which
	// the version is valid and stable; both are "" when none is.
	First string `json:"first"`
	Last  string `json:"last"`
	// Releases lists every loaded release in which the version is valid
	// and stable, oldest first.
	Releases []string `json:"releases"`
	// Unstable lists the releases in which the version is valid but is the
	// unstable latest version (latestVersionUnstable): brokers only accept
	// it with unstable.api.versions.enable.
	Unstable []string `json:"unstable,omitempty"`
	// Current reports whether the newest loaded release accepts it.
	Current bool `json:"current"`
}

// Accepted returns which loaded releases accept version v of API key's
// request or response (kind).
func (h *History) Accepted(key int16, kind schema.MessageType, v int16) Acceptance {
	a := Acceptance{Releases: []string{}}
	for _, r := range h.Releases {
		m := message(r, key, kind)
		if m == nil || !m.Valid.Contains(v) {
			continue
		}
		if m.LatestVersionUnstable && v == m.Valid.Hi {
			a.Unstable = append(a.Unstable, r.Label)
			continue
		}
		if a.First == "" {
			a.First = r.Label
		}
		a.Last = r.Label
		a.Releases = append(a.Releases, r.Label)
	}
	a.Current = a.Last != "" && a.Last == h.Newest().Label
	return a
}

// VersionRow is the "accepted by Kafka" row of one version of an API.
type VersionRow struct {
	Version  int16      `json:"version"`
	Request  Acceptance `json:"request"`
	Response Acceptance `json:"response"`
}

// Table returns one row per version that any loaded release defines for
// API key, lowest version first.
func (h *History) Table(key int16) []VersionRow {
	// The versions the releases define, not the span from the lowest to
	// the highest: releases at "0-1" and "30000-30001" define four.
	defined := map[int16]bool{}
	for _, r := range h.Releases {
		for _, kind := range []schema.MessageType{schema.TypeRequest, schema.TypeResponse} {
			if m := message(r, key, kind); m != nil && !m.Valid.Empty() {
				for v := m.Valid.Lo; v <= m.Valid.Hi; v++ {
					defined[v] = true
					if v == schema.MaxVersion {
						break
					}
				}
			}
		}
	}
	var rows []VersionRow
	for _, v := range slices.Sorted(maps.Keys(defined)) {
		rows = append(rows, VersionRow{
			Version:  v,
			Request:  h.Accepted(key, schema.TypeRequest, v),
			Response: h.Accepted(key, schema.TypeResponse, v),
		})
	}
	return rows
}

// RemovedAPI is an API that has versions in an older release but none in
// the newest one (gone, or left as a reserved key).
type RemovedAPI struct {
	Key  int16
	Name string
	// LastRelease is the newest release that defines versions for it; API
	// and Release are its definition there, to build its pages from.
	LastRelease string
	API         *schema.API
	Release     *release.Release
	// RemovedIn is the first release after LastRelease, where it has no
	// versions any more.
	RemovedIn string
	// Reserved reports whether the newest release keeps the key reserved
	// (validVersions "none").
	Reserved bool
}

// Removed returns the APIs that exist only in older releases, by key.
// An API whose name a newer API has in any letter case (one of the newest
// release, or a removed API defined by a newer release) is left out:
// pages are by name, and the name's pages are the newer API's.
func (h *History) Removed() []RemovedAPI {
	newest := h.Newest()
	var out []RemovedAPI
	seen := map[int16]bool{}
	taken := map[string]bool{}
	for _, api := range newest.Reg.APIs {
		if !api.Reserved() {
			taken[strings.ToLower(api.Name)] = true
		}
	}
	for i := len(h.Releases) - 2; i >= 0; i-- {
		r := h.Releases[i]
		for _, api := range r.Reg.APIs {
			if seen[api.Key] || api.Reserved() {
				continue
			}
			if cur, ok := newest.Reg.API(api.Key); ok && !cur.Reserved() {
				continue
			}
			seen[api.Key] = true
			if taken[strings.ToLower(api.Name)] {
				continue
			}
			taken[strings.ToLower(api.Name)] = true
			cur, ok := newest.Reg.API(api.Key)
			out = append(out, RemovedAPI{
				Key: api.Key, Name: api.Name, LastRelease: r.Label, API: api, Release: r,
				RemovedIn: h.Releases[i+1].Label, Reserved: ok && cur.Reserved(),
			})
		}
	}
	slices.SortFunc(out, func(a, b RemovedAPI) int { return int(a.Key) - int(b.Key) })
	return out
}

// Defining returns the newest release in which API key has versions, and
// the API there.
func (h *History) Defining(key int16) (*release.Release, *schema.API, bool) {
	for i := len(h.Releases) - 1; i >= 0; i-- {
		r := h.Releases[i]
		if api, ok := r.Reg.API(key); ok && !api.Reserved() {
			return r, api, true
		}
	}
	return nil, nil, false
}

// ReleaseDiffs returns the diff of each pair of consecutive releases,
// oldest pair first.
func (h *History) ReleaseDiffs() []*diff.ReleaseDiff {
	var out []*diff.ReleaseDiff
	for i := 1; i < len(h.Releases); i++ {
		out = append(out, releaseDiff(h.Releases[i-1], h.Releases[i]))
	}
	return out
}

// releaseDiff diffs two releases under their history labels.
func releaseDiff(a, b *release.Release) *diff.ReleaseDiff {
	d := diff.Releases(a.Reg, b.Reg)
	d.From, d.To = a.Label, b.Label
	return d
}

// ReleaseDiff returns the diff between the releases labelled from and to.
func (h *History) ReleaseDiff(from, to string) (*diff.ReleaseDiff, error) {
	a, ok := h.Release(from)
	if !ok {
		return nil, fmt.Errorf("no release labelled %q is loaded (loaded: %v)", from, h.Labels())
	}
	b, ok := h.Release(to)
	if !ok {
		return nil, fmt.Errorf("no release labelled %q is loaded (loaded: %v)", to, h.Labels())
	}
	return releaseDiff(a, b), nil
}

// Lookup finds an API by name or key in the newest release that knows it
// (so that names only older releases define, such as LeaderAndIsr, still
// resolve), and returns its key. The error is the newest release's, with
// its suggestions.
func (h *History) Lookup(nameOrKey string) (int16, error) {
	var first error
	for i := len(h.Releases) - 1; i >= 0; i-- {
		api, err := h.Releases[i].Reg.Lookup(nameOrKey)
		if err == nil {
			return api.Key, nil
		}
		if first == nil {
			first = err
		}
	}
	return 0, first
}

// ReleaseFor returns the newest release in which API key has both versions
// a and b valid, for a version diff that spans releases' ranges.
func (h *History) ReleaseFor(key int16, a, b int16) (*release.Release, *schema.API, bool) {
	for i := len(h.Releases) - 1; i >= 0; i-- {
		r := h.Releases[i]
		if api, ok := r.Reg.API(key); ok && api.Request.Valid.Contains(a) && api.Request.Valid.Contains(b) {
			return r, api, true
		}
	}
	return nil, nil, false
}
