package history

import (
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/diff"
	"github.com/manifester/manifester/internal/release"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
)

// benchReleases are the releases BENCHMARKS.md was measured with; trunk is
// left out so that the figures stay comparable.
var benchReleases = []string{"3.9", "4.0", "4.1", "4.2", "4.3"}

// loadAll loads every release in ../shared/kafka-spec from disk and
// builds its codec and the history.
func loadAll(b *testing.B) *History {
	var rels []*release.Release
	for _, l := range benchReleases {
		reg, err := schema.Load(testshared.Spec(b, l))
		if err != nil {
			b.Fatal(err)
		}
		reg.Label = l
		rels = append(rels, &release.Release{Label: l, Reg: reg, Codec: codec.New(reg)})
	}
	h, err := New(rels)
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// allDiffs computes everything the site shows from the history: the diff
// of every version against the previous one in every release, the
// accepted-by table of every API, the removed APIs and the release diffs.
// It returns the number of version diffs.
func allDiffs(b *testing.B, h *History) int {
	n := 0
	for _, r := range h.Releases {
		for _, api := range r.Reg.APIs {
			for v := api.Request.Valid.Lo + 1; !api.Reserved() && v <= api.Request.Valid.Hi; v++ {
				if _, err := diff.Previous(r.Codec, api, v); err != nil {
					b.Fatal(err)
				}
				n++
			}
		}
	}
	for _, api := range h.Newest().Reg.APIs {
		h.Table(api.Key)
	}
	h.Removed()
	h.ReleaseDiffs()
	return n
}

// BenchmarkLoadAndDiffAll loads the five releases and computes all diffs.
func BenchmarkLoadAndDiffAll(b *testing.B) {
	for b.Loop() {
		allDiffs(b, loadAll(b))
	}
}

// BenchmarkLoadAll loads the five releases only.
func BenchmarkLoadAll(b *testing.B) {
	for b.Loop() {
		loadAll(b)
	}
}

// BenchmarkDiffAll computes all diffs of five already loaded releases.
func BenchmarkDiffAll(b *testing.B) {
	h := loadAll(b)
	n := 0
	for b.Loop() {
		n = allDiffs(b, h)
	}
	b.ReportMetric(float64(n), "versiondiffs/op")
}
