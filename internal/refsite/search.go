package refsite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// Entry is one item of the search index. Field names are short because the
// index is downloaded by the search page.
type Entry struct {
	Kind string `json:"k"` // "api", "field", "tagged", "error", "record"
	Name string `json:"n"` // what matches: API name, field name, error name
	// Key is the API key or error code ("33", "-1"), matched whole.
	Key  string `json:"c,omitempty"`
	Info string `json:"i,omitempty"` // a path, a type, versions
	Href string `json:"h"`
}

// SearchIndex returns the search index of a registry as JSON: every API
// (name and key), every field with its path and versions, every tagged
// field, every error code and every record type.
func SearchIndex(reg *schema.Registry) ([]byte, error) {
	var out []Entry
	for _, api := range reg.APIs {
		href := "/apis/" + api.Name + "/"
		info := "API key " + strconv.Itoa(int(api.Key))
		if api.Reserved() {
			info += ", reserved"
		} else {
			info += ", versions " + api.Request.Valid.String()
		}
		out = append(out, Entry{Kind: "api", Name: api.Name, Key: strconv.Itoa(int(api.Key)), Info: info, Href: href})
		if api.Reserved() {
			continue
		}
		for _, m := range []*schema.Message{api.Request, api.Response} {
			out = appendFields(out, api, m)
		}
	}
	for _, m := range reg.Messages {
		switch m.Type {
		case schema.TypeMetadata, schema.TypeCoordinatorKey, schema.TypeCoordinatorValue:
			out = append(out, Entry{Kind: "record", Name: m.Name, Info: m.Type.String() + ", versions " + m.Valid.String(),
				Href: RecordHref(m)})
		}
	}
	for _, e := range ErrorCodes() {
		info := "error code " + strconv.Itoa(int(e.Code))
		out = append(out, Entry{Kind: "error", Name: e.Name, Key: strconv.Itoa(int(e.Code)), Info: info, Href: ErrorsPath + "#" + e.Name})
		if e.Formerly != "" { // the earlier name finds the entry too
			out = append(out, Entry{Kind: "error", Name: e.Formerly, Key: strconv.Itoa(int(e.Code)), Info: info + ", now " + e.Name, Href: ErrorsPath + "#" + e.Name})
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("refsite: search index: %w", err)
	}
	return b, nil
}

// RecordHref is where a record type's page is ("" while none exists).
var RecordHref = func(m *schema.Message) string { return "" }

// appendFields adds every field of a message, depth-first, each linked to
// the API page of the newest version it exists in, at its tree row. The
// row's id is the field's path in the one path syntax of the object tree
// (span.Tree.Path): the walk builds a tree shaped like the smallest
// instance (every array with one element) and asks it for the path.
func appendFields(out []Entry, api *schema.API, m *schema.Message) []Entry {
	kind := "request"
	if m.Type == schema.TypeResponse {
		kind = "response"
	}
	var pt pathTree
	type item struct {
		s    *schema.Struct
		node span.ID // the node whose children are the struct's fields
		show string  // the path people read: AlterConfigsRequest.Resources.ResourceName
		d    int
		vs   schema.Versions // the versions the struct exists in at this path
		// tagged is set below a tagged field: such fields are never in
		// the smallest instance's tree.
		tagged bool
	}
	seen := map[*schema.Struct]bool{}
	stack := []item{{s: m.Body, node: pt.add(pt.add(span.None, "", -1), m.Name, -1), show: m.Name, vs: m.Valid}}
	var fields []Entry
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.s == nil || it.d > maxGrammarDepth {
			continue
		}
		for _, f := range it.s.Fields {
			fv := f.Versions.Intersect(it.vs)
			if fv.Empty() {
				continue
			}
			node := pt.add(it.node, f.Name, -1)
			path := pt.t.Path(node)
			show := it.show + "." + f.Name
			v := fv.Hi
			href := fmt.Sprintf("/apis/%s/v%d/#%s:%s", api.Name, v, kind, path)
			if v == m.Valid.Hi {
				href = fmt.Sprintf("/apis/%s/#%s:%s", api.Name, kind, path)
			}
			info := show + " · " + f.Type.Name + " · versions " + fv.String()
			e := Entry{Kind: "field", Name: f.Name, Info: info, Href: href}
			tagged := it.tagged || !f.Tagged.Empty()
			if tagged {
				e.Kind = "tagged"
				e.Info = fmt.Sprintf("%s · %s · versions %s", show, f.Type.Name, fv.String())
				if !f.Tagged.Empty() {
					e.Info += fmt.Sprintf(" · tag %d, tagged versions %s", f.Tag, f.Tagged.String())
				} else {
					e.Info += " · inside a tagged field"
				}
				// Tagged fields are never in the smallest instance: link
				// the page's tagged-field table.
				e.Href = fmt.Sprintf("/apis/%s/#%s-tagged", api.Name, kind)
			}
			fields = append(fields, e)
			if st := f.Type.ElemStruct(); st != nil && !seen[st] {
				// A common struct used in several places is listed once,
				// at its first place.
				seen[st] = true
				sub := node
				if f.Type.Kind == schema.KindArray {
					pt.t.N(node).Val = span.ValArray
					sub = pt.add(node, st.Name, 0) // the array's one element
				}
				stack = append(stack, item{s: st, node: sub, show: show, d: it.d + 1, vs: fv, tagged: tagged})
			}
		}
	}
	sort.SliceStable(fields, func(i, j int) bool { return fields[i].Info < fields[j].Info })
	return append(out, fields...)
}

// pathTree is a tree of names only, shaped like a message's object tree,
// whose paths are the tree's (span.Tree.Path).
type pathTree struct{ t span.Tree }

// add adds a node named name under parent; index >= 0 makes it an array
// element.
func (p *pathTree) add(parent span.ID, name string, index int32) span.ID {
	id := p.t.Add(parent, &span.Desc{}, 0, span.CatNone)
	n := p.t.N(id)
	n.Desc = p.t.LocalDesc(&span.Desc{Name: name})
	n.Index = index
	return id
}

// SearchIndexScript is the index as a script that sets
// window.manifesterSearchIndex: search.js loads it from file://, where a
// page can load a script but not fetch a file. The JSON is a valid
// script as it is (encoding/json escapes U+2028 and U+2029).
func SearchIndexScript(idx []byte) []byte {
	out := make([]byte, 0, len(idx)+40)
	out = append(out, "window.manifesterSearchIndex = "...)
	out = append(out, bytes.TrimRight(idx, "\n")...)
	return append(out, ";\n"...)
}
