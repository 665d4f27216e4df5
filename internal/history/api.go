package history

import (
	"fmt"

	"github.com/manifester/manifester/internal/diff"
	"github.com/manifester/manifester/internal/schema"
)

// APIHistory is what an API page shows about versions and releases.
type APIHistory struct {
	Key  int16  `json:"api_key"`
	Name string `json:"name"`
	// Release is the release the page is built from: the newest one that
	// defines versions for the API.
	Release string `json:"release"`
	// Removed reports that the newest loaded release has no versions of
	// the API; RemovedIn is the release after Release.
	Removed   bool   `json:"removed"`
	RemovedIn string `json:"removed_in,omitempty"`
	// Rows are the "accepted by Kafka" rows, one per version any loaded
	// release defines.
	Rows []VersionRow `json:"rows"`
	// Changes are, for each version of Release after the lowest, the diff
	// from the previous version, lowest version first.
	Changes []*diff.VersionDiff `json:"changes"`
}

// API returns the history of API key for its page. It fails when no loaded
// release defines versions for the key.
func (h *History) API(key int16) (*APIHistory, error) {
	rel, api, ok := h.Defining(key)
	if !ok {
		return nil, fmt.Errorf("no loaded release defines versions for API key %d", key)
	}
	out := &APIHistory{Key: key, Name: api.Name, Release: rel.Label, Rows: h.Table(key), Changes: []*diff.VersionDiff{}}
	if rel != h.Newest() {
		out.Removed = true
		for i, r := range h.Releases[:len(h.Releases)-1] {
			if r == rel {
				out.RemovedIn = h.Releases[i+1].Label
			}
		}
	}
	differ := diff.NewDiffer(rel.Codec, api)
	for v := api.Request.Valid.Lo + 1; v <= api.Request.Valid.Hi; v++ {
		d, err := differ.Versions(v-1, v)
		if err != nil {
			return nil, fmt.Errorf("%s v%d in %s: %w", api.Name, v, rel.Label, err)
		}
		out.Changes = append(out.Changes, d)
		if v == schema.MaxVersion {
			break
		}
	}
	return out, nil
}
