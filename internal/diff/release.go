package diff

import (
	"slices"
	"strconv"

	"github.com/manifester/manifester/internal/schema"
)

// ReleaseDiff is what changed in the protocol from one release to another.
type ReleaseDiff struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Added are APIs with versions in To that have none in From (absent or
	// only reserved there).
	Added []APIRef `json:"added"`
	// Removed are APIs with versions in From that have none in To: gone, or
	// left as reserved keys (validVersions "none").
	Removed []APIRef `json:"removed"`
	// Changed are APIs in both whose versions, flexible versions,
	// unstable version or listeners changed.
	Changed []APIChange `json:"changed"`
	// Unstable are the APIs whose latest version is unstable
	// (latestVersionUnstable) in To; Versions is that version.
	Unstable []APIRef `json:"unstable"`
}

// APIRef names an API and its versions in the release that has them.
type APIRef struct {
	Key      int16  `json:"api_key"`
	Name     string `json:"name"`
	Versions string `json:"versions"`
	// Reserved tells, for a removed API, that the newer release keeps the
	// key reserved (validVersions "none") rather than dropping the file.
	Reserved bool `json:"reserved,omitempty"`
}

// APIChange is how one API's version ranges and listeners changed.
type APIChange struct {
	Key  int16  `json:"api_key"`
	Name string `json:"name"`
	// FormerName is the API's name in From when To renamed it.
	FormerName string `json:"former_name,omitempty"`
	// Valid is the request's validVersions in From and To.
	Valid StringPair `json:"valid"`
	// ResponseValid is set when the response's validVersions differ from
	// the request's in either release.
	ResponseValid *StringPair `json:"response_valid,omitempty"`
	// Lowest tells whether the baseline (the lowest version) was raised or
	// lowered: "raised", "lowered" or "".
	Lowest string `json:"lowest,omitempty"`
	// RemovedVersions are versions valid in From but not in To;
	// NewVersions the reverse.
	RemovedVersions []string `json:"removed_versions,omitempty"`
	NewVersions     []string `json:"new_versions,omitempty"`
	// Unstable is the unstable latest version in each release ("" when
	// none), set when it changed.
	Unstable *StringPair `json:"unstable,omitempty"`
	// Flexible is the request's flexibleVersions, set when it changed.
	Flexible *StringPair `json:"flexible,omitempty"`
	// ListenersAdded and ListenersRemoved are the request's listener
	// changes.
	ListenersAdded   []string `json:"listeners_added,omitempty"`
	ListenersRemoved []string `json:"listeners_removed,omitempty"`
	// Redefined lists the versions valid in both releases whose fields
	// differ between them (a spec fix, or a field added to an existing
	// version as a tagged field).
	Redefined []Redefined `json:"redefined,omitempty"`
}

// Redefined is how one version's request or response fields differ
// between two releases.
type Redefined struct {
	Version  int16        `json:"version"`
	Request  []StructDiff `json:"request,omitempty"`
	Response []StructDiff `json:"response,omitempty"`
}

