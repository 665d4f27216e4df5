package schema

import (
	"errors"
	"fmt"
	"sort"

	"github.com/manifester/manifester/internal/spec"
)

// ErrHeaderVersions is the cause of every error in a "headerVersions" map.
var ErrHeaderVersions = errors.New("bad header-version map")

// hverrf records a problem of a header-version map. These are kept apart
// from the message's other errors so that the message still pairs with its
// request or response, and the map's problem is the only one reported.
func (b *builder) hverrf(pos spec.Pos, path string, kind error, format string, args ...any) {
	b.nheaderErrs++
	if b.budget.Keep(pos) {
		b.headerErrs = append(b.headerErrs, &spec.Error{Pos: pos, Path: path, Err: fmt.Errorf("%w: %s", kind, fmt.Sprintf(format, args...))})
	}
}

// headerRef is one message's explicit header-version map, with the
// positions of its entries, kept until the header specs are known.
type headerRef struct {
	m       *Message
	entries []headerEntry
}

type headerEntry struct {
	r         HeaderVersionRange
	rangePos  spec.Pos // the range key, e.g. "2+"
	headerPos spec.Pos // the header version value
}

// headerVersions checks a message's "headerVersions" map as Kafka's
// generator does (HeaderVersions.parse): only requests and responses carry
// one; the ranges, sorted by their first version, start at 0 (the map
// covers removed versions too), follow each other without gap or overlap,
// only the last is open-ended, and none starts above the highest valid
// version. Manifester also rejects a header version lower than the one
// before it. The checks against the header specs themselves run in
// [builder.checkHeaderRefs].
func (b *builder) headerVersions(raw *spec.Message, m *Message) {
	if len(raw.HeaderVersions) == 0 {
		return
	}
	if m.Type != TypeRequest && m.Type != TypeResponse {
		b.hverrf(raw.HeaderVersions[0].Versions.Pos, "headerVersions", ErrHeaderVersions, "headerVersions is only valid on requests and responses, not on a %s", m.Type)
		return
	}
	n := b.nheaderErrs
	var entries []headerEntry
	for _, hv := range raw.HeaderVersions {
		r, err := ParseVersions(hv.Versions.S)
		if err == nil && r.Empty() {
			b.hverrf(hv.Versions.Pos, "headerVersions", ErrHeaderVersions, "the range %q holds no version", hv.Versions.S)
			continue
		}
		if err != nil {
			b.hverrf(hv.Versions.Pos, "headerVersions", ErrHeaderVersions, "%v", err)
			continue
		}
		if hv.Header.N < 0 || hv.Header.N > MaxVersion {
			b.hverrf(hv.Header.Pos, "headerVersions", ErrHeaderVersions, "header version %d for %s is not a version", hv.Header.N, r)
			continue
		}
		entries = append(entries, headerEntry{r: HeaderVersionRange{Versions: r, Header: int16(hv.Header.N)}, rangePos: hv.Versions.Pos, headerPos: hv.Header.Pos})
	}
	if b.nheaderErrs > n {
		return
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].r.Versions.Lo < entries[j].r.Versions.Lo })
	first := entries[0]
	if first.r.Versions.Lo != 0 {
		b.hverrf(first.rangePos, "headerVersions", ErrHeaderVersions, "the first range %s starts at version %d; it must start at 0, covering removed versions too", first.r.Versions, first.r.Versions.Lo)
		return
	}
	for i := 1; i < len(entries); i++ {
		prev, cur := entries[i-1], entries[i]
		switch {
		case prev.r.Versions.Open():
			b.hverrf(prev.rangePos, "headerVersions", ErrHeaderVersions, "the open-ended range %s is followed by %s; only the last range may be open-ended", prev.r.Versions, cur.r.Versions)
			return
		case cur.r.Versions.Lo <= prev.r.Versions.Hi:
			b.hverrf(cur.rangePos, "headerVersions", ErrHeaderVersions, "the range %s overlaps %s", cur.r.Versions, prev.r.Versions)
			return
		case cur.r.Versions.Lo != prev.r.Versions.Hi+1:
			b.hverrf(cur.rangePos, "headerVersions", ErrHeaderVersions, "the ranges are not contiguous: after %s the next range must start at version %d, not %d", prev.r.Versions, prev.r.Versions.Hi+1, cur.r.Versions.Lo)
			return
		case cur.r.Header < prev.r.Header:
			b.hverrf(cur.headerPos, "headerVersions", ErrHeaderVersions, "header version %d for %s is lower than header version %d for %s; header versions never decrease", cur.r.Header, cur.r.Versions, prev.r.Header, prev.r.Versions)
			return
		}
	}
	last := entries[len(entries)-1]
	if !last.r.Versions.Open() {
		b.hverrf(last.rangePos, "headerVersions", ErrHeaderVersions, "the last range %s is not open-ended; it must end with a plus sign", last.r.Versions)
		return
	}
	for _, e := range entries {
		if !m.Valid.Empty() && e.r.Versions.Lo > m.Valid.Hi {
			b.hverrf(e.rangePos, "headerVersions", ErrHeaderVersions, "the range %s starts above the highest valid version %d", e.r.Versions, m.Valid.Hi)
			return
		}
	}
	for _, e := range entries {
		m.HeaderVersions = append(m.HeaderVersions, e.r)
	}
	b.headerRefs = append(b.headerRefs, headerRef{m: m, entries: entries})
}

