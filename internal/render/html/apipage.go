package html

import (
	"encoding/hex"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"

	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
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
	// GapBefore marks a version the switcher shows after a gap: the
	// versions between it and the previous one shown are left out
	// ([Window]).
	GapBefore bool
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
	// row maps a node of the section's tree to its index in Tree (-1:
	// none).
	row     []int
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
	of     *schema.Struct
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
	b, err := r.PageHTML(in)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// PageHTML returns the reference page of one API at one version, as
// [Renderer.Page] writes it, in a new slice of exactly its size.
func (r *Renderer) PageHTML(in *PageInput) ([]byte, error) {
	v, l, err := r.apiPage(in)
	if err != nil {
		return nil, err
	}
	return render(func(b []byte) []byte { return appendAPI(b, l, v) }), nil
}

// apiPage is the view of an API page and its layout, for the "api"
// template and for appendAPI.
func (r *Renderer) apiPage(in *PageInput) (*apiView, *layout, error) {
	v, err := r.apiView(in)
	if err != nil {
		return nil, nil, err
	}
	footer := r.Footer
	if in.Extras.Footer != "" {
		footer = in.Extras.Footer
	}
	return v, r.layout(fmt.Sprintf("%s v%d", v.Title, in.Page.Version), "api", footer, v), nil
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
		}
		ovs := in.Extras.Older
		prev := -1
		for _, i := range Window(len(ovs), sort.Search(len(ovs), func(i int) bool { return ovs[i].V >= p.Version })) {
			o := ovs[i]
			v.Older = append(v.Older, versionLink{V: o.V, Href: clean(o.Href), Current: o.V == p.Version, Title: clean(o.Title),
				GapBefore: prev >= 0 && i != prev+1})
			prev = i
		}
		if in.Extras.Switcher != nil {
			req = in.Extras.Switcher
		}
		var vs []int16
		for _, x := range versionsOf(req) {
			if !older[x] {
				vs = append(vs, x)
			}
		}
		flexSeen := false
		prev = -1
		for _, i := range Window(len(vs), sort.Search(len(vs), func(i int) bool { return vs[i] >= p.Version })) {
			x := vs[i]
			l := versionLink{V: x, Href: APIPath(p.API, int(x)), Current: x == p.Version, Flexible: req.IsFlexible(x),
				Unstable: req.LatestVersionUnstable && x == req.Valid.Hi, GapBefore: prev >= 0 && i != prev+1}
			prev = i
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
	fillBytes(sv, data, s.Spans)
	sv.Schema = r.hl.get(s.Schema)
	if in.API != nil {
		m, hdr := in.API.Request, in.RequestHeader
		if s.Kind == "response" {
			m, hdr = in.API.Response, in.ResponseHeader
		}
		noteFields(sv, s.Spans, m, r.ErrorsPath)
		sv.File = clean(m.Name) + ".json"
		if hdr != nil {
			addTagged(sv, hdr, s.HeaderVersion)
		}
		addTagged(sv, m, p.Version)
		markTags(sv, s.Spans, m, hdr)
	}
	return sv
}

// isBody reports whether node id is a frame's message body: a child of
// the root in a body's category.
func isBody(t *span.Tree, id span.ID) bool {
	n := t.N(id)
	return n.Parent == t.Root() && (n.Cat == span.CatRequestBody || n.Cat == span.CatResponseBody)
}

// noteFields adds to the tree rows of a message body what the field
// descriptors say: the versions a field exists in, error-code links. The
// rows of sv.Tree are t's nodes in walk order (see treeRows). Record
// batches inside a records field are not fields of m and get no notes.
func noteFields(sv *sectionView, t *span.Tree, m *schema.Message, errorsPath string) {
	root := t.Root()
	if root == span.None || m == nil {
		return
	}
	for _, body := range t.Kids(root) {
		if !isBody(t, body) {
			continue
		}
		var walk func(id span.ID, depth int)
		walk = func(id span.ID, depth int) {
			if depth > maxTreeDepth {
				return
			}
			if i := sv.row[id]; i >= 0 && t.Desc(id).Field != nil {
				fn := notesFor(t, id, m, errorsPath)
				sv.Tree[i].Since, sv.Tree[i].ErrHref = fn.since, fn.errHref
			}
			if t.N(id).Val == span.ValRecords {
				return
			}
			for k := t.N(id).First; k != span.None; k = t.N(k).Next {
				walk(k, depth+1)
			}
		}
		walk(body, 0)
	}
}

// maxTreeDepth bounds the recursion of the walks over a tree's rows.
const maxTreeDepth = 256

// structOf returns the struct whose fields are node id's children: the
// struct of a struct node or array element (its descriptor's Struct),
// the body of a message node, and, for a frame's header and body nodes,
// the header message's and the message's body.
func structOf(t *span.Tree, id span.ID, m, hdr *schema.Message) *schema.Struct {
	d := t.Desc(id)
	if d.Struct != nil {
		return d.Struct
	}
	if d.Message != nil {
		return d.Message.Body
	}
	if t.N(id).Parent != t.Root() {
		return nil
	}
	switch {
	case isBody(t, id) && m != nil:
		return m.Body
	case t.N(id).Cat == span.CatHeader && hdr != nil:
		return hdr.Body
	}
	return nil
}

// markTags notes on every tagged-field section of the tree (a leaf in the
// tagged_fields category) which tagged fields its struct could carry at
// this version (the smallest instance sends none). The struct is the
// section's parent's, from its descriptor.
func markTags(sv *sectionView, t *span.Tree, m, hdr *schema.Message) {
	if len(sv.Tagged) == 0 || t.Root() == span.None {
		return
	}
	byStruct := map[*schema.Struct]string{}
	for _, ts := range sv.Tagged {
		parts := make([]string, len(ts.Fields))
		for i, f := range ts.Fields {
			parts[i] = fmt.Sprintf("%d %s", f.Tag, f.Name)
		}
		byStruct[ts.of] = strings.Join(parts, ", ")
	}
	t.Walk(t.Root(), func(id span.ID, _ int) {
		n := t.N(id)
		i := sv.row[id]
		if i < 0 || n.Cat != span.CatTagged || n.First != span.None || n.Parent == span.None || t.Desc(id).Field != nil {
			return
		}
		if s := structOf(t, n.Parent, m, hdr); s != nil {
			sv.Tree[i].Tags = byStruct[s]
		}
	})
}

// fillBytes sets the grid and tree of sv from the frame's bytes and its
// annotated tree.
func fillBytes(sv *sectionView, data []byte, t *span.Tree) {
	sv.Size = len(data)
	sv.Hex = hex.EncodeToString(data)
	sv.Tree, sv.row = treeRows(sv.ID, t)
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
		ts := taggedStruct{Struct: clean(s.Name), of: s}
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

// treeRows flattens a tree into table rows with the seeds' +-- and |
// prefixes, in walk order, and maps each node to its row (-1 for none).
// Row ids are kind + ":" + the node's path in the one path syntax
// (span.Tree.Path); a path that repeats gets "~k", so ids are unique.
func treeRows(kind string, t *span.Tree) ([]treeRow, []int) {
	if t.Root() == span.None {
		return nil, nil
	}
	rows := make([]treeRow, 0, t.Len())
	of := make([]int, t.Len())
	for i := range of {
		of[i] = -1
	}
	ids := map[string]int{}
	var path []byte
	var walk func(id span.ID, prefix string, last, isRoot bool, parent int)
	walk = func(id span.ID, prefix string, last, isRoot bool, parent int) {
		pfx, childPrefix := "", ""
		if !isRoot {
			pfx = prefix + "+-- "
			if last {
				childPrefix = prefix + "    "
			} else {
				childPrefix = prefix + "|   "
			}
		}
		path = t.AppendPath(append(path[:0], kind+":"...), id)
		rid := clean(string(path))
		if k := ids[rid]; k > 0 {
			// A repeated path gets the first free "~k", free also of
			// paths that end in "~k" themselves.
			cand := fmt.Sprintf("%s~%d", rid, k)
			for ids[cand] > 0 {
				k++
				cand = fmt.Sprintf("%s~%d", rid, k)
			}
			ids[rid] = k + 1
			rid = cand
		}
		ids[rid]++
		n := t.N(id)
		row := treeRow{ID: rid, Prefix: pfx, Name: clean(t.DisplayName(id)), Type: clean(t.Type(id)), Value: clean(t.ValueText(id)),
			Span: fmt.Sprintf("[0x%04x, %dB]", n.Off, n.Len), About: clean(t.About(id)), Flag: clean(t.Flag(id)),
			Class: catClass(n.Cat), Off: int(n.Off), Size: int(n.Len), Parent: parent, Leaf: n.First == span.None}
		if err := t.Err(id); err != nil {
			row.Error = clean(err.Error())
		}
		me := len(rows)
		of[id] = me
		rows = append(rows, row)
		for k := n.First; k != span.None; {
			next := t.N(k).Next
			walk(k, childPrefix, next == span.None, false, me)
			k = next
		}
	}
	walk(t.Root(), "", true, true, -1)
	return rows, of
}