// StringPair is a text value in the old and the new release.
type StringPair struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Releases compares two registries, from (older) to to (newer).
func Releases(from, to *schema.Registry) *ReleaseDiff {
	d := &ReleaseDiff{From: from.Label, To: to.Label, Added: []APIRef{}, Removed: []APIRef{}, Changed: []APIChange{}, Unstable: []APIRef{}}
	keys := map[int16]bool{}
	for _, a := range from.APIs {
		keys[a.Key] = true
	}
	for _, a := range to.APIs {
		keys[a.Key] = true
	}
	sorted := make([]int16, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	for _, k := range sorted {
		fa, okA := from.API(k)
		ta, okB := to.API(k)
		liveA := okA && !fa.Reserved()
		liveB := okB && !ta.Reserved()
		if liveB {
			if u := unstable(ta.Request); u != "" {
				d.Unstable = append(d.Unstable, APIRef{Key: k, Name: ta.Name, Versions: u})
			}
		}
		switch {
		case liveA && !liveB:
			d.Removed = append(d.Removed, APIRef{Key: k, Name: fa.Name, Versions: fa.Request.Valid.String(), Reserved: okB})
		case !liveA && liveB:
			d.Added = append(d.Added, APIRef{Key: k, Name: ta.Name, Versions: ta.Request.Valid.String()})
		case liveA && liveB:
			if c, changed := apiChange(fa, ta); changed {
				d.Changed = append(d.Changed, c)
			}
		}
	}
	return d
}

func apiChange(a, b *schema.API) (APIChange, bool) {
	ra, rb := a.Request, b.Request
	c := APIChange{Key: b.Key, Name: b.Name, Valid: StringPair{ra.Valid.String(), rb.Valid.String()}}
	changed := false
	if a.Name != b.Name {
		c.FormerName = a.Name
		changed = true
	}
	if ra.Valid != rb.Valid {
		changed = true
		switch {
		case rb.Valid.Lo > ra.Valid.Lo:
			c.Lowest = "raised"
		case rb.Valid.Lo < ra.Valid.Lo:
			c.Lowest = "lowered"
		}
		c.RemovedVersions = rangeStrings(minus(ra.Valid, rb.Valid))
		c.NewVersions = rangeStrings(minus(rb.Valid, ra.Valid))
	}
	if a.Response.Valid != ra.Valid || b.Response.Valid != rb.Valid {
		c.ResponseValid = &StringPair{a.Response.Valid.String(), b.Response.Valid.String()}
		changed = changed || a.Response.Valid != b.Response.Valid
	}
	ua, ub := unstable(ra), unstable(rb)
	if ua != ub {
		c.Unstable = &StringPair{ua, ub}
		changed = true
	}
	if ra.Flexible != rb.Flexible {
		c.Flexible = &StringPair{ra.Flexible.String(), rb.Flexible.String()}
		changed = true
	}
	for _, l := range rb.Listeners {
		if !slices.Contains(ra.Listeners, l) {
			c.ListenersAdded = append(c.ListenersAdded, l)
		}
	}
	for _, l := range ra.Listeners {
		if !slices.Contains(rb.Listeners, l) {
			c.ListenersRemoved = append(c.ListenersRemoved, l)
		}
	}
	changed = changed || len(c.ListenersAdded) > 0 || len(c.ListenersRemoved) > 0
	both := ra.Valid.Intersect(rb.Valid)
	for v := both.Lo; !both.Empty() && v <= both.Hi; v++ {
		r := Redefined{Version: v}
		if sd := Structs(ra.Body, v, rb.Body, v); len(sd) > 0 {
			r.Request = sd
		}
		if a.Response.Valid.Contains(v) && b.Response.Valid.Contains(v) {
			if sd := Structs(a.Response.Body, v, b.Response.Body, v); len(sd) > 0 {
				r.Response = sd
			}
		}
		if r.Request != nil || r.Response != nil {
			c.Redefined = append(c.Redefined, r)
			changed = true
		}
	}
	return c, changed
}

// unstable returns the latest version ("12") of a message whose latest
// version is unstable, else "".
func unstable(m *schema.Message) string {
	if !m.LatestVersionUnstable || m.Valid.Empty() {
		return ""
	}
	return strconv.Itoa(int(m.Valid.Hi))
}

// minus returns the versions of a not in b, as at most two ranges.
func minus(a, b schema.Versions) []schema.Versions {
	if a.Empty() {
		return nil
	}
	if b.Empty() || b.Hi < a.Lo || b.Lo > a.Hi {
		return []schema.Versions{a}
	}
	var out []schema.Versions
	if a.Lo < b.Lo {
		out = append(out, schema.Versions{Lo: a.Lo, Hi: b.Lo - 1})
	}
	if a.Hi > b.Hi {
		out = append(out, schema.Versions{Lo: b.Hi + 1, Hi: a.Hi})
	}
	return out
}

func rangeStrings(vs []schema.Versions) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.String())
	}
	return out
}
