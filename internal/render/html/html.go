// Package html renders the site's pages: the "All Kafka APIs" index, the
// reference page of one API at one version, the 404 page and generic
// documents, all in one layout (brand header, navigation, footer).
//
// # Output rules
//
// Every page is complete without JavaScript: the byte grid, the object tree,
// the tagged-field tables and the highlighted schema are plain HTML. The
// script and the style sheet are separate files ([Static]) served from the
// same origin, so a Content-Security-Policy of default-src 'self' holds:
// the markup has no inline scripts, no inline styles and no style
// attributes. Every text goes through html/template's escaping; the schema
// goes through [Highlight], which escapes every token.
//
// # Interaction hooks
//
// Byte cells carry data-r (the index of their leaf's tree row) and tree rows
// carry data-o, data-n (offset and size) and data-p (the parent row), which
// the script uses to connect bytes and fields. Row ids are "<kind>:<path>"
// (request:Frame.size, request:AlterConfigsRequest.Resources[0].ResourceName),
// the path in the one syntax of span.Tree.Path, so a fragment selects a
// field with or without script.
//
// # Input
//
// Every page reads the annotated tree, [span.Tree]: names, types, values
// and their notes from the tree (notes are made at render time, so every
// front end shows the same for the same bytes), and what a row is — a
// field of which version range, an error code, a struct's tagged-field
// section — from its descriptor and category, never from the text shown.
//
// # Extension
//
// [Extras] lets other packages add summary items and whole sections to an
// API page, and [Renderer.Doc] wraps any body in the site layout.
package html

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Static returns the site's static files (site.css, site.js), to be served
// under /static/.
func Static() fs.FS {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}

// Link is a navigation link of the layout.
type Link struct {
	Href string
	Text string
}

// Section is an extra section of an API page, added by an extension.
type Section struct {
	ID    string        // element id, unique on the page
	Title string        // heading text
	Body  template.HTML // trusted markup, produced by the extension's own templates
}

// Badge is a small label beside a page title or an index row's name.
type Badge struct {
	Class string // CSS class after "badge" ("removed", "reserved", ...)
	Text  string
	Title string // tooltip
}

// Extras is what extensions add to one API page.
type Extras struct {
	Summary  []page.Item // appended to the summary
	Sections []Section   // after the Response section
	Badges   []Badge     // after the title's own badges
	// Intro, when set, is a paragraph shown under the intro sentence (e.g.
	// "removed in Kafka 4.0").
	Intro string
	// Footer, when set, replaces the renderer's footer text on this page
	// (e.g. "Kafka 3.9 message specs." on a page built from an older
	// release).
	Footer string
	// Switcher, when set, is the message whose versions the version
	// switcher lists, in place of the page's own request (a page built
	// from an older release lists the newest release's versions).
	Switcher *schema.Message
	// Older are versions only older releases define, shown in the
	// version switcher as a separate "older releases" group. Versions
	// listed here are left out of the main group.
	Older []OlderVersion
}

// OlderVersion is a version in the switcher's "older releases" group.
type OlderVersion struct {
	V     int16
	Href  string
	Title string // tooltip, e.g. "removed in Kafka 4.0; built from the 3.9 specs"
}

// Renderer renders pages. It is safe for concurrent use.
type Renderer struct {
	tmpl *template.Template
	// Nav is the layout's navigation, after "All Kafka APIs".
	Nav []Link
	// Footer is a short plain text shown at the bottom of every page.
	Footer string
	// ErrorsPath, when set, is the page listing every error code: the
	// error-code values of the object trees link to their entries there.
	ErrorsPath string
	hl         highlightCache
}

// New parses the embedded templates.
func New() (*Renderer, error) {
	t, err := template.New("site").Funcs(template.FuncMap{
		"hexcols": func() []string {
			return []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"}
		},
		"bytesHTML": bytesHTML, // the "bytes" template of an API page, in Go (bytesview.go)
	}).ParseFS(templateFS, "templates/*.tmpl")
	if err != nil {
		return nil, fmt.Errorf("parsing templates: %w", err)
	}
	return &Renderer{tmpl: t}, nil
}

// layout is the data every template gets.
type layout struct {
	Title  string
	Nav    []Link
	Footer string
	Main   any
	Kind   string // "index", "api", "doc", "notfound"
}

