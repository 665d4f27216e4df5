package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
)

// This file reads Kafka's spec files itself, into its own small structs
// (not through package schema), works out from that reading what changes
// between adjacent versions and between releases, and compares it with
// what the diff reports in its JSON form.

// iField is a field as the spec file writes it.
type iField struct {
	Name             string          `json:"name"`
	Type             string          `json:"type"`
	Versions         string          `json:"versions"`
	NullableVersions string          `json:"nullableVersions"`
	TaggedVersions   string          `json:"taggedVersions"`
	Tag              *iTag           `json:"tag"`
	Default          json.RawMessage `json:"default"`
	FlexibleVersions *string         `json:"flexibleVersions"`
	Fields           []*iField       `json:"fields"`
}

// iTag is a field's tag, written as a number or as a string ("0").
type iTag int

func (n *iTag) UnmarshalJSON(b []byte) error {
	i, err := strconv.Atoi(strings.Trim(string(b), `"`))
	*n = iTag(i)
	return err
}

// iMessage is a spec file.
type iMessage struct {
	APIKey                *int      `json:"apiKey"`
	Type                  string    `json:"type"`
	Name                  string    `json:"name"`
	ValidVersions         string    `json:"validVersions"`
	FlexibleVersions      string    `json:"flexibleVersions"`
	LatestVersionUnstable bool      `json:"latestVersionUnstable"`
	Listeners             []string  `json:"listeners"`
	Fields                []*iField `json:"fields"`
	CommonStructs         []struct {
		Name   string    `json:"name"`
		Fields []*iField `json:"fields"`
	} `json:"commonStructs"`
	common map[string][]*iField
}

// iRange is a version range; lo > hi when empty.
type iRange struct{ lo, hi int }

func (r iRange) has(v int) bool { return v >= r.lo && v <= r.hi }
func (r iRange) empty() bool    { return r.lo > r.hi }

func iParse(t *testing.T, s string) iRange {
	t.Helper()
	n := func(x string) int {
		i, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			t.Fatalf("bad version range %q", s)
		}
		return i
	}
	switch {
	case s == "" || s == "none":
		return iRange{1, 0}
	case strings.HasSuffix(s, "+"):
		return iRange{n(strings.TrimSuffix(s, "+")), 32767}
	case strings.Contains(s, "-"):
		lo, hi, _ := strings.Cut(s, "-")
		return iRange{n(lo), n(hi)}
	}
	return iRange{n(s), n(s)}
}

// iLoad reads every request and response file of a release, by API key.
func iLoad(t *testing.T, release string) map[int][2]*iMessage {
	t.Helper()
	dir := testshared.Spec(t, release)
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[int][2]*iMessage{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "//") {
				lines = append(lines, l)
			}
		}
		var m iMessage
		if err := json.Unmarshal([]byte(strings.Join(lines, "\n")), &m); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if m.APIKey == nil || (m.Type != "request" && m.Type != "response") {
			continue
		}
		m.common = map[string][]*iField{}
		for _, cs := range m.CommonStructs {
			m.common[cs.Name] = cs.Fields
		}
		pair := out[*m.APIKey]
		if m.Type == "request" {
			pair[0] = &m
		} else {
			pair[1] = &m
		}
		out[*m.APIKey] = pair
	}
	return out
}

var iPrimitive = map[string]bool{"bool": true, "int8": true, "int16": true, "uint16": true, "int32": true,
	"uint32": true, "int64": true, "float64": true, "string": true, "bytes": true, "uuid": true, "records": true}

// sub returns the fields of f's struct (or array element struct), or nil.
func (m *iMessage) sub(f *iField) ([]*iField, bool) {
	el := strings.TrimPrefix(f.Type, "[]")
	if iPrimitive[el] {
		return nil, false
	}
	if len(f.Fields) > 0 {
		return f.Fields, true
	}
	fs, ok := m.common[el]
	return fs, ok
}

func (m *iMessage) present(t *testing.T, fs []*iField, v int) []*iField {
	var out []*iField
	for _, f := range fs {
		if iParse(t, f.Versions).has(v) {
			out = append(out, f)
		}
	}
	return out
}

func iDefault(f *iField) string {
	if len(f.Default) == 0 {
		return "(implicit)"
	}
	var s string
	if json.Unmarshal(f.Default, &s) == nil {
		return s
	}
	return string(f.Default)
}

func iFlex(t *testing.T, f *iField) string {
	if f.FlexibleVersions == nil {
		return "(message's)"
	}
	return fmt.Sprint(iParse(t, *f.FlexibleVersions))
}

