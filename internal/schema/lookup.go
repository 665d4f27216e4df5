package schema

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ErrUnknownAPI is the one sentinel for an API the registry does not
// define: [Registry.Lookup] returns it for a name or key that is not in
// the registry, and package codec wraps the same value (codec.ErrUnknownAPI)
// for a frame whose API key the spec does not define, so errors.Is
// matches it whichever layer failed.
var ErrUnknownAPI = errors.New("unknown API")

// Lookup finds an API by name or by numeric key. A name matches in any
// case, with or without a Request/Response suffix, and with underscores,
// hyphens or spaces anywhere: Kafka's ApiKeys enum names (API_VERSIONS,
// OFFSET_COMMIT), as broker logs print them, find their API. The error
// for an unknown API suggests close names.
func (r *Registry) Lookup(s string) (*API, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		if a, ok := r.byKey[int16(n)]; ok && n >= 0 && n <= 32767 {
			return a, nil
		}
		return nil, fmt.Errorf("%w: no API has key %s", ErrUnknownAPI, s)
	}
	base := strings.TrimSuffix(strings.TrimSuffix(s, "Request"), "Response")
	if a, ok := r.byName[strings.ToLower(base)]; ok {
		return a, nil
	}
	if a, ok := r.byName[nameKey(s)]; ok {
		return a, nil
	}
	if sug := r.Suggest(base, 3); len(sug) > 0 {
		return nil, fmt.Errorf("%w %q; did you mean %s?", ErrUnknownAPI, s, strings.Join(sug, ", "))
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownAPI, s)
}

// nameKey is s as byName keys it (API names are letters and digits):
// lower case, without separators and a request or response suffix.
func nameKey(s string) string {
	s = strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(s))
	return strings.TrimSuffix(strings.TrimSuffix(s, "request"), "response")
}

// Suggest returns up to n API names close to s: by substring, then by edit
// distance.
func (r *Registry) Suggest(s string, n int) []string {
	ls := strings.ToLower(s)
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, a := range r.APIs {
		ln := strings.ToLower(a.Name)
		d := editDistance(ls, ln)
		if ls != "" && (strings.Contains(ln, ls) || strings.Contains(ls, ln)) {
			d = 0
		}
		if d <= max(2, len(ls)/3) {
			cs = append(cs, cand{a.Name, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
