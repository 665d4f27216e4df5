// Package diff compares Kafka message schemas: two versions of one API
// ([Versions]), or two releases of the whole protocol ([Releases]). The
// results are plain data with text ([VersionDiff.WriteText],
// [ReleaseDiff.WriteText]) and JSON renderings, for the CLI and the site.
package diff

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
)

// VersionDiff is what changed in one API from version From to version To.
type VersionDiff struct {
	API      string      `json:"api"`
	Key      int16       `json:"api_key"`
	Release  string      `json:"release,omitempty"`
	From     int16       `json:"from"`
	To       int16       `json:"to"`
	Request  MessageDiff `json:"request"`
	Response MessageDiff `json:"response"`
}

// MessageDiff is what changed in the request or the response.
type MessageDiff struct {
	Message string `json:"message"`
	// Flexible tells whether each version uses the flexible encoding.
	Flexible BoolPair `json:"flexible"`
	// HeaderVersion is the request or response header version at each
	// version.
	HeaderVersion IntPair `json:"header_version"`
	// Size is the size in bytes of the smallest frame at each version,
	// length prefix included.
	Size IntPair `json:"size"`
	// Structs lists, per struct, the fields added, removed and changed; a
	// struct with no changes is left out.
	Structs []StructDiff `json:"structs"`
	// Comments are the spec's own comments about the versions after From
	// up to To.
	Comments []Comment `json:"comments"`
}

// BoolPair is a boolean at the old and the new version.
type BoolPair struct {
	From bool `json:"from"`
	To   bool `json:"to"`
}

// Changed reports whether the value differs.
func (p BoolPair) Changed() bool { return p.From != p.To }

// IntPair is a number at the old and the new version.
type IntPair struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// Changed reports whether the value differs.
func (p IntPair) Changed() bool { return p.From != p.To }

// Delta returns To - From.
func (p IntPair) Delta() int { return p.To - p.From }

// StructDiff lists the field changes of one struct, identified by its field
// path from the message body ("" for the body itself, "Topics",
// "Topics.Partitions").
type StructDiff struct {
	Path    string        `json:"path"`
	Struct  string        `json:"struct"`
	Added   []FieldInfo   `json:"added,omitempty"`
	Removed []FieldInfo   `json:"removed,omitempty"`
	Changed []FieldChange `json:"changed,omitempty"`
}

// Empty reports whether nothing changed in the struct.
func (s *StructDiff) Empty() bool {
	return len(s.Added) == 0 && len(s.Removed) == 0 && len(s.Changed) == 0
}

// FieldInfo describes a field as it is at one version.
type FieldInfo struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Versions string `json:"versions"`
	Nullable bool   `json:"nullable,omitempty"`
	// Tag is the field's tag when it is a tagged field at this version.
	Tag     *int32 `json:"tag,omitempty"`
	Default string `json:"default,omitempty"`
	About   string `json:"about,omitempty"`
	// Fields are the fields of a struct or struct-array field present at
	// this version.
	Fields []FieldInfo `json:"fields,omitempty"`
}

// Attrs lists what the diff says of f beside its name and type: its tag
// when tagged, "nullable", its default when it has one, and its versions
// ("tag 0, nullable, default x, versions 1+"). The default is the spec's
// text as it is: renderers escape it for their output.
func (f FieldInfo) Attrs() string {
	var attrs []string
	if f.Tag != nil {
		attrs = append(attrs, fmt.Sprintf("tag %d", *f.Tag))
	}
	if f.Nullable {
		attrs = append(attrs, "nullable")
	}
	if f.Default != "" {
		attrs = append(attrs, "default "+f.Default)
	}
	attrs = append(attrs, "versions "+f.Versions)
	return strings.Join(attrs, ", ")
}

// FieldChange lists what changed in a field present at both versions.
type FieldChange struct {
	Name    string   `json:"name"`
	Changes []Change `json:"changes"`
}