// iDiffer compares the fields of two messages (of one release, or two).
type iDiffer struct {
	t      *testing.T
	ma, mb *iMessage
	a, b   int
}

func (d *iDiffer) tagged(f *iField, v int) bool { return iParse(d.t, f.TaggedVersions).has(v) }
func (d *iDiffer) nullable(f *iField, v int) bool {
	return iParse(d.t, f.NullableVersions).has(v)
}

// sameShape: the same bytes on the wire at version v (used for renames
// between releases, a == b).
func (d *iDiffer) sameShape(fa, fb *iField, depth int) bool {
	if depth > 64 {
		return false
	}
	if strings.HasPrefix(fa.Type, "[]") != strings.HasPrefix(fb.Type, "[]") {
		return false
	}
	sa, oka := d.ma.sub(fa)
	sb, okb := d.mb.sub(fb)
	if oka != okb {
		return false
	}
	if !oka {
		return fa.Type == fb.Type
	}
	pa, pb := d.ma.present(d.t, sa, d.a), d.mb.present(d.t, sb, d.b)
	if len(pa) != len(pb) {
		return false
	}
	for i := range pa {
		x, y := pa[i], pb[i]
		if d.nullable(x, d.a) != d.nullable(y, d.b) || d.tagged(x, d.a) != d.tagged(y, d.b) || iFlex(d.t, x) != iFlex(d.t, y) ||
			(d.tagged(x, d.a) && *x.Tag != *y.Tag) || !d.sameShape(x, y, depth+1) {
			return false
		}
	}
	return true
}

func (d *iDiffer) place(fs []*iField, f *iField, v int) string {
	if d.tagged(f, v) {
		return "tag " + strconv.Itoa(int(*f.Tag))
	}
	n := 0
	for _, g := range fs {
		if g == f {
			return strconv.Itoa(n)
		}
		if iParse(d.t, g.Versions).has(v) && !d.tagged(g, v) {
			n++
		}
	}
	return ""
}

func (d *iDiffer) fieldLine(m *iMessage, f *iField, v int, depth int) string {
	s := f.Name + " " + f.Type
	if d.tagged(f, v) {
		s += fmt.Sprintf(" tag %d", *f.Tag)
	}
	if d.nullable(f, v) {
		s += " nullable"
	}
	if sub, ok := m.sub(f); ok && depth < 64 {
		var names []string
		for _, g := range m.present(d.t, sub, v) {
			names = append(names, d.fieldLine(m, g, v, depth+1))
		}
		s += " {" + strings.Join(names, "; ") + "}"
	}
	return s
}

func (d *iDiffer) structs(out *[]string, prefix, path string, fa, fb []*iField, depth int) {
	if depth > 64 {
		return
	}
	pa, pb := d.ma.present(d.t, fa, d.a), d.mb.present(d.t, fb, d.b)
	byName := map[string]*iField{}
	for _, f := range pa {
		byName[f.Name] = f
	}
	var pairs [][2]*iField
	var added, removed []*iField
	inB := map[string]bool{}
	for _, g := range pb {
		inB[g.Name] = true
		if f, ok := byName[g.Name]; ok {
			pairs = append(pairs, [2]*iField{f, g})
		} else {
			added = append(added, g)
		}
	}
	for _, f := range pa {
		if !inB[f.Name] {
			removed = append(removed, f)
		}
	}
	if d.a == d.b {
		var left []*iField
		for _, g := range added {
			k := slices.IndexFunc(removed, func(f *iField) bool {
				return d.nullable(f, d.a) == d.nullable(g, d.b) && iFlex(d.t, f) == iFlex(d.t, g) &&
					d.place(fa, f, d.a) == d.place(fb, g, d.b) && d.sameShape(f, g, depth)
			})
			if k < 0 {
				left = append(left, g)
				continue
			}
			pairs = append(pairs, [2]*iField{removed[k], g})
			removed = slices.Delete(removed, k, k+1)
		}
		added = left
	}
	p := prefix + "|" + path + "|"
	// Fields kept (untagged on both sides) in another order: the diff
	// reports some of them as moved ("place"), this reading only that the
	// order changed.
	last, moved := -1, false
	for _, g := range fb {
		for _, pr := range pairs {
			if pr[1] == g && !d.tagged(pr[0], d.a) && !d.tagged(g, d.b) {
				i := slices.Index(fa, pr[0])
				moved = moved || i < last
				last = i
			}
		}
	}
	if moved {
		*out = append(*out, p+"moved")
	}
	for _, g := range added {
		*out = append(*out, p+"+"+d.fieldLine(d.mb, g, d.b, depth))
	}
	for _, f := range removed {
		*out = append(*out, p+"-"+d.fieldLine(d.ma, f, d.a, depth))
	}
	for _, pr := range pairs {
		f, g := pr[0], pr[1]
		ch := func(prop, x, y string) {
			if x != y {
				*out = append(*out, fmt.Sprintf("%s~%s %s %s -> %s", p, g.Name, prop, x, y))
			}
		}
		ch("name", f.Name, g.Name)
		ch("type", f.Type, g.Type)
		ch("nullable", strconv.FormatBool(d.nullable(f, d.a)), strconv.FormatBool(d.nullable(g, d.b)))
		ch("tagged", strconv.FormatBool(d.tagged(f, d.a)), strconv.FormatBool(d.tagged(g, d.b)))
		if d.tagged(f, d.a) && d.tagged(g, d.b) {
			ch("tag", strconv.Itoa(int(*f.Tag)), strconv.Itoa(int(*g.Tag)))
		}
		ch("default", iDefault(f), iDefault(g))
		ch("flexibleVersions", iFlex(d.t, f), iFlex(d.t, g))
		sa, oka := d.ma.sub(f)
		sb, okb := d.mb.sub(g)
		if oka && okb {
			sp := g.Name
			if path != "" {
				sp = path + "." + g.Name
			}
			d.structs(out, prefix, sp, sa, sb, depth+1)
		}
	}
}

