// Package recsite puts the record types of Kafka's internal topics on the
// site (package site), as a [site.Extension], when the newest release's
// codec has record schemas ([codec.Codec.SetRecordSchemas]):
//
//   - /records/: "Internal records", every record type of every loaded
//     module, with its type, apiKey, valid and flexible versions and the
//     internal topic whose records it frames; linked from every page's
//     navigation, beside "All Kafka APIs";
//   - /records/<module>/<Name>/: the record type at its highest version,
//     and /records/<module>/<Name>/v<N>/ at every valid version: the
//     smallest instance as it sits in a record's key or value, with the
//     framing Kafka's serdes write, its byte grid and tree, and its schema;
//   - /records/<module>/<Name>/v<N>.json: the page model (package recpage).
//
// Every text goes through html/template.
package recsite

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"strconv"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/recpage"
	"github.com/manifester/manifester/internal/recschema"
	htmlr "github.com/manifester/manifester/internal/render/html"
	"github.com/manifester/manifester/internal/render/jsonr"
	"github.com/manifester/manifester/internal/site"
)

// IndexPath is the path of the "Internal records" page.
const IndexPath = "/records/"

//go:embed templates/*.tmpl
var templateFS embed.FS

var tmpl = template.Must(template.New("recsite").ParseFS(templateFS, "templates/*.tmpl"))

// RecordPath is the URL path of a record type's page at version v (the
// highest when v < 0).
func RecordPath(r *recschema.Record, v int) string {
	p := IndexPath + r.Slug() + "/"
	if v >= 0 {
		p += "v" + strconv.Itoa(v) + "/"
	}
	return p
}

// JSONPath is the URL path of a record page's JSON model.
func JSONPath(r *recschema.Record, v int) string {
	return IndexPath + r.Slug() + "/v" + strconv.Itoa(v) + ".json"
}

// Extension returns the site hooks for the record schemas of codec c
// (the newest release's); the extension adds nothing when c has none.
func Extension(c *codec.Codec) site.Extension {
	ext := site.Extension{Name: "records"}
	set := c.RecordSchemas()
	if set == nil || len(set.Modules) == 0 {
		return ext
	}
	ext.Nav = []htmlr.Link{{Href: IndexPath, Text: "Internal records"}}
	ext.Routes = func(b *site.Builder) error { return routes(b, c, set) }
	return ext
}

type indexRow struct {
	Name, Href, Type, APIKey, Versions, Flexible string
}

type moduleView struct {
	Name, Topic string
	Rows        []indexRow
}

type versionLink struct {
	V       int16
	Href    string
	Current bool
}

type recordView struct {
	Title    string
	Page     *recpage.Page
	Versions []versionLink
	Bytes    template.HTML
	Schema   template.HTML
	JSON     string
}

func routes(b *site.Builder, c *codec.Codec, set *recschema.Set) error {
	var mods []moduleView
	for _, m := range set.Modules {
		mv := moduleView{Name: m.Name, Topic: m.Topic}
		for _, msg := range m.Reg.Messages {
			r := &recschema.Record{Module: m, Msg: msg}
			key := "-"
			if msg.APIKey >= 0 {
				key = strconv.Itoa(int(msg.APIKey))
			}
			mv.Rows = append(mv.Rows, indexRow{Name: msg.Name, Href: RecordPath(r, -1), Type: msg.Type.String(), APIKey: key,
				Versions: msg.Valid.String(), Flexible: msg.Flexible.String()})
			if err := recordPages(b, c, r); err != nil {
				return err
			}
		}
		mods = append(mods, mv)
	}
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, "index", mods); err != nil {
		return fmt.Errorf("records index: %w", err)
	}
	return b.AddDoc(IndexPath, "Internal records", template.HTML(buf.String()))
}

func recordPages(b *site.Builder, c *codec.Codec, r *recschema.Record) error {
	versions := recpage.Versions(r.Msg)
	for i, v := range versions {
		p, err := recpage.Build(c, r, v)
		if err != nil {
			return err
		}
		rv := &recordView{Title: r.Msg.Name + " v" + strconv.Itoa(int(v)), Page: p, JSON: JSONPath(r, int(v))}
		for _, w := range versions {
			rv.Versions = append(rv.Versions, versionLink{V: w, Href: RecordPath(r, int(w)), Current: w == v})
		}
		var frag bytes.Buffer
		res := &htmlr.DecodeResult{Summary: p.Title, Kind: p.Part, Bytes: p.Bytes, Tree: p.Spans}
		if err := b.Renderer().DecodeFragment(&frag, res); err != nil {
			return err
		}
		rv.Bytes = template.HTML(frag.String())
		rv.Schema = htmlr.Highlight(p.Schema)
		var buf bytes.Buffer
		if err := tmpl.ExecuteTemplate(&buf, "record", rv); err != nil {
			return fmt.Errorf("record page %s: %w", r.Msg.Name, err)
		}
		body := template.HTML(buf.String())
		if err := b.AddDoc(RecordPath(r, int(v)), rv.Title, body); err != nil {
			return err
		}
		if i == len(versions)-1 {
			if err := b.AddDoc(RecordPath(r, -1), rv.Title, body); err != nil {
				return err
			}
		}
		js, err := jsonr.RecordPageDocument(p)
		if err != nil {
			return err
		}
		if err := b.Add(JSONPath(r, int(v)), site.TypeJSON, js); err != nil {
			return err
		}
	}
	return nil
}