// Change is one changed property of a field: "name" (between two
// releases, a field renamed with its bytes unchanged), "place" (between
// two releases, an untagged field moved among the others: its position
// among the untagged fields present at each version), "type",
// "nullable", "tagged", "tag", "default" or "flexibleVersions". A
// field's "versions" range is not compared: at two versions both inside
// it, it does not change what is on the wire (releases narrow "0+" to
// "0-12" when v13 drops a field).
type Change struct {
	Property string `json:"property"`
	From     string `json:"from"`
	To       string `json:"to"`
	// Detail gives the spec's version range behind the change, such as
	// "nullableVersions 1+".
	Detail string `json:"detail,omitempty"`
}

// Versions compares versions a and b of api within one release (c's
// registry). Both versions must be valid for the request; the result lists
// b's changes relative to a (a may be greater than b, giving the reverse
// view). To compare many pairs of one API, use a [Differ].
func Versions(c *codec.Codec, api *schema.API, a, b int16) (*VersionDiff, error) {
	return NewDiffer(c, api).Versions(a, b)
}

// Previous returns the changes of version v relative to v-1, or nil when v
// is the lowest valid version (or not valid at all).
func Previous(c *codec.Codec, api *schema.API, v int16) (*VersionDiff, error) {
	if v <= api.Request.Valid.Lo || !api.Request.Valid.Contains(v) {
		return nil, nil
	}
	return Versions(c, api, v-1, v)
}

// A Differ compares versions of one API of one release, as [Versions]
// does, working out what every pair shares once: each message's
// per-version comments (parsed from its file) and the size of its
// smallest frame at each version (an encode). The site diffs every pair
// of an API's versions, so this is n encodes per message rather than
// n·(n-1). A Differ is safe for concurrent use.
type Differ struct {
	c    *codec.Codec
	api  *schema.API
	msgs [2]messageFacts // request, response
}

// messageFacts are the per-message facts a [Differ] works out once each.
type messageFacts struct {
	kind         schema.MessageType
	m            *schema.Message
	commentsOnce sync.Once
	comments     []Comment
	sizes        []sizeOnce // by version, from the request's lowest valid one
}

// sizeOnce is the smallest frame's size at one version, encoded once.
type sizeOnce struct {
	once sync.Once
	n    int
	err  error
}

// NewDiffer returns a Differ for api in c's registry.
func NewDiffer(c *codec.Codec, api *schema.API) *Differ {
	d := &Differ{c: c, api: api}
	n := 0
	if v := api.Request.Valid; !v.Empty() {
		n = int(v.Hi) - int(v.Lo) + 1
	}
	for i, kind := range []schema.MessageType{schema.TypeRequest, schema.TypeResponse} {
		m := api.Request
		if kind == schema.TypeResponse {
			m = api.Response
		}
		d.msgs[i] = messageFacts{kind: kind, m: m, sizes: make([]sizeOnce, n)}
	}
	return d
}

// Versions compares versions a and b of the Differ's API: see [Versions].
func (d *Differ) Versions(a, b int16) (*VersionDiff, error) {
	api := d.api
	for _, v := range []int16{a, b} {
		if !api.Request.Valid.Contains(v) {
			return nil, fmt.Errorf("%w: %s has no version %d in %s; valid versions are %s",
				codec.ErrVersion, api.Name, v, d.c.Reg.Label, api.Request.Valid)
		}
	}
	vd := &VersionDiff{API: api.Name, Key: api.Key, Release: d.c.Reg.Label, From: a, To: b}
	var err error
	if vd.Request, err = d.messageDiff(&d.msgs[0], a, b); err != nil {
		return nil, err
	}
	if vd.Response, err = d.messageDiff(&d.msgs[1], a, b); err != nil {
		return nil, err
	}
	return vd, nil
}

// size returns the size of mf's smallest frame at version v (valid).
func (d *Differ) size(mf *messageFacts, v int16) (int, error) {
	s := &mf.sizes[v-d.api.Request.Valid.Lo]
	s.once.Do(func() {
		frame, err := sample.Encode(d.c, d.api, mf.kind, v)
		if err != nil {
			s.err = fmt.Errorf("encoding the smallest %s v%d: %w", mf.m.Name, v, err)
			return
		}
		s.n = len(frame)
	})
	return s.n, s.err
}