// jsonStructs turns the diff's struct diffs, read back from its JSON, into
// the lines the independent reading gives.
func jsonStructs(t *testing.T, out *[]string, prefix string, sds []jsonStructDiff) {
	var line func(f jsonField) string
	line = func(f jsonField) string {
		s := f.Name + " " + f.Type
		if f.Tag != nil {
			s += fmt.Sprintf(" tag %d", *f.Tag)
		}
		if f.Nullable {
			s += " nullable"
		}
		if f.Fields != nil || !iPrimitive[strings.TrimPrefix(f.Type, "[]")] {
			var names []string
			for _, g := range f.Fields {
				names = append(names, line(g))
			}
			s += " {" + strings.Join(names, "; ") + "}"
		}
		return s
	}
	for _, sd := range sds {
		p := prefix + "|" + sd.Path + "|"
		for _, f := range sd.Added {
			*out = append(*out, p+"+"+line(f))
		}
		for _, f := range sd.Removed {
			*out = append(*out, p+"-"+line(f))
		}
		moved := false
		for _, fc := range sd.Changed {
			for _, c := range fc.Changes {
				if c.Property == "place" {
					if !moved {
						*out = append(*out, p+"moved")
					}
					moved = true
					continue
				}
				from, to := c.From, c.To
				if c.Property == "flexibleVersions" {
					from, to = jsonFlex(t, from), jsonFlex(t, to)
				}
				*out = append(*out, fmt.Sprintf("%s~%s %s %s -> %s", p, fc.Name, c.Property, from, to))
			}
		}
	}
}

func jsonFlex(t *testing.T, s string) string {
	if s == "(message's)" {
		return s
	}
	return fmt.Sprint(iParse(t, s))
}

type jsonField struct {
	Name     string      `json:"name"`
	Type     string      `json:"type"`
	Nullable bool        `json:"nullable"`
	Tag      *int        `json:"tag"`
	Fields   []jsonField `json:"fields"`
}

type jsonStructDiff struct {
	Path    string      `json:"path"`
	Added   []jsonField `json:"added"`
	Removed []jsonField `json:"removed"`
	Changed []struct {
		Name    string `json:"name"`
		Changes []struct {
			Property string `json:"property"`
			From     string `json:"from"`
			To       string `json:"to"`
		} `json:"changes"`
	} `json:"changed"`
}

type jsonMessageDiff struct {
	Message       string `json:"message"`
	Flexible      struct{ From, To bool }
	HeaderVersion struct{ From, To int } `json:"header_version"`
	Size          struct{ From, To int }
	Structs       []jsonStructDiff `json:"structs"`
}

type jsonVersionDiff struct {
	Request, Response jsonMessageDiff
}

func viaJSON(t *testing.T, v, into any) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, v); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), into); err != nil {
		t.Fatal(err)
	}
}

var iReleases = []string{"3.9", "4.0", "4.1", "4.2", "4.3", "trunk"}

func compareLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		for _, l := range want {
			if !slices.Contains(got, l) {
				t.Errorf("%s: the spec gives %q, the diff does not", what, l)
			}
		}
		for _, l := range got {
			if !slices.Contains(want, l) {
				t.Errorf("%s: the diff gives %q, the spec does not", what, l)
			}
		}
	}
}

// TestVersionDiffsAgainstSpecReading compares every adjacent version pair
// of every API of every release with the independent reading, and checks
// the bytes: a pair with nothing changed encodes the smallest instance to
// the same bytes (but the request header's version), and a pair that only
// adds untagged fields makes it bigger.
func TestVersionDiffsAgainstSpecReading(t *testing.T) {
	for _, rel := range iReleases {
		c := load(t, rel)
		specs := iLoad(t, rel)
		for key, pair := range specs {
			req, resp := pair[0], pair[1]
			valid := iParse(t, req.ValidVersions)
			api, ok := c.Reg.API(int16(key))
			if !ok {
				t.Errorf("%s: key %d not loaded", rel, key)
				continue
			}
			if valid.empty() {
				continue
			}
			for a := valid.lo; a < valid.hi; a++ {
				b := a + 1
				vd, err := Versions(c, api, int16(a), int16(b))
				if err != nil {
					t.Errorf("%s %s v%d v%d: %v", rel, req.Name, a, b, err)
					continue
				}
				var jd jsonVersionDiff
				viaJSON(t, vd, &jd)
				var got, want []string
				jsonStructs(t, &got, "request", jd.Request.Structs)
				jsonStructs(t, &got, "response", jd.Response.Structs)
				(&iDiffer{t, req, req, a, b}).structs(&want, "request", "", req.Fields, req.Fields, 0)
				(&iDiffer{t, resp, resp, a, b}).structs(&want, "response", "", resp.Fields, resp.Fields, 0)
				what := fmt.Sprintf("%s %s v%d..v%d", rel, req.Name, a, b)
				compareLines(t, what, got, want)
				for i, m := range []*iMessage{req, resp} {
					md := jd.Request
					kind := schema.TypeRequest
					if i == 1 {
						md, kind = jd.Response, schema.TypeResponse
					}
					flex := iParse(t, m.FlexibleVersions)
					if md.Flexible.From != flex.has(a) || md.Flexible.To != flex.has(b) {
						t.Errorf("%s %s: flexible %v -> %v, spec %v -> %v", what, m.Type, md.Flexible.From, md.Flexible.To, flex.has(a), flex.has(b))
					}
					// KIP-482: flexible requests use header v2 and
					// responses v1, but ApiVersions' response stays on v0;
					// ControlledShutdown v0 has request header v0.
					header := func(v int) int {
						h := 0
						if flex.has(v) {
							h = 1
						}
						if m.Type == "request" {
							h++
							if key == 7 && v == 0 {
								h = 0
							}
						} else if key == 18 {
							h = 0
						}
						return h
					}
					if md.HeaderVersion.From != header(a) || md.HeaderVersion.To != header(b) {
						t.Errorf("%s %s: header version %d -> %d, want %d -> %d", what, m.Type,
							md.HeaderVersion.From, md.HeaderVersion.To, header(a), header(b))
					}
					fa, err := sample.Encode(c, api, kind, int16(a))
					if err != nil {
						t.Fatal(err)
					}
					fb, err := sample.Encode(c, api, kind, int16(b))
					if err != nil {
						t.Fatal(err)
					}
					if md.Size.From != len(fa) || md.Size.To != len(fb) {
						t.Errorf("%s %s: sizes %d -> %d, frames %d -> %d", what, m.Type, md.Size.From, md.Size.To, len(fa), len(fb))
					}
					if kind == schema.TypeRequest && len(fa) >= 8 && len(fb) >= 8 {
						fa, fb = slices.Clone(fa), slices.Clone(fb)
						fa[6], fa[7], fb[6], fb[7] = 0, 0, 0, 0 // request_api_version
					}
					same := len(md.Structs) == 0 && md.Flexible.From == md.Flexible.To && md.HeaderVersion.From == md.HeaderVersion.To
					if same && !bytes.Equal(fa, fb) {
						t.Errorf("%s %s: no change reported, but the smallest frames differ:\n%x\n%x", what, m.Type, fa, fb)
					}
					onlyAdds, any := same || len(md.Structs) > 0, false
					for _, sd := range md.Structs {
						if len(sd.Removed) > 0 || len(sd.Changed) > 0 {
							onlyAdds = false
						}
						for _, f := range sd.Added {
							if f.Tag == nil {
								any = true
							}
						}
					}
					if md.Flexible.From == md.Flexible.To && onlyAdds && any && len(fb) <= len(fa) {
						t.Errorf("%s %s: untagged fields added, but the smallest frame did not grow (%d -> %d)", what, m.Type, len(fa), len(fb))
					}
				}
			}
		}
	}
}

