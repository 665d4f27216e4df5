package diff

import (
	"bytes"
	"testing"
	"unicode"

	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/spec"
)

func escRegistry(t *testing.T, def, label string) *schema.Registry {
	t.Helper()
	var files []*spec.File
	for name, src := range map[string]string{
		"EscRequest.json": `{"apiKey": 1002, "type": "request", "name": "EscRequest", "validVersions": "0-1", "flexibleVersions": "none",
  "fields": [{"name": "Title", "type": "string", "versions": "0+", "default": "` + def + `"}]}`,
		"EscResponse.json": `{"apiKey": 1002, "type": "response", "name": "EscResponse", "validVersions": "0-1", "flexibleVersions": "none", "fields": []}`,
	} {
		f, err := spec.Parse(name, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	reg, err := schema.Build(files)
	if err != nil {
		t.Fatal(err)
	}
	reg.Label = label
	return reg
}

// TestReleaseTextEscaped: the release diff's text printed a field's
// default (any text a spec gives a string field) and the release labels
// (from a PROVENANCE file) raw: "~Title default x\x1b]0;pwned\ay"
// set the terminal's title. They are escaped as the version diff
// escapes them.
func TestReleaseTextEscaped(t *testing.T) {
	a := escRegistry(t, `x\u001b]0;pwned\u0007y`, "1.0\u001b[2J")
	b := escRegistry(t, `\u001b[2Jz`, "2.0\u202e")
	var out bytes.Buffer
	if err := Releases(a, b).WriteText(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`Kafka 1.0\x1b[2J -> 2.0\u202e`, `~Title default x\x1b]0;pwned\ay -> \x1b[2Jz`} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Errorf("%q is missing:\n%s", want, out.String())
		}
	}
	for _, r := range out.String() {
		if r != '\n' && (unicode.IsControl(r) || unicode.In(r, unicode.Cf)) {
			t.Fatalf("raw %q in:\n%s", r, out.String())
		}
	}
}