func (d *Differ) messageDiff(mf *messageFacts, a, b int16) (MessageDiff, error) {
	m := mf.m
	mf.commentsOnce.Do(func() { mf.comments = VersionComments(m.Source) })
	md := MessageDiff{
		Message:       m.Name,
		Flexible:      BoolPair{m.IsFlexible(a), m.IsFlexible(b)},
		HeaderVersion: IntPair{int(m.HeaderVersion(a)), int(m.HeaderVersion(b))},
		Comments:      commentsBetween(mf.comments, a, b),
	}
	var err error
	if md.Size.From, err = d.size(mf, a); err != nil {
		return md, err
	}
	if md.Size.To, err = d.size(mf, b); err != nil {
		return md, err
	}
	md.Structs = Structs(m.Body, a, m.Body, b)
	if md.Comments == nil {
		md.Comments = []Comment{}
	}
	return md, nil
}

// Structs compares struct sa at version a with struct sb at version b,
// recursively, matching fields by name and nested structs by field path.
// The structs may come from different releases. Structs without changes
// are left out; the result is in depth-first field order.
func Structs(sa *schema.Struct, a int16, sb *schema.Struct, b int16) []StructDiff {
	out := []StructDiff{}
	compareStruct(&out, "", sa, a, sb, b, 0)
	return out
}

// maxDepth guards against self-referencing structs.
const maxDepth = 64

func compareStruct(out *[]StructDiff, path string, sa *schema.Struct, a int16, sb *schema.Struct, b int16, depth int) {
	if depth > maxDepth {
		return
	}
	byName := map[string]*schema.Field{}
	for _, f := range sa.Fields {
		if f.Versions.Contains(a) {
			byName[f.Name] = f
		}
	}
	// The fields of both, paired by name (in sb's order) and then, in two
	// definitions of one version, by place (renames); the rest added or
	// removed.
	var pairs [][2]*schema.Field
	var added, removed []*schema.Field
	seen := map[string]bool{}
	for _, fb := range sb.Fields {
		if !fb.Versions.Contains(b) {
			continue
		}
		seen[fb.Name] = true
		if fa, ok := byName[fb.Name]; ok {
			pairs = append(pairs, [2]*schema.Field{fa, fb})
		} else {
			added = append(added, fb)
		}
	}
	for _, fa := range sa.Fields {
		if fa.Versions.Contains(a) && !seen[fa.Name] {
			removed = append(removed, fa)
		}
	}
	if a == b {
		pairs, added, removed = renames(pairs, added, removed, sa, sb, a, depth)
	}
	sd := StructDiff{Path: path, Struct: sb.Name}
	for _, fb := range added {
		sd.Added = append(sd.Added, info(fb, b, depth))
	}
	for _, fa := range removed {
		sd.Removed = append(sd.Removed, info(fa, a, depth))
	}
	moved := moves(pairs, sa, a, sb, b)
	var nested []func()
	for _, p := range pairs {
		fa, fb := p[0], p[1]
		ch := fieldChanges(fa, a, fb, b)
		if c, ok := moved[fb]; ok {
			ch = append([]Change{c}, ch...)
		}
		if fa.Name != fb.Name {
			ch = append([]Change{{Property: "name", From: fa.Name, To: fb.Name}}, ch...)
		}
		if len(ch) > 0 {
			sd.Changed = append(sd.Changed, FieldChange{Name: fb.Name, Changes: ch})
		}
		ta, tb := fa.Type.ElemStruct(), fb.Type.ElemStruct()
		if ta != nil && tb != nil {
			sub := fb.Name
			if path != "" {
				sub = path + "." + fb.Name
			}
			nested = append(nested, func() { compareStruct(out, sub, ta, a, tb, b, depth+1) })
		}
	}
	if !sd.Empty() {
		*out = append(*out, sd)
	}
	for _, f := range nested {
		f()
	}
}

