package diff

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
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
			d := versionDiff(t, c.release, c.api, c.a, c.b)
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
			d := Releases(load(t, p[0]).Reg, load(t, p[1]).Reg)
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
