package html

import (
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/schema"
)

// PageInput is everything an API page shows.
type PageInput struct {
	Page *page.Page
	API  *schema.API
	// RequestHeader and ResponseHeader, when set, add the headers' tagged
	// fields to the tagged-field tables.
	RequestHeader, ResponseHeader *schema.Message
	Extras                        Extras
}

type badge struct{ Class, Text, Title string }

type versionLink struct {
	V        int16
	Href     string
	Current  bool
	Flexible bool
	// FirstFlexible marks the flexible/non-flexible boundary.
	FirstFlexible bool
	Unstable      bool
	Title         string // tooltip of an older-release version
}

type apiView struct {
	P        *page.Page
	Title    string
	Intro    string
	Badges   []badge
	Versions []versionLink
	Older    []versionLink
	FlexNote string
	Summary  []page.Item
	Legend   []legendItem
	Sections []*sectionView
	Extras   []Section
	Note     string
	JSONHref string
}

type sectionView struct {
	ID      string // element id and row-id prefix: "request", "response", "f0"
	Kind    string // "request" or "response"
	Heading string // "Request"
	Title   string
	Size    int
	Hex     string
	Error   string
	Grid    []gridRow
	Tree    []treeRow
	Tagged  []taggedStruct
	Untaged []string // structs without tagged fields at this version
	Flex    bool
	Version int16
	Schema  template.HTML
	File    string
}

type gridRow struct {
	Off   string
	Cells []gridCell
	Pad   []struct{}
	ASCII string
}

type gridCell struct {
	Hex   string
	Class string
	R     int // tree row of the leaf, -1 when no leaf covers the byte
	Off   int
	First bool // the one cell in the tab order (roving tabindex)
}

type treeRow struct {
	ID     string
	Prefix string
	Name   string
	Type   string
	Value  string
	Span   string
	About  string
	Flag   string
	Error  string
	Class  string
	Off    int
	Size   int
	Parent int
	Leaf   bool
	// Tags lists, on a struct's tagged_fields row, the tagged fields the
	// struct could carry at this version ("0 ClusterId, 1 ReplicaState").
	Tags string
	// Since says in which versions the field exists when not in all of
	// them ("since v3"); ErrHref links an error code to its entry.
	Since   string
	ErrHref string
}

type taggedStruct struct {
	Struct string
	Fields []taggedField
}

type taggedField struct {
	Tag      int32
	Name     string
	Type     string
	Versions string
	About    string
}

// Page writes the reference page of one API at one version.
func (r *Renderer) Page(w io.Writer, in *PageInput) error {
	v, err := r.apiView(in)
	if err != nil {
		return err
	}
	footer := r.Footer
	if in.Extras.Footer != "" {
		footer = in.Extras.Footer
	}
	return r.execFooter(w, "api", fmt.Sprintf("%s v%d", v.Title, in.Page.Version), "api", footer, v)
}