// renames finds, in two definitions of one version v (two releases'),
// the removed fields that were renamed. An added field at the same place
// on the wire (the same position among the untagged fields present, or
// the same tag), with the same type (or a struct, or array of structs, of
// the same shape under other names: see sameShape), nullability and own
// flexibleVersions (which decide whether a string is written compact),
// reads the same bytes: it is the field under a new name, paired with
// the removed one (and reported as a change of property "name") rather
// than as one field removed and another added. It returns the pairs with
// the renames after them, and the fields still added and removed.
func renames(pairs [][2]*schema.Field, added, removed []*schema.Field, sa, sb *schema.Struct, v int16, depth int) ([][2]*schema.Field, []*schema.Field, []*schema.Field) {
	if len(added) == 0 || len(removed) == 0 {
		return pairs, added, removed
	}
	// Each field's place, worked out in one walk of its struct (checking
	// every pair with a walk each was cubic in the field count).
	pa, pb := places(sa, v), places(sb, v)
	// The removed field at each place (one at most: places are distinct
	// within a struct).
	at := make(map[string]*schema.Field, len(removed))
	for _, fa := range removed {
		at[pa[fa]] = fa
	}
	var left []*schema.Field
	renamed := map[*schema.Field]bool{}
	for _, fb := range added {
		fa := at[pb[fb]]
		if fa == nil || renamed[fa] || !sameShape(fa.Type, fb.Type, v, depth) || fa.IsNullable(v) != fb.IsNullable(v) ||
			flexText(fa) != flexText(fb) {
			left = append(left, fb)
			continue
		}
		pairs = append(pairs, [2]*schema.Field{fa, fb})
		renamed[fa] = true
	}
	removed = slices.DeleteFunc(removed, func(fa *schema.Field) bool { return renamed[fa] })
	return pairs, left, removed
}

// places gives the place on the wire of each field of s present at
// version v: "tag N" for a tagged field, else its position among the
// untagged fields present ("0", "1", ...).
func places(s *schema.Struct, v int16) map[*schema.Field]string {
	m := make(map[*schema.Field]string, len(s.Fields))
	n := 0
	for _, g := range s.Fields {
		switch {
		case !g.Versions.Contains(v):
		case g.IsTagged(v):
			m[g] = "tag " + strconv.Itoa(int(g.Tag))
		default:
			m[g] = strconv.Itoa(n)
			n++
		}
	}
	return m
}

// moves finds, among the pairs of fields untagged at both versions, the
// ones whose order on the wire changed: two definitions (two releases')
// may list the same fields in another order, which reads other bytes.
// The fields kept in order are a longest run of pairs in the same order
// on both sides; the others moved. It returns the moved pairs' changes
// of property "place" (the position among the untagged fields present),
// keyed by the newer field.
func moves(pairs [][2]*schema.Field, sa *schema.Struct, a int16, sb *schema.Struct, b int16) map[*schema.Field]Change {
	idx := func(s *schema.Struct) map[*schema.Field]int {
		m := make(map[*schema.Field]int, len(s.Fields))
		for i, f := range s.Fields {
			m[f] = i
		}
		return m
	}
	ia, ib := idx(sa), idx(sb)
	var untagged [][2]*schema.Field
	for _, p := range pairs {
		if !p[0].IsTagged(a) && !p[1].IsTagged(b) {
			untagged = append(untagged, p)
		}
	}
	slices.SortFunc(untagged, func(x, y [2]*schema.Field) int { return ib[x[1]] - ib[y[1]] })
	// A longest increasing run of the older positions, in the newer
	// order (patience sorting, n log n).
	var tails []int // index into untagged of the last pair of each run length
	prev := make([]int, len(untagged))
	for i, p := range untagged {
		k, _ := slices.BinarySearchFunc(tails, ia[p[0]], func(j, t int) int { return ia[untagged[j][0]] - t })
		prev[i] = -1
		if k > 0 {
			prev[i] = tails[k-1]
		}
		if k == len(tails) {
			tails = append(tails, i)
		} else {
			tails[k] = i
		}
	}
	if len(tails) == len(untagged) {
		return nil
	}
	kept := make([]bool, len(untagged))
	for i := tails[len(tails)-1]; i >= 0; i = prev[i] {
		kept[i] = true
	}
	pa, pb := places(sa, a), places(sb, b)
	out := map[*schema.Field]Change{}
	for i, p := range untagged {
		if !kept[i] {
			out[p[1]] = Change{Property: "place", From: pa[p[0]], To: pb[p[1]]}
		}
	}
	return out
}