func (r iRange) String() string {
	switch {
	case r.empty():
		return "none"
	case r.hi == 32767:
		return fmt.Sprintf("%d+", r.lo)
	case r.lo == r.hi:
		return strconv.Itoa(r.lo)
	}
	return fmt.Sprintf("%d-%d", r.lo, r.hi)
}

// minusRanges gives the versions of a not in b.
func minusRanges(a, b iRange) []string {
	var out []string
	for v := a.lo; v <= a.hi; v++ {
		if b.has(v) {
			continue
		}
		if n := len(out); n > 0 && strings.HasSuffix(out[n-1], fmt.Sprintf("/%d", v-1)) {
			lo, _, _ := strings.Cut(out[n-1], "/")
			out[n-1] = fmt.Sprintf("%s/%d", lo, v)
			continue
		}
		out = append(out, fmt.Sprintf("%d/%d", v, v))
	}
	for i, s := range out {
		lo, hi, _ := strings.Cut(s, "/")
		x, _ := strconv.Atoi(lo)
		y, _ := strconv.Atoi(hi)
		out[i] = iRange{x, y}.String()
	}
	return out
}

type jsonReleaseDiff struct {
	Added, Removed, Unstable []struct {
		Key      int    `json:"api_key"`
		Name     string `json:"name"`
		Versions string `json:"versions"`
		Reserved bool   `json:"reserved"`
	}
	Changed []struct {
		Key              int               `json:"api_key"`
		Name             string            `json:"name"`
		FormerName       string            `json:"former_name"`
		Valid            map[string]string `json:"valid"`
		ResponseValid    map[string]string `json:"response_valid"`
		Lowest           string            `json:"lowest"`
		RemovedVersions  []string          `json:"removed_versions"`
		NewVersions      []string          `json:"new_versions"`
		Unstable         map[string]string `json:"unstable"`
		Flexible         map[string]string `json:"flexible"`
		ListenersAdded   []string          `json:"listeners_added"`
		ListenersRemoved []string          `json:"listeners_removed"`
		Redefined        []struct {
			Version  int              `json:"version"`
			Request  []jsonStructDiff `json:"request"`
			Response []jsonStructDiff `json:"response"`
		} `json:"redefined"`
	}
}

func apiName(m *iMessage) string { return strings.TrimSuffix(m.Name, "Request") }

func iUnstable(t *testing.T, m *iMessage) string {
	if r := iParse(t, m.ValidVersions); m.LatestVersionUnstable && !r.empty() {
		return strconv.Itoa(r.hi)
	}
	return ""
}