func (r *Renderer) apiView(in *PageInput) (*apiView, error) {
	p := in.Page
	if p == nil || p.Request == nil || p.Response == nil {
		return nil, fmt.Errorf("page is incomplete")
	}
	v := &apiView{P: p, Title: clean(p.API), Intro: clean(p.Intro), Legend: legend(), Extras: in.Extras.Sections,
		JSONHref: JSONPath(p.API, int(p.Version)), Note: clean(in.Extras.Intro)}
	for _, it := range append(append([]page.Item(nil), p.Summary...), in.Extras.Summary...) {
		v.Summary = append(v.Summary, page.Item{Label: clean(it.Label), Value: clean(it.Value)})
	}
	if in.API != nil {
		req := in.API.Request
		if req.LatestVersionUnstable {
			v.Badges = append(v.Badges, badge{"unstable", fmt.Sprintf("v%d unstable", req.Valid.Hi),
				fmt.Sprintf("latestVersionUnstable: v%d is not released; brokers only accept it with unstable versions enabled", req.Valid.Hi)})
		}
		if in.API.ControllerOnly() {
			v.Badges = append(v.Badges, badge{"controller", "controller only",
				"listeners: " + strings.Join(req.Listeners, ", ") + " (brokers do not accept it)"})
		}
		older := map[int16]bool{}
		for _, o := range in.Extras.Older {
			older[o.V] = true
			v.Older = append(v.Older, versionLink{V: o.V, Href: clean(o.Href), Current: o.V == p.Version, Title: clean(o.Title)})
		}
		if in.Extras.Switcher != nil {
			req = in.Extras.Switcher
		}
		flexSeen := false
		for _, x := range versionsOf(req) {
			if older[x] {
				continue
			}
			l := versionLink{V: x, Href: APIPath(p.API, int(x)), Current: x == p.Version, Flexible: req.IsFlexible(x),
				Unstable: req.LatestVersionUnstable && x == req.Valid.Hi}
			if l.Flexible && !flexSeen {
				flexSeen = true
				l.FirstFlexible = x != req.Valid.Lo
			}
			v.Versions = append(v.Versions, l)
		}
		for _, b := range in.Extras.Badges {
			v.Badges = append(v.Badges, badge{clean(b.Class), clean(b.Text), clean(b.Title)})
		}
		switch {
		case req.Flexible.Empty():
			v.FlexNote = "no flexible versions"
		case req.Flexible.Lo <= req.Valid.Lo:
			v.FlexNote = "all versions are flexible"
		default:
			v.FlexNote = fmt.Sprintf("flexible from v%d", req.Flexible.Lo)
		}
	}
	for _, s := range []*page.Section{p.Request, p.Response} {
		sv := r.section(in, s)
		v.Sections = append(v.Sections, sv)
	}
	return v, nil
}

func (r *Renderer) section(in *PageInput, s *page.Section) *sectionView {
	p := in.Page
	sv := &sectionView{Kind: s.Kind, Heading: "Request", Title: clean(s.Title), Size: s.Size, Error: clean(s.Error),
		Version: p.Version, Flex: p.Flexible}
	if s.Kind == "response" {
		sv.Heading = "Response"
	}
	data := s.Bytes
	if data == nil && s.Hex != "" {
		data, _ = hex.DecodeString(s.Hex)
	}
	sv.ID = s.Kind
	fillBytes(sv, data, s.Tree)
	sv.Schema = r.hl.get(s.Schema)
	if in.API != nil {
		m, hdr := in.API.Request, in.RequestHeader
		if s.Kind == "response" {
			m, hdr = in.API.Response, in.ResponseHeader
		}
		noteFields(sv, s.Tree, m, r.ErrorsPath)
		sv.File = clean(m.Name) + ".json"
		if hdr != nil {
			addTagged(sv, hdr, s.HeaderVersion)
		}
		addTagged(sv, m, p.Version)
		markTags(sv)
	}
	return sv
}

// noteFields adds to the tree rows of a message body what the field
// descriptors say: the versions a field exists in, error-code links.
func noteFields(sv *sectionView, tree *page.Node, m *schema.Message, errorsPath string) {
	fields := bodyFields(tree, m)
	if len(fields) == 0 {
		return
	}
	i := 0
	var walk func(n *page.Node)
	walk = func(n *page.Node) {
		if i >= len(sv.Tree) {
			return
		}
		row := &sv.Tree[i]
		i++
		if f := fields[n]; f != nil {
			fn := notesFor(f, m, n, errorsPath)
			row.Since, row.ErrHref = fn.since, fn.errHref
		}
		for _, k := range n.Children {
			walk(k)
		}
	}
	walk(tree)
}

// markTags notes on every tagged_fields row of the tree which tagged
// fields its struct could carry (the smallest instance sends none).
func markTags(sv *sectionView) {
	if len(sv.Tagged) == 0 {
		return
	}
	byStruct := map[string]string{}
	for _, ts := range sv.Tagged {
		parts := make([]string, len(ts.Fields))
		for i, f := range ts.Fields {
			parts[i] = fmt.Sprintf("%d %s", f.Tag, f.Name)
		}
		byStruct[ts.Struct] = strings.Join(parts, ", ")
	}
	for i := range sv.Tree {
		row := &sv.Tree[i]
		if row.Name != "tagged_fields" || !row.Leaf || row.Parent < 0 {
			continue
		}
		parent := sv.Tree[row.Parent]
		name, _, _ := strings.Cut(parent.Name, "[")
		for _, cand := range []string{parent.Type, name} {
			if tags, ok := byStruct[cand]; ok {
				row.Tags = tags
				break
			}
		}
	}
}

