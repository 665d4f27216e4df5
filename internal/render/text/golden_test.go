package text_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/render/jsonr"
	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/testshared"
)

// update rewrites the golden files: go test ./internal/render/text -update
var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

const goldenDir = "../../../testdata/golden"

// goldenFiles renders every non-reserved API of 4.3 at its highest
// version, as the text page and as the page JSON (the document that
// `manifester show --format json` prints), keyed by path under goldenDir.
//
// The goldens carry no Kafka text: the pages are built from a copy of the
// specs whose abouts are stand-ins (testshared.ScrubbedSpec), and each
// section's schema (the spec file) is replaced by its stand-in. Types,
// values, offsets, sizes and bytes are Kafka's exactly; descriptions and
// schema text are checked against ../shared by the seed tests, and on the
// synthetic specs in testdata.
func goldenFiles(t *testing.T) map[string][]byte {
	t.Helper()
	c := loadCodec(t, testshared.ScrubbedSpec(t, "4.3"))
	out := map[string][]byte{}
	for _, api := range c.Reg.APIs {
		if api.Reserved() {
			continue
		}
		p, err := page.Build(c, api, -1)
		if err != nil {
			t.Fatalf("%s: %v", api.Name, err)
		}
		for _, s := range []*page.Section{p.Request, p.Response} {
			s.Schema = testshared.StandIn("schema", s.Schema) + "\n"
		}
		var txt bytes.Buffer
		if err := text.Page(&txt, p); err != nil {
			t.Fatal(err)
		}
		js, err := jsonr.PageDocument(p)
		if err != nil {
			t.Fatal(err)
		}
		base := filepath.Join(api.Name, fmt.Sprintf("v%d", p.Version))
		out[base+".txt"] = txt.Bytes()
		out[base+".json"] = js
	}
	return out
}