// TestReleaseDiffsAgainstSpecReading compares the diff of every pair of
// releases with the independent reading.
func TestReleaseDiffsAgainstSpecReading(t *testing.T) {
	specs := map[string]map[int][2]*iMessage{}
	for _, rel := range iReleases {
		specs[rel] = iLoad(t, rel)
	}
	for i, ra := range iReleases {
		for _, rb := range iReleases[i+1:] {
			var jd jsonReleaseDiff
			viaJSON(t, Releases(load(t, ra).Reg, load(t, rb).Reg), &jd)
			var got, want []string
			for _, a := range jd.Added {
				got = append(got, fmt.Sprintf("added %d %s %s", a.Key, a.Name, a.Versions))
			}
			for _, a := range jd.Removed {
				got = append(got, fmt.Sprintf("removed %d %s %s %v", a.Key, a.Name, a.Versions, a.Reserved))
			}
			for _, a := range jd.Unstable {
				got = append(got, fmt.Sprintf("unstable %d %s %s", a.Key, a.Name, a.Versions))
			}
			for _, c := range jd.Changed {
				p := fmt.Sprintf("changed %d %s ", c.Key, c.Name)
				got = append(got, p+"valid "+c.Valid["from"]+" -> "+c.Valid["to"])
				add := func(what string, vs ...string) {
					for _, v := range vs {
						got = append(got, p+what+" "+v)
					}
				}
				if c.FormerName != "" {
					add("former", c.FormerName)
				}
				if c.Lowest != "" {
					add("lowest", c.Lowest)
				}
				add("removed", c.RemovedVersions...)
				add("new", c.NewVersions...)
				if c.ResponseValid != nil {
					add("response", c.ResponseValid["from"]+" -> "+c.ResponseValid["to"])
				}
				if c.Unstable != nil {
					add("unstable", c.Unstable["from"]+" -> "+c.Unstable["to"])
				}
				if c.Flexible != nil {
					add("flexible", jsonFlex(t, c.Flexible["from"])+" -> "+jsonFlex(t, c.Flexible["to"]))
				}
				add("listener +", c.ListenersAdded...)
				add("listener -", c.ListenersRemoved...)
				for _, r := range c.Redefined {
					jsonStructs(t, &got, fmt.Sprintf("%sv%d request", p, r.Version), r.Request)
					jsonStructs(t, &got, fmt.Sprintf("%sv%d response", p, r.Version), r.Response)
				}
			}
			keys := map[int]bool{}
			for k := range specs[ra] {
				keys[k] = true
			}
			for k := range specs[rb] {
				keys[k] = true
			}
			for k := range keys {
				pa, okA := specs[ra][k]
				pb, okB := specs[rb][k]
				liveA := okA && !iParse(t, pa[0].ValidVersions).empty()
				liveB := okB && !iParse(t, pb[0].ValidVersions).empty()
				if liveB {
					if u := iUnstable(t, pb[0]); u != "" {
						want = append(want, fmt.Sprintf("unstable %d %s %s", k, apiName(pb[0]), u))
					}
				}
				switch {
				case liveA && !liveB:
					want = append(want, fmt.Sprintf("removed %d %s %s %v", k, apiName(pa[0]), iParse(t, pa[0].ValidVersions), okB))
				case !liveA && liveB:
					want = append(want, fmt.Sprintf("added %d %s %s", k, apiName(pb[0]), iParse(t, pb[0].ValidVersions)))
				case liveA && liveB:
					var lines []string
					p := fmt.Sprintf("changed %d %s ", k, apiName(pb[0]))
					va, vb := iParse(t, pa[0].ValidVersions), iParse(t, pb[0].ValidVersions)
					wa, wb := iParse(t, pa[1].ValidVersions), iParse(t, pb[1].ValidVersions)
					if apiName(pa[0]) != apiName(pb[0]) {
						lines = append(lines, p+"former "+apiName(pa[0]))
					}
					if va.lo < vb.lo {
						lines = append(lines, p+"lowest raised")
					} else if va.lo > vb.lo {
						lines = append(lines, p+"lowest lowered")
					}
					for _, v := range minusRanges(va, vb) {
						lines = append(lines, p+"removed "+v)
					}
					for _, v := range minusRanges(vb, va) {
						lines = append(lines, p+"new "+v)
					}
					if (wa != va || wb != vb) && wa != wb {
						lines = append(lines, p+"response "+wa.String()+" -> "+wb.String())
					}
					if ua, ub := iUnstable(t, pa[0]), iUnstable(t, pb[0]); ua != ub {
						lines = append(lines, p+"unstable "+ua+" -> "+ub)
					}
					if fa, fb := iParse(t, pa[0].FlexibleVersions), iParse(t, pb[0].FlexibleVersions); fa != fb {
						lines = append(lines, p+"flexible "+fmt.Sprint(fa)+" -> "+fmt.Sprint(fb))
					}
					for _, l := range pb[0].Listeners {
						if !slices.Contains(pa[0].Listeners, l) {
							lines = append(lines, p+"listener + "+l)
						}
					}
					for _, l := range pa[0].Listeners {
						if !slices.Contains(pb[0].Listeners, l) {
							lines = append(lines, p+"listener - "+l)
						}
					}
					for v := max(va.lo, vb.lo); v <= min(va.hi, vb.hi); v++ {
						(&iDiffer{t, pa[0], pb[0], v, v}).structs(&lines, fmt.Sprintf("%sv%d request", p, v), "", pa[0].Fields, pb[0].Fields, 0)
						if wa.has(v) && wb.has(v) {
							(&iDiffer{t, pa[1], pb[1], v, v}).structs(&lines, fmt.Sprintf("%sv%d response", p, v), "", pa[1].Fields, pb[1].Fields, 0)
						}
					}
					if len(lines) > 0 || va != vb || wa != wb {
						want = append(want, p+"valid "+va.String()+" -> "+vb.String())
						want = append(want, lines...)
					}
				}
			}
			compareLines(t, ra+" -> "+rb, got, want)
		}
	}
}