// sameShape reports whether types ta and tb put the same bytes on the
// wire at version v: the same scalar type, arrays of the same shape, or
// structs (of any names) whose fields present at v pair up in order with
// the same shape, nullability, tags and own flexibleVersions.
func sameShape(ta, tb *schema.Type, v int16, depth int) bool {
	switch {
	case ta.Kind != tb.Kind || depth > maxDepth:
		return false
	case ta.Kind == schema.KindArray:
		return sameShape(ta.Elem, tb.Elem, v, depth+1)
	case ta.Kind != schema.KindStruct:
		return ta.Name == tb.Name
	}
	present := func(s *schema.Struct) []*schema.Field {
		var out []*schema.Field
		for _, f := range s.Fields {
			if f.Versions.Contains(v) {
				out = append(out, f)
			}
		}
		return out
	}
	fa, fb := present(ta.Struct), present(tb.Struct)
	return slices.EqualFunc(fa, fb, func(a, b *schema.Field) bool {
		return a.IsNullable(v) == b.IsNullable(v) && a.IsTagged(v) == b.IsTagged(v) && flexText(a) == flexText(b) &&
			(!a.IsTagged(v) || a.Tag == b.Tag) && sameShape(a.Type, b.Type, v, depth+1)
	})
}

// info describes f at version v, with its struct's fields.
func info(f *schema.Field, v int16, depth int) FieldInfo {
	fi := FieldInfo{
		Name: f.Name, Type: f.Type.Name, Versions: f.Versions.String(),
		Nullable: f.IsNullable(v), Default: f.Default.Text, About: f.About,
	}
	if f.IsTagged(v) {
		tag := f.Tag
		fi.Tag = &tag
	}
	if s := f.Type.ElemStruct(); s != nil && depth < maxDepth {
		for _, sf := range s.Fields {
			if sf.Versions.Contains(v) {
				fi.Fields = append(fi.Fields, info(sf, v, depth+1))
			}
		}
	}
	return fi
}

// fieldChanges compares field fa at version a with field fb at version b.
func fieldChanges(fa *schema.Field, a int16, fb *schema.Field, b int16) []Change {
	var ch []Change
	add := func(prop, from, to, detail string) {
		if from != to {
			ch = append(ch, Change{Property: prop, From: from, To: to, Detail: detail})
		}
	}
	add("type", fa.Type.Name, fb.Type.Name, "")
	add("nullable", strconv.FormatBool(fa.IsNullable(a)), strconv.FormatBool(fb.IsNullable(b)),
		rangeDetail("nullableVersions", fa.Nullable, fb.Nullable))
	add("tagged", strconv.FormatBool(fa.IsTagged(a)), strconv.FormatBool(fb.IsTagged(b)),
		rangeDetail("taggedVersions", fa.Tagged, fb.Tagged))
	if fa.IsTagged(a) && fb.IsTagged(b) {
		add("tag", strconv.Itoa(int(fa.Tag)), strconv.Itoa(int(fb.Tag)), "")
	}
	add("default", defaultText(fa), defaultText(fb), "")
	if fa.HasFlexible || fb.HasFlexible {
		add("flexibleVersions", flexText(fa), flexText(fb), "")
	}
	return ch
}

func rangeDetail(key string, a, b schema.Versions) string {
	if a == b {
		return key + " " + a.String()
	}
	return key + " " + a.String() + " -> " + b.String()
}

// flexText gives a field's own flexibleVersions, or "(message's)" when it
// has none.
func flexText(f *schema.Field) string {
	if !f.HasFlexible {
		return "(message's)"
	}
	return f.Flexible.String()
}

func defaultText(f *schema.Field) string {
	if f.Default.Text == "" {
		return "(implicit)"
	}
	return f.Default.Text
}