func (r *Renderer) exec(w io.Writer, name, title, kind string, main any) error {
	return r.execFooter(w, name, title, kind, r.Footer, main)
}

func (r *Renderer) execFooter(w io.Writer, name, title, kind, footer string, main any) error {
	var b bytes.Buffer
	if err := r.tmpl.ExecuteTemplate(&b, name, r.layout(title, kind, footer, main)); err != nil {
		return fmt.Errorf("rendering %s: %w", name, err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// layout is the layout data of a page.
func (r *Renderer) layout(title, kind, footer string, main any) *layout {
	return &layout{Title: clean(title), Nav: r.Nav, Footer: clean(footer), Main: main, Kind: kind}
}

// Doc writes a page in the site layout with the given title and body.
func (r *Renderer) Doc(w io.Writer, title string, body template.HTML) error {
	_, err := w.Write(r.DocHTML(title, body))
	return err
}

// DocHTML returns the page [Renderer.Doc] writes, in a new slice of
// exactly its size.
func (r *Renderer) DocHTML(title string, body template.HTML) []byte {
	l := r.layout(title, "doc", r.Footer, body)
	return render(func(b []byte) []byte { return appendDoc(b, l, body) })
}

// NotFound writes the 404 page.
func (r *Renderer) NotFound(w io.Writer) error {
	return r.exec(w, "notfound", "Not found", "notfound", nil)
}

// clean replaces invalid UTF-8 so that no stray byte reaches the output.
func clean(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// catClass is the CSS class of a row's category ("c-hdr"); "c-none" for
// none.
func catClass(c span.Category) string {
	if c == span.CatNone || !slices.Contains(span.Categories, c) {
		return "c-none"
	}
	return "c-" + c.Class()
}

// Legend is one colour-legend entry.
type legendItem struct{ Label, Class string }

func legend() []legendItem {
	out := make([]legendItem, len(span.Categories))
	for i, c := range span.Categories {
		out[i] = legendItem{c.String(), "c-" + c.Class()}
	}
	return out
}

// ascii is the printable form of b for the grid gutter.
func ascii(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 0x20 && c < 0x7f {
			out[i] = c
		} else {
			out[i] = '.'
		}
	}
	return string(out)
}

// ListMax is the most entries a per-version list on a page (a group of
// the version switcher, histsite's "accepted by Kafka" table) shows in
// full; a longer list shows a window of it ([Window]). Every version has
// a page, so lists of every version would make the pages of an API with
// V versions hold V² entries in all; with the window they hold at most
// V·(2·[WindowSpan]+3). Kafka's longest list has 19 versions (Fetch v0-v18
// over 3.9 to trunk), so no real page is cut.
const ListMax = 32

// WindowSpan is how many entries on each side of the current one a
// [Window] keeps.
const WindowSpan = 8

// Window returns the indices, ascending, of the entries of a list of n a
// page shows: every one when n <= [ListMax]; otherwise the first, the
// last and those within [WindowSpan] of at, the index of the current
// entry (or of the first entry after it when the list lacks it, n when
// none is). Where two kept indices are not consecutive, the page shows a
// gap.
func Window(n, at int) []int {
	if n <= ListMax {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	lo, hi := max(at-WindowSpan, 0), min(at+WindowSpan, n-1)
	out := make([]int, 0, hi-lo+3)
	if lo > 0 {
		out = append(out, 0)
	}
	for i := lo; i <= hi; i++ {
		out = append(out, i)
	}
	if hi < n-1 {
		out = append(out, n-1)
	}
	return out
}

// versionsOf lists v's of a message's valid range, for the switcher.
func versionsOf(m *schema.Message) []int16 {
	if m.Reserved() {
		return nil
	}
	out := make([]int16, 0, int(m.Valid.Hi-m.Valid.Lo)+1)
	for v := m.Valid.Lo; v <= m.Valid.Hi; v++ {
		out = append(out, v)
	}
	return out
}

// APIPath is the URL path of an API's page at version v, or at its highest
// version when v < 0.
func APIPath(name string, v int) string {
	if v < 0 {
		return "/apis/" + name + "/"
	}
	return "/apis/" + name + "/v" + strconv.Itoa(v) + "/"
}

// JSONPath is the URL path of the JSON page model of an API at version v.
func JSONPath(name string, v int) string {
	return "/apis/" + name + "/v" + strconv.Itoa(v) + ".json"
}
