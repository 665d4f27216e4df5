package histsite

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/release"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/site"
)

// synthRelease writes a release of the given APIs (name by key, each
// "0-1" with one int8 field) and the two headers to a folder and loads it.
func synthRelease(t *testing.T, label string, apis map[int]string) *release.Release {
	t.Helper()
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("RequestHeader.json", `{"type": "header", "name": "RequestHeader", "validVersions": "1-2", "flexibleVersions": "2+",
  "fields": [{"name": "RequestApiKey", "type": "int16", "versions": "0+"}, {"name": "RequestApiVersion", "type": "int16", "versions": "0+"},
    {"name": "CorrelationId", "type": "int32", "versions": "0+"},
    {"name": "ClientId", "type": "string", "versions": "1+", "nullableVersions": "1+", "flexibleVersions": "none"}]}`)
	write("ResponseHeader.json", `{"type": "header", "name": "ResponseHeader", "validVersions": "0-1", "flexibleVersions": "1+",
  "fields": [{"name": "CorrelationId", "type": "int32", "versions": "0+"}]}`)
	for key, name := range apis {
		for _, kind := range []string{"Request", "Response"} {
			write(name+kind+".json", fmt.Sprintf(`{"apiKey": %d, "type": "%s", "name": "%s%s", "validVersions": "0-1", "flexibleVersions": "1+",
  "fields": [{"name": "A", "type": "int8", "versions": "0+"}]}`, key, strings.ToLower(kind), name, kind))
		}
	}
	reg, err := schema.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	reg.Label = label
	return &release.Release{Label: label, Codec: codec.New(reg)}
}

// TestRemovedAPINameTaken: an API of an older release whose name the
// newest release gives to another key (Foo moved from key 1001 to key
// 1000), or whose name a removed API of a newer release has, has no
// pages of its own: the pages are by name, and the site failed to build
// with "/apis/Foo/v0/ is added twice".
func TestRemovedAPINameTaken(t *testing.T) {
	for _, c := range []struct {
		name string
		rels []map[int]string
		want string // the page of /apis/Foo/v0/ shows this API key
	}{
		{"newest takes the name", []map[int]string{{1000: "Bar", 1001: "Foo"}, {1000: "Foo"}}, "1000"},
		{"case differs", []map[int]string{{1000: "Bar", 1001: "Foo"}, {1000: "FOO", 1002: "Baz"}}, "none"},
		{"two removed", []map[int]string{{1001: "Foo"}, {1002: "Foo"}, {1000: "Bar"}}, "1002"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rels []*release.Release
			for i, apis := range c.rels {
				rels = append(rels, synthRelease(t, fmt.Sprintf("1.%d", i), apis))
			}
			s, err := site.Build(site.Options{Releases: rels, Extensions: []site.Extension{New().Extension()}})
			if err != nil {
				t.Fatal(err)
			}
			a, ok := s.Lookup("/apis/Foo/v0/")
			if c.want == "none" {
				// FOO's folder on a case-insensitive file system.
				if ok {
					t.Error("/apis/Foo/v0/ beside /apis/FOO/v0/")
				}
				return
			}
			if !ok {
				t.Fatal("no /apis/Foo/v0/")
			}
			if !strings.Contains(string(a.Body), "<dt>API key</dt><dd>"+c.want+"</dd>") {
				t.Errorf("/apis/Foo/v0/ is not the page of key %s", c.want)
			}
		})
	}
}
