// Package specjson carries a release's message specs as one JSON document:
// what the static site's WebAssembly decoder (cmd/manifester-wasm) loads
// instead of reading spec files. The document holds each message file as
// it was read (package schema's Message.Source), so loading it builds the
// same registry the site was built from.
package specjson

import (
	"encoding/json"
	"fmt"

	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/spec"
)

// Doc is the JSON document.
type Doc struct {
	Label string `json:"label"`
	// ErrorsPath is the site path of the error-code page, which decoded
	// error codes link to ("" for none).
	ErrorsPath string `json:"errors_path,omitempty"`
	Files      []File `json:"files"`
}

// File is one spec file.
type File struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// Marshal writes the registry's spec files, in the registry's order of
// messages (sorted by name), so the same registry gives the same bytes.
func Marshal(reg *schema.Registry, errorsPath string) ([]byte, error) {
	d := Doc{Label: reg.Label, ErrorsPath: errorsPath}
	for _, m := range reg.Messages {
		if len(m.Source) == 0 {
			return nil, fmt.Errorf("specjson: %s has no source text", m.File)
		}
		d.Files = append(d.Files, File{Name: m.File, Text: string(m.Source)})
	}
	b, err := json.Marshal(&d)
	if err != nil {
		return nil, fmt.Errorf("specjson: %w", err)
	}
	return b, nil
}

// Unmarshal parses a document and builds its registry.
func Unmarshal(b []byte) (*schema.Registry, *Doc, error) {
	var d Doc
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, nil, fmt.Errorf("specjson: %w", err)
	}
	if len(d.Files) == 0 {
		return nil, nil, fmt.Errorf("specjson: no spec files")
	}
	files := make([]*spec.File, 0, len(d.Files))
	for _, f := range d.Files {
		sf, err := spec.Parse(f.Name, []byte(f.Text))
		if err != nil {
			return nil, nil, fmt.Errorf("specjson: %w", err)
		}
		files = append(files, sf)
	}
	reg, err := schema.Build(files)
	if err != nil {
		return nil, nil, fmt.Errorf("specjson: %w", err)
	}
	reg.Label = d.Label
	return reg, &d, nil
}