// fillBytes sets the grid and tree of sv from the frame's bytes and its
// annotated tree.
func fillBytes(sv *sectionView, data []byte, tree *page.Node) {
	sv.Size = len(data)
	sv.Hex = hex.EncodeToString(data)
	sv.Tree = treeRows(sv.ID, tree)
	owner := make([]int, len(data))
	for i := range owner {
		owner[i] = -1
	}
	for i, row := range sv.Tree {
		if !row.Leaf {
			continue
		}
		for o := max(row.Off, 0); o < row.Off+row.Size && o < len(data); o++ {
			owner[o] = i
		}
	}
	for off := 0; off < len(data); off += 16 {
		end := min(off+16, len(data))
		gr := gridRow{Off: fmt.Sprintf("%04x", off), ASCII: ascii(data[off:end]), Pad: make([]struct{}, 16-(end-off))}
		for o := off; o < end; o++ {
			c := gridCell{Hex: fmt.Sprintf("%02x", data[o]), R: owner[o], Off: o, First: o == 0, Class: "c-none"}
			if c.R >= 0 {
				c.Class = sv.Tree[c.R].Class
			}
			gr.Cells = append(gr.Cells, c)
		}
		sv.Grid = append(sv.Grid, gr)
	}
}

// addTagged lists the tagged fields of every struct of m that exists at v.
func addTagged(sv *sectionView, m *schema.Message, v int16) {
	if !m.Valid.Contains(v) || !m.IsFlexible(v) {
		return
	}
	structs := append([]*schema.Struct{m.Body}, m.Structs...)
	for _, s := range structs {
		if s == nil || !s.Versions.Contains(v) {
			continue
		}
		ts := taggedStruct{Struct: clean(s.Name)}
		for _, f := range s.Tagged {
			if !f.IsTagged(v) {
				continue
			}
			ts.Fields = append(ts.Fields, taggedField{Tag: f.Tag, Name: clean(f.Name), Type: clean(f.Type.Name),
				Versions: f.Tagged.String(), About: clean(f.About)})
		}
		if len(ts.Fields) > 0 {
			sv.Tagged = append(sv.Tagged, ts)
		} else {
			sv.Untaged = append(sv.Untaged, ts.Struct)
		}
	}
}

// treeRows flattens a page tree into table rows with the seeds' +-- and |
// prefixes.
func treeRows(kind string, root *page.Node) []treeRow {
	if root == nil {
		return nil
	}
	var rows []treeRow
	ids := map[string]int{}
	var walk func(n *page.Node, prefix string, last, isRoot bool, parent int)
	walk = func(n *page.Node, prefix string, last, isRoot bool, parent int) {
		pfx, childPrefix := "", ""
		if !isRoot {
			pfx = prefix + "+-- "
			if last {
				childPrefix = prefix + "    "
			} else {
				childPrefix = prefix + "|   "
			}
		}
		id := kind + ":" + clean(n.Path)
		if k := ids[id]; k > 0 {
			ids[id] = k + 1
			id = fmt.Sprintf("%s~%d", id, k)
		} else {
			ids[id] = 1
		}
		row := treeRow{ID: id, Prefix: pfx, Name: clean(n.Name), Type: clean(n.Type), Value: clean(n.Value),
			Span: fmt.Sprintf("[0x%04x, %dB]", n.Offset, n.Size), About: clean(n.About), Flag: clean(n.Flag),
			Error: clean(n.Error), Class: catClass(n.Category), Off: n.Offset, Size: n.Size, Parent: parent,
			Leaf: len(n.Children) == 0}
		me := len(rows)
		rows = append(rows, row)
		for i, k := range n.Children {
			walk(k, childPrefix, i == len(n.Children)-1, false, me)
		}
	}
	walk(root, "", true, true, -1)
	return rows
}
