package diff

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden/diff")

const goldenDir = "../../testdata/golden/diff"

// golden compares got with the golden file name, or rewrites it with
// -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-golden +got); review and rerun with -update if intended:\n%s", path, diff)
	}
}

var (
	scrubbedMu sync.Mutex
	scrubbedC  = map[string]*codec.Codec{}
)

// scrubbed loads a copy of a release's specs with stand-ins for every
// about and no comments (testshared.ScrubbedSpec): the goldens keep what
// changes between versions and releases, and none of Kafka's sentences.
// Comments between versions are checked against ../shared in diff_test.go.
func scrubbed(t *testing.T, release string) *codec.Codec {
	t.Helper()
	scrubbedMu.Lock()
	defer scrubbedMu.Unlock()
	if c, ok := scrubbedC[release]; ok {
		return c
	}
	reg, err := schema.Load(testshared.ScrubbedSpec(t, release))
	if err != nil {
		t.Fatalf("loading %s: %v", release, err)
	}
	reg.Label = release
	c := codec.New(reg)
	scrubbedC[release] = c
	return c
}

func TestGoldenVersionDiffs(t *testing.T) {
	cases := []struct {
		release, api string
		a, b         int16
	}{
		{"4.3", "DescribeAcls", 2, 3},
		{"4.3", "Fetch", 12, 13},
		{"4.3", "Fetch", 14, 15},
		{"4.3", "ApiVersions", 2, 3},
		{"3.9", "Produce", 2, 3},
		{"3.9", "LeaderAndIsr", 6, 7},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s-v%d-v%d.%s", c.api, c.a, c.b, c.release)
		t.Run(name, func(t *testing.T) {
			sc := scrubbed(t, c.release)
			api, ok := sc.Reg.APIByName(c.api)
			if !ok {
				t.Fatalf("no API %s", c.api)
			}
			d, err := Versions(sc, api, c.a, c.b)
			if err != nil {
				t.Fatal(err)
			}
			var txt, js bytes.Buffer
			if err := d.WriteText(&txt); err != nil {
				t.Fatal(err)
			}
			if err := WriteJSON(&js, d); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".txt", txt.Bytes())
			golden(t, name+".json", js.Bytes())
		})
	}
}

func TestGoldenReleaseDiffs(t *testing.T) {
	for _, p := range [][2]string{{"3.9", "4.0"}, {"4.2", "4.3"}} {
		name := "release-" + p[0] + "-" + p[1]
		t.Run(name, func(t *testing.T) {
			d := Releases(scrubbed(t, p[0]).Reg, scrubbed(t, p[1]).Reg)
			var txt, js bytes.Buffer
			if err := d.WriteText(&txt); err != nil {
				t.Fatal(err)
			}
			if err := WriteJSON(&js, d); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".txt", txt.Bytes())
			golden(t, name+".json", js.Bytes())
		})
	}
}
