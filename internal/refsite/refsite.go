// Package refsite adds the reference layer to the site: the error-code
// table (/errors/), the primitive types (/types/), the header versions
// (/headers/), a search page over a static index (/search/ and
// /search-index.json), friendly redirects (/apis/33/, any letter case) and,
// on every API page, the message grammar in the protocol guide's BNF
// notation with the versions each field exists in.
//
// Everything it writes is generated: error codes come from franz-go's kerr
// table, the grammar, header tables and index from the loaded specs, and the
// explanatory prose is this project's own.
package refsite

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"

	"github.com/manifester/manifester/internal/site"

	htmlr "github.com/manifester/manifester/internal/render/html"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

//go:embed static/search.js
var searchJS []byte

// Paths of the pages this package adds.
const (
	ErrorsPath      = "/errors/"
	TypesPath       = "/types/"
	HeadersPath     = "/headers/"
	SearchPath      = "/search/"
	SearchIndexPath = "/search-index.json"
	SearchJSPath    = "/static/search.js"
	// SearchIndexJSPath is the index again as a script, for pages opened
	// from file://, which may load scripts but not fetch files.
	SearchIndexJSPath = "/static/search-index.js"
)

var tmpl = template.Must(template.New("refsite").Funcs(template.FuncMap{
	"errorHref": ErrorHref,
}).ParseFS(templateFS, "templates/*.tmpl"))

// Extension returns the site extension that adds the reference layer.
func Extension() site.Extension {
	return site.Extension{
		Name: "reference",
		Nav: []htmlr.Link{
			{Href: ErrorsPath, Text: "Errors"},
			{Href: TypesPath, Text: "Types"},
			{Href: HeadersPath, Text: "Headers"},
			{Href: SearchPath, Text: "Search"},
		},
		Page:   pageExtras,
		Routes: routes,
		Setup:  func(r *htmlr.Renderer) { r.ErrorsPath = ErrorsPath },
	}
}

func routes(b *site.Builder) error {
	rels := b.Releases()
	reg := rels[len(rels)-1].Codec.Reg
	steps := []struct {
		path, title, tmpl string
		data              any
	}{
		{ErrorsPath, "Kafka error codes", "errors", errorsView()},
		{TypesPath, "Primitive types", "types", typesView()},
		{HeadersPath, "Request and response headers", "headers", headersView(reg)},
		{SearchPath, "Search", "search", nil},
	}
	for _, s := range steps {
		body, err := render(s.tmpl, s.data)
		if err != nil {
			return err
		}
		if err := b.AddDoc(s.path, s.title, body); err != nil {
			return err
		}
	}
	idx, err := SearchIndex(reg)
	if err != nil {
		return err
	}
	if err := b.Add(SearchIndexPath, site.TypeJSON, idx); err != nil {
		return err
	}
	if err := b.Add(SearchIndexJSPath, site.TypeJS, SearchIndexScript(idx)); err != nil {
		return err
	}
	if err := b.Add(SearchJSPath, site.TypeJS, searchJS); err != nil {
		return err
	}
	return addRedirects(b, reg)
}

func render(name string, data any) (template.HTML, error) {
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		return "", fmt.Errorf("refsite: rendering %s: %w", name, err)
	}
	return template.HTML(buf.String()), nil
}