// checkHeaderRefs checks every explicit header-version map against the
// header specs, as Kafka's MessageSpec does: each header version exists in
// RequestHeader.json or ResponseHeader.json (its validVersions), a flexible
// message version maps to a flexible header version, and ApiVersionsResponse
// uses response header v0 at every version (KIP-511). Without the header
// spec in the source, the versions are checked against the headers manifester
// knows (request v0-v2, response v0-v1) with the flexible ones Kafka fixes
// (request v2+, response v1+).
func (b *builder) checkHeaderRefs(reg *Registry) {
	for _, ref := range b.headerRefs {
		m := ref.m
		kind := "request"
		hdr := reg.RequestHeader
		valid, flex := Versions{0, 2}, Versions{2, MaxVersion}
		if m.Type == TypeResponse {
			kind = "response"
			hdr = reg.ResponseHeader
			valid, flex = Versions{0, 1}, Versions{1, MaxVersion}
		}
		if hdr != nil {
			valid, flex = hdr.Valid, hdr.Flexible
		}
		apiVersionsResponse := m.Type == TypeResponse && m.APIKey == keyAPIVersions
		for _, e := range ref.entries {
			h := e.r.Header
			if e.r.Versions.Intersect(m.Valid).Empty() {
				// Only removed versions: their header may be one the
				// header spec no longer has (request header v0).
				continue
			}
			if !valid.Contains(h) {
				where := "the header versions manifester knows"
				if hdr != nil {
					where = hdr.File + "'s validVersions"
				}
				b.hverrf(e.headerPos, "headerVersions", ErrHeaderVersions, "%s maps versions %s to %s header version %d, which is not in %s (%s)", m.Name, e.r.Versions, kind, h, where, valid)
				continue
			}
			if apiVersionsResponse {
				if h != 0 {
					b.hverrf(e.headerPos, "headerVersions", ErrHeaderVersions, "%s maps versions %s to response header version %d; ApiVersionsResponse must use response header v0 at every version, so that any broker can read it (KIP-511)", m.Name, e.r.Versions, h)
				}
				continue
			}
			if f := m.Flexible.Intersect(e.r.Versions).Intersect(Versions{0, m.Valid.Hi}); !f.Empty() && !flex.Contains(h) {
				b.hverrf(e.headerPos, "headerVersions", ErrHeaderVersions, "%s maps version %d, which is flexible, to %s header version %d, which is not; a flexible %s needs a flexible header (%s)", m.Name, f.Lo, kind, h, kind, flex)
			}
		}
	}
}

// HeaderFromSpec reports whether the header version of message version v
// comes from the spec's "headerVersions" map rather than being derived from
// flexibleVersions.
func (m *Message) HeaderFromSpec(v int16) bool {
	for _, hv := range m.HeaderVersions {
		if hv.Versions.Contains(v) {
			return true
		}
	}
	return false
}