// TestGolden compares every page with its golden file and fails with a
// diff when they differ; -update rewrites them.
func TestGolden(t *testing.T) {
	files := goldenFiles(t)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	if *update {
		// Remove this test's old files (not other packages' goldens, such
		// as testdata/golden/diff), then write the current ones.
		for _, old := range pageGoldens(t) {
			if err := os.Remove(filepath.Join(goldenDir, old)); err != nil {
				t.Fatal(err)
			}
		}
		for _, n := range names {
			p := filepath.Join(goldenDir, n)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, files[n], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("wrote %d golden files", len(names))
		return
	}
	for _, n := range names {
		want, err := os.ReadFile(filepath.Join(goldenDir, n))
		if err != nil {
			t.Errorf("%s: %v (run go test ./internal/render/text -update)", n, err)
			continue
		}
		if got := files[n]; !bytes.Equal(got, want) {
			t.Errorf("%s is stale (-want +got):\n%s", n, cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")))
		}
	}
}

// pageGolden matches the paths of page goldens: <API>/v<N>.txt|json.
var pageGolden = regexp.MustCompile(`^[A-Za-z0-9]+/v[0-9]+\.(txt|json)$`)

// pageGoldens lists the page goldens now under goldenDir, slash-separated.
func pageGoldens(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(goldenDir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(goldenDir, p)
		if rel = filepath.ToSlash(rel); pageGolden.MatchString(rel) {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNoStaleGoldens fails when testdata/golden holds a page file that the
// current specs no longer produce (a renamed API, an old top version).
func TestNoStaleGoldens(t *testing.T) {
	if *update {
		t.Skip("rewriting")
	}
	files := goldenFiles(t)
	var extra []string
	for _, rel := range pageGoldens(t) {
		if _, ok := files[rel]; !ok {
			extra = append(extra, rel)
		}
	}
	if len(extra) > 0 {
		t.Errorf("golden files no page produces (run -update): %v", extra)
	}
	if len(files) < 2*80 {
		t.Errorf("only %d golden files for 4.3", len(files))
	}
}

// TestGoldenJSONShape: the page JSON carries the summary and, for every
// node, path, type, value, offset, size, category and about.
func TestGoldenJSONShape(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(goldenDir, "AlterConfigs", "v2.json"))
	if err != nil {
		t.Skipf("no golden yet: %v", err)
	}
	var doc struct {
		APIKey  int `json:"api_key"`
		Summary []struct {
			Label, Value string
		} `json:"summary"`
		Request struct {
			Size int    `json:"size"`
			Hex  string `json:"hex"`
			Tree *struct {
				Children []map[string]any `json:"children"`
			} `json:"tree"`
		} `json:"request"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.APIKey != 33 || len(doc.Summary) != 8 || doc.Request.Size != 25 || len(doc.Request.Hex) != 50 {
		t.Errorf("doc = %+v", doc)
	}
	hdr := doc.Request.Tree.Children[1]["children"].([]any)[0].(map[string]any)
	for _, k := range []string{"name", "path", "type", "text", "value", "offset", "size", "category", "about"} {
		if _, ok := hdr[k]; !ok {
			t.Errorf("header node lacks %q: %v", k, hdr)
		}
	}
	if hdr["path"] != "RequestHeader.request_api_key" || hdr["category"] != "rpc header" || hdr["text"] != "= 33 (AlterConfigs)" || hdr["value"] != float64(33) {
		t.Errorf("header node = %v", hdr)
	}
}

// syntheticDir holds the goldens of the synthetic specs in testdata/specs,
// which we wrote ourselves: these keep every description and the schema
// text, so the about column and the schema block are checked too.
const syntheticDir = goldenDir + "/synthetic"

// TestGoldenSynthetic renders every API of the synthetic specs at every
// version, text and JSON, with descriptions and schema, and compares them
// with testdata/golden/synthetic (-update rewrites them).
func TestGoldenSynthetic(t *testing.T) {
	got := map[string][]byte{}
	for _, dir := range []string{"everytype", "escapes"} {
		c := loadCodec(t, "../../../testdata/specs/"+dir)
		for _, api := range c.Reg.APIs {
			for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
				p, err := page.Build(c, api, v)
				if err != nil {
					t.Fatalf("%s v%d: %v", api.Name, v, err)
				}
				var txt bytes.Buffer
				if err := text.Page(&txt, p); err != nil {
					t.Fatal(err)
				}
				js, err := jsonr.PageDocument(p)
				if err != nil {
					t.Fatal(err)
				}
				base := filepath.Join(api.Name, fmt.Sprintf("v%d", v))
				got[base+".txt"] = txt.Bytes()
				got[base+".json"] = js
			}
		}
	}
	if *update {
		if err := os.RemoveAll(syntheticDir); err != nil {
			t.Fatal(err)
		}
		for n, b := range got {
			p := filepath.Join(syntheticDir, n)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	n := 0
	err := filepath.WalkDir(syntheticDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		rel, _ := filepath.Rel(syntheticDir, p)
		if _, ok := got[rel]; !ok {
			t.Errorf("stale synthetic golden %s", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v (run go test ./internal/render/text -update)", err)
	}
	for rel, b := range got {
		want, err := os.ReadFile(filepath.Join(syntheticDir, rel))
		if err != nil {
			t.Errorf("%s: %v (run -update)", rel, err)
			continue
		}
		if !bytes.Equal(b, want) {
			t.Errorf("synthetic/%s is stale (-want +got):\n%s", rel, cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(b), "\n")))
		}
	}
	if n != len(got) {
		t.Errorf("%d synthetic goldens on disk, %d rendered", n, len(got))
	}
	// The about column and the schema block carry the spec's own text.
	if b := got[filepath.Join("EveryType", "v2.txt")]; !bytes.Contains(b, []byte("An int8.")) || !bytes.Contains(b, []byte(`"name": "EveryTypeRequest"`)) {
		t.Errorf("EveryType v2 lacks its descriptions or schema")
	}
}
