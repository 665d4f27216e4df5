package html

import (
	"bytes"
	"testing"

	"golang.org/x/net/html"

	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// misleadingPage is a page of a synthetic message whose tree rows are
// named to mislead: the element of an array of struct A is named and
// typed after struct B, an error code is named "Status" while a plain
// int16 is named "ErrorCode", a field added in v1 is named after one that
// exists in every version. Only the rows' descriptors say what they are.
func misleadingPage() (*page.Page, *schema.API) {
	i16 := &schema.Type{Kind: schema.KindInt16, Name: "int16"}
	tagged := func(name string, tag int32) *schema.Field {
		return &schema.Field{Name: name, Type: i16, Versions: schema.All, Tagged: schema.All, Tag: tag}
	}
	a := &schema.Struct{Name: "A", Versions: schema.All, Tagged: []*schema.Field{tagged("FromA", 0)}}
	b := &schema.Struct{Name: "B", Versions: schema.All, Tagged: []*schema.Field{tagged("FromB", 1)}}
	body := &schema.Struct{Name: "Req", Versions: schema.All, Tagged: []*schema.Field{tagged("FromBody", 2)}}
	arr := &schema.Field{Name: "As", Type: &schema.Type{Kind: schema.KindArray, Name: "[]A", Elem: &schema.Type{Kind: schema.KindStruct, Name: "A", Struct: a}},
		Versions: schema.All, Tag: -1}
	status := &schema.Field{Name: "Status", Type: i16, Versions: schema.All, Tag: -1}
	plain := &schema.Field{Name: "ErrorCode", Type: i16, Versions: schema.All, Tag: -1}
	added := &schema.Field{Name: "Added", Type: i16, Versions: schema.Versions{Lo: 1, Hi: schema.MaxVersion}, Tag: -1}
	m := &schema.Message{Name: "Req", Type: schema.TypeRequest, Valid: schema.Versions{Lo: 0, Hi: 2}, Flexible: schema.All,
		Body: body, Structs: []*schema.Struct{a, b}}

	t := &span.Tree{Bytes: make([]byte, 8)}
	add := func(parent span.ID, d *span.Desc, off, size int, cat span.Category) span.ID {
		id := t.Add(parent, &span.Desc{}, off, cat)
		t.N(id).Desc, t.N(id).Len = t.LocalDesc(d), int32(size)
		return id
	}
	leaf := func(parent span.ID, d *span.Desc, off, size int, cat span.Category, v int64) span.ID {
		id := add(parent, d, off, size, cat)
		t.N(id).Val, t.N(id).Int = span.ValInt, v
		return id
	}
	root := add(span.None, &span.Desc{Name: "Req", Type: "message v2"}, 0, 8, span.CatNone)
	bd := add(root, &span.Desc{Name: "Req", Type: "struct"}, 0, 8, span.CatRequestBody)
	as := add(bd, &span.Desc{Name: "As", Type: "[]B", Field: arr, Struct: a}, 0, 2, span.CatRequestBody)
	t.N(as).Val, t.N(as).Int = span.ValArray, 1
	leaf(as, &span.Desc{Name: "length", Type: "uvarint"}, 0, 1, span.CatRequestBody, 2)
	el := add(as, &span.Desc{Name: "B", Type: "B", Field: arr, Struct: a}, 1, 1, span.CatRequestBody)
	t.N(el).Index = 0
	leaf(el, &span.Desc{Name: "tagged_fields", Type: "uvarint"}, 1, 1, span.CatTagged, 0)
	leaf(bd, &span.Desc{Name: "ErrorCode", Type: "int16", Field: status, Note: span.NoteErrorCode}, 2, 2, span.CatRequestBody, 3)
	leaf(bd, &span.Desc{Name: "Status", Type: "int16", Field: plain}, 4, 2, span.CatRequestBody, 3)
	leaf(bd, &span.Desc{Name: "ErrorCode", Type: "int16", Field: added}, 6, 1, span.CatRequestBody, 0)
	leaf(bd, &span.Desc{Name: "tagged_fields", Type: "uvarint"}, 7, 1, span.CatTagged, 0)

	sec := func(kind string) *page.Section {
		return &page.Section{Kind: kind, Message: "Req", Size: 8, Bytes: t.Bytes, Spans: t}
	}
	p := &page.Page{API: "Req", Version: 2, Flexible: true, Request: sec("request"), Response: sec("response")}
	return p, &schema.API{Name: "Req", Request: m, Response: m}
}

// TestRowFactsFromDescriptors checks that the tagged-field notes, the
// since-version notes and the error-code links of an API page's tree come
// from the rows' descriptors, not from their names or types.
func TestRowFactsFromDescriptors(t *testing.T) {
	r, err := New()
	if err != nil {
		t.Fatal(err)
	}
	r.ErrorsPath = "/errors/"
	p, api := misleadingPage()
	var out bytes.Buffer
	if err := r.Page(&out, &PageInput{Page: p, API: api}); err != nil {
		t.Fatal(err)
	}
	doc := checkSafe(t, out.Bytes())
	type row struct{ val, link, since, tags string }
	got := map[string]row{}
	for _, tr := range findNodes(doc, func(n *html.Node) bool { return n.Data == "tr" && attrOf(n, "id") != "" }) {
		var rw row
		for _, n := range findNodes(tr, func(*html.Node) bool { return true }) {
			switch {
			case n.Data == "td" && attrOf(n, "class") == "val":
				rw.val = textOf(n)
			case n.Data == "a" && n.Parent != nil && attrOf(n.Parent, "class") == "val":
				rw.link = attrOf(n, "href")
			case n.Data == "span" && attrOf(n, "class") == "since":
				rw.since = textOf(n)
			case n.Data == "span" && attrOf(n, "class") == "tags":
				rw.tags = textOf(n)
			}
		}
		got[attrOf(tr, "id")] = rw
	}
	want := map[string]row{
		"request:Req.As[0].tagged_fields": {val: "= 0", tags: "(could carry tagged fields 0 FromA)"},
		"request:Req.tagged_fields":       {val: "= 0", tags: "(could carry tagged fields 2 FromBody)"},
		"request:Req.ErrorCode":           {val: "= 3 (UNKNOWN_TOPIC_OR_PARTITION)", link: "/errors/#UNKNOWN_TOPIC_OR_PARTITION"},
		"request:Req.Status":              {val: "= 3"},
		"request:Req.ErrorCode~1":         {val: "= 0", since: "(since v1)"},
	}
	for id, w := range want {
		if g, ok := got[id]; !ok || g != w {
			t.Errorf("row %s: %+v, want %+v", id, g, w)
		}
	}
}

// TestRowIDsUnique checks that rows whose paths repeat, or collide with
// the suffix given to a repeat, still get unique ids.
func TestRowIDsUnique(t *testing.T) {
	tr := &span.Tree{Bytes: make([]byte, 4)}
	root := tr.Add(span.None, &span.Desc{}, 0, span.CatNone)
	tr.N(root).Len = 4
	for i, name := range []string{"a", "a", "a~1", "a"} {
		id := tr.Add(root, &span.Desc{}, i, span.CatRequestBody)
		tr.N(id).Desc, tr.N(id).Len = tr.LocalDesc(&span.Desc{Name: name}), 1
	}
	rows, of := treeRows("f0", tr)
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.ID] {
			t.Errorf("id %q twice in %v", r.ID, rows)
		}
		seen[r.ID] = true
	}
	if len(rows) != 5 || rows[of[1]].ID != "f0:a" || rows[of[2]].ID != "f0:a~1" || rows[of[3]].ID != "f0:a~1~1" {
		t.Errorf("ids %v", rows)
	}
}
