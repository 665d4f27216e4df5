// Package histsite puts the version and release history (package history)
// on the site (package site), as a [site.Extension]:
//
//   - on every API page, a "changes" section (what the version changed
//     from the previous one: fields added, removed and changed per struct,
//     the flexible switch, header versions, the spec's comments, the size
//     of the smallest frame), a form to compare any two versions, and an
//     "accepted by Kafka" summary item and table (first and last loaded
//     release accepting each version);
//   - /apis/<Name>/diff/v<A>..v<B>/ for every pair of versions A < B, and
//     /apis/<Name>/diff/ listing them all, for an API of at most
//     [AllPairsMax] versions; for one of more, only the pairs of each
//     version with the previous one and with the newest, and an index
//     listing them and every version, so that the site grows with the
//     number of versions, not its square; under `manifester serve`,
//     [Ext.Handler] renders every other pair, either way round;
//   - the lists of every version that every page of an API shows are
//     bounded: a long "accepted by Kafka" table shows a window of its
//     rows, as the version switcher does (Window in package render/html),
//     and the compare form of an API of more than [AllPairsMax] versions
//     takes two version numbers rather than listing every version;
//   - /releases/: the diff of each pair of consecutive loaded releases, and
//     of the oldest against the newest;
//   - pages for APIs that only older releases define (LeaderAndIsr, reserved
//     since 4.0), built from the newest release that defines them and
//     marked removed, in place of the reserved-key page;
//   - pages for versions that only older releases define of APIs the
//     newest release still has (Produce v0-v2 with 3.9 and 4.3 loaded),
//     built from the newest release that defines each, marked removed and
//     shown in the version switcher's "older releases" group; pages built
//     from an older release name it in their footer;
//   - /vectors/<release>.jsonl for every loaded release.
//
// Every text goes through html/template.
package histsite

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/diff"
	"github.com/manifester/manifester/internal/history"
	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/release"
	htmlr "github.com/manifester/manifester/internal/render/html"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/site"
)

// ReleasesPath is the path of the release-diff page.
const ReleasesPath = "/releases/"

//go:embed templates/*.tmpl
var templateFS embed.FS

var tmpl = template.Must(template.New("histsite").Funcs(template.FuncMap{
	"vpath": func(name string, v int16) string { return htmlr.APIPath(name, int(v)) },
	"dpath": func(name string, a, b int16) string { return DiffPath(name, a, b) },
	"ipath": func(name string) string { return DiffIndexPath(name) },
	"apath": func(name string) string { return htmlr.APIPath(name, -1) },
}).ParseFS(templateFS, "templates/*.tmpl"))

// DiffPath is the URL path of the diff of an API from version a to b.
func DiffPath(name string, a, b int16) string {
	return fmt.Sprintf("/apis/%s/diff/v%d..v%d/", name, a, b)
}

// DiffIndexPath is the URL path of the page listing an API's version diffs.
func DiffIndexPath(name string) string { return "/apis/" + name + "/diff/" }

// VectorsPath is the URL path of one release's test vectors.
func VectorsPath(label string) string { return "/vectors/" + label + ".jsonl" }

// safeLabel matches the release labels that can name a file.
var safeLabel = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Ext is the history extension. One Ext may serve several builds; it keeps
// the history of the releases it last saw.
type Ext struct {
	mu   sync.Mutex
	key  []*codec.Codec
	data *data
	err  error
}

// New returns the extension.
func New() *Ext { return &Ext{} }

// Extension returns the site hooks.
func (e *Ext) Extension() site.Extension {
	return site.Extension{
		Name:   "history",
		Nav:    []htmlr.Link{{Href: ReleasesPath, Text: "Releases"}},
		Page:   e.page,
		Routes: e.routes,
		Index:  e.index,
	}
}

// data is the history of one set of releases, computed once.
type data struct {
	h    *history.History
	apis map[int16]*history.APIHistory
	// removed are the APIs only older releases define, by key.
	removed map[int16]history.RemovedAPI
	// rels are the releases by label.
	rels map[string]*release.Release
	// old are, per API key of the newest release, the versions that only
	// older releases define, each with the newest release defining it.
	old map[int16]map[int16]oldVersion
	// older are the version switcher's "older releases" groups by API
	// key ([data.olderLinks]), made once: every page of the API shows it.
	older map[int16][]htmlr.OlderVersion
	// pickers are the compare forms rendered so far ([data.pickerHTML]).
	pickMu  sync.Mutex
	pickers map[pickerKey]template.HTML
	// templates makes render use the templates instead of their Go
	// writers (for the tests that compare the two).
	templates bool
}

// render is the template name of v, written by its Go writer unless
// d.templates is set.
func (d *data) render(name string, v any, inGo func() template.HTML) (template.HTML, error) {
	if d.templates {
		return execHTML(name, v)
	}
	return inGo(), nil
}

// oldVersion is a version of an API the newest release still defines
// that only older releases define (Produce v0-v2 with 4.3 newest): its
// pages are built from rel, the newest release that defines it.
type oldVersion struct {
	api       *schema.API // the API in rel
	rel       *release.Release
	removedIn string // the release after rel
}

// get returns the history of rels, computing it when rels differ from the
// last ones.
func (e *Ext) get(rels []*release.Release) (*data, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.data != nil || e.err != nil {
		same := len(e.key) == len(rels)
		for i := 0; same && i < len(rels); i++ {
			same = e.key[i] == rels[i].Codec
		}
		if same {
			return e.data, e.err
		}
	}
	e.key = make([]*codec.Codec, len(rels))
	for i, r := range rels {
		e.key[i] = r.Codec
	}
	e.data, e.err = compute(rels)
	return e.data, e.err
}

func compute(rels []*release.Release) (*data, error) {
	h, err := history.New(rels)
	if err != nil {
		return nil, err
	}
	d := &data{h: h, apis: map[int16]*history.APIHistory{}, removed: map[int16]history.RemovedAPI{}, rels: map[string]*release.Release{},
		old: map[int16]map[int16]oldVersion{}}
	for _, r := range rels {
		d.rels[r.Label] = r
	}
	for _, ra := range h.Removed() {
		d.removed[ra.Key] = ra
	}
	newest := rels[len(rels)-1]
	for _, api := range newest.Reg.APIs {
		if api.Reserved() {
			continue
		}
		for i := len(rels) - 2; i >= 0; i-- {
			oa, ok := rels[i].Reg.API(api.Key)
			if !ok || oa.Reserved() || oa.Name != api.Name {
				continue
			}
			for v := oa.Request.Valid.Lo; v <= oa.Request.Valid.Hi; v++ {
				if !api.Request.Valid.Contains(v) && !oa.Response.Valid.Empty() && oa.Response.Valid.Contains(v) {
					if d.old[api.Key] == nil {
						d.old[api.Key] = map[int16]oldVersion{}
					}
					if _, seen := d.old[api.Key][v]; !seen {
						d.old[api.Key][v] = oldVersion{api: oa, rel: rels[i], removedIn: rels[i+1].Label}
					}
				}
				if v == schema.MaxVersion {
					break
				}
			}
		}
	}
	d.older = map[int16][]htmlr.OlderVersion{}
	for key := range d.old {
		d.older[key] = d.olderLinks(key)
	}
	keys := map[int16]bool{}
	for _, r := range rels {
		for _, api := range r.Reg.APIs {
			if !api.Reserved() {
				keys[api.Key] = true
			}
		}
	}
	for k := range keys {
		ah, err := h.API(k)
		if err != nil {
			return nil, fmt.Errorf("history of API key %d: %w", k, err)
		}
		d.apis[k] = ah
	}
	return d, nil
}

// single reports whether only one release is loaded.
func (d *data) single() bool { return len(d.h.Releases) < 2 }

// page adds the summary item and the sections of one API page of the
// newest release.
func (e *Ext) page(pc *site.PageContext) (htmlr.Extras, error) {
	d, err := e.get(pc.Releases)
	if err != nil {
		return htmlr.Extras{}, err
	}
	return d.extras(pc.API, pc.Version, d.h.Newest())
}

// extras builds the history sections of api at version v in release rel.
func (d *data) extras(api *schema.API, v int16, rel *release.Release) (htmlr.Extras, error) {
	var x htmlr.Extras
	ah := d.apis[api.Key]
	if ah == nil {
		return x, fmt.Errorf("no history for API key %d", api.Key)
	}
	row := findRow(ah.Rows, v)
	x.Summary = append(x.Summary, acceptedItem(d, row))

	ov, isOld := d.old[api.Key][v]
	isOld = isOld && ov.rel == rel
	x.Older = d.older[api.Key]
	cv := &changesView{API: api.Name, Version: v, Release: rel.Label, Lo: api.Request.Valid.Lo, Hi: api.Request.Valid.Hi}
	var vd *diff.VersionDiff
	switch {
	case isOld:
		// The site holds diff pages only for the versions of the release
		// an API's pages are built from, so an older release's version
		// gets its change from the previous version inline, without the
		// link to a full diff page or the compare form.
		cv.NoLink = true
		if nw, ok := d.h.Newest().Reg.API(api.Key); ok {
			x.Switcher = nw.Request
		}
		if v > api.Request.Valid.Lo {
			var err error
			if vd, err = diff.Versions(rel.Codec, api, v-1, v); err != nil {
				return x, fmt.Errorf("%s v%d..v%d in %s: %w", api.Name, v-1, v, rel.Label, err)
			}
		}
	case v > api.Request.Valid.Lo:
		i := int(v - api.Request.Valid.Lo - 1)
		if i < len(ah.Changes) && ah.Changes[i].To == v {
			vd = ah.Changes[i]
		}
	default:
		cv.Older = olderVersions(ah.Rows, api.Request.Valid.Lo)
	}
	if vd != nil {
		cv.Diff = diffOf(vd)
		x.Summary = append(x.Summary, page.Item{Label: fmt.Sprintf("Changes from v%d", v-1), Value: changeCount(vd)})
	}
	if !cv.NoLink {
		var err error
		if cv.Picker, err = d.pickerHTML(api, v); err != nil {
			return x, err
		}
	}
	body, err := d.render("changes", cv, func() template.HTML { return changesHTML(cv) })
	if err != nil {
		return x, err
	}
	title := fmt.Sprintf("Changes from v%d", v-1)
	if cv.Diff == nil {
		title = "Changes"
	}
	x.Sections = append(x.Sections, htmlr.Section{ID: "changes", Title: title, Body: body})

	av := &acceptedView{API: api.Name, Version: v, Single: d.single(), Labels: d.h.Labels(), Newest: d.h.Newest().Label,
		Release: rel.Label, Valid: api.Request.Valid}
	// A window of the rows (htmlr.Window): every page of the API shows
	// the table.
	prev := -1
	for _, i := range htmlr.Window(len(ah.Rows), sort.Search(len(ah.Rows), func(i int) bool { return ah.Rows[i].Version >= v })) {
		r := ah.Rows[i]
		rv := rowView(r, v, d.hasPage(api.Key, r.Version))
		rv.GapBefore = prev >= 0 && i != prev+1
		prev = i
		av.Rows = append(av.Rows, rv)
	}
	if len(av.Rows) < len(ah.Rows) {
		av.Total = len(ah.Rows)
	}
	body, err = d.render("accepted", av, func() template.HTML { return acceptedHTML(av) })
	if err != nil {
		return x, err
	}
	x.Sections = append(x.Sections, htmlr.Section{ID: "accepted", Title: "Accepted by Kafka", Body: body})
	return x, nil
}

// hasPage reports whether the site holds a page of version v of the API
// with the given key: a version of the newest release, one only older
// releases define, or a version of a removed API.
func (d *data) hasPage(key, v int16) bool {
	if api, ok := d.h.Newest().Reg.API(key); ok && !api.Reserved() {
		_, old := d.old[key][v]
		return api.Request.Valid.Contains(v) || old
	}
	if ra, ok := d.removed[key]; ok {
		return ra.API.Request.Valid.Contains(v)
	}
	return false
}

// olderLinks lists, lowest first, the versions of an API that only older
// releases define, for the version switcher's "older releases" group.
func (d *data) olderLinks(key int16) []htmlr.OlderVersion {
	vs := d.old[key]
	if len(vs) == 0 {
		return nil
	}
	out := make([]htmlr.OlderVersion, 0, len(vs))
	for v, ov := range vs {
		out = append(out, htmlr.OlderVersion{V: v, Href: htmlr.APIPath(ov.api.Name, int(v)),
			Title: fmt.Sprintf("removed in Kafka %s; built from the %s specs", ov.removedIn, ov.rel.Label)})
	}
	slices.SortFunc(out, func(a, b htmlr.OlderVersion) int { return int(a.V) - int(b.V) })
	return out
}

// oldNote is the sentence marking a page built from an older release for
// a version the newest release no longer defines.
func oldNote(name string, v int16, ov oldVersion) string {
	return fmt.Sprintf("v%d of %s was removed in Kafka %s; this page is built from the %s specs, the newest loaded release that defines it.",
		v, name, ov.removedIn, ov.rel.Label)
}

func findRow(rows []history.VersionRow, v int16) *history.VersionRow {
	for i := range rows {
		if rows[i].Version == v {
			return &rows[i]
		}
	}
	return nil
}

// acceptedItem is the summary's "Accepted by Kafka" item for one version.
func acceptedItem(d *data, row *history.VersionRow) page.Item {
	it := page.Item{Label: "Accepted by Kafka"}
	switch {
	case d.single():
		it.Value = d.h.Newest().Label + " (only release loaded)"
	case row == nil || row.Request.First == "":
		it.Value = "no loaded release"
		if row != nil && len(row.Request.Unstable) > 0 {
			it.Value = "unstable in " + joinLabels(row.Request.Unstable)
		}
	case row.Request.First == row.Request.Last:
		it.Value = row.Request.First + " only"
	default:
		it.Value = row.Request.First + " to " + row.Request.Last
	}
	return it
}

func joinLabels(ls []string) string {
	var b bytes.Buffer
	for i, l := range ls {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(l)
	}
	return b.String()
}

// olderVersions returns the versions below lo that some loaded release
// accepts, as "v0-v2", or "".
func olderVersions(rows []history.VersionRow, lo int16) string {
	first, last := int16(-1), int16(-1)
	for _, r := range rows {
		if r.Version < lo && (r.Request.First != "" || len(r.Request.Unstable) > 0) {
			if first < 0 {
				first = r.Version
			}
			last = r.Version
		}
	}
	switch {
	case first < 0:
		return ""
	case first == last:
		return fmt.Sprintf("v%d", first)
	}
	return fmt.Sprintf("v%d-v%d", first, last)
}

func execHTML(name string, v any) (template.HTML, error) {
	var b bytes.Buffer
	if err := tmpl.ExecuteTemplate(&b, name, v); err != nil {
		return "", fmt.Errorf("rendering %s: %w", name, err)
	}
	return template.HTML(b.String()), nil // produced by html/template, so escaped
}

// Handler renders /apis/<Name>/diff/v<A>..v<B>/ for pairs the site does
// not hold (A > B, the reverse view, and for an API of more than
// [AllPairsMax] versions the pairs A < B that are neither adjacent nor to
// the newest version), in the site's layout. It is meant for `manifester
// serve`, which caps the renders at once and caches the pages: register
// it with server.HandlePages("GET /apis/{name}/diff/{pair}/",
// &server.Pages{Source: ...}).
func (e *Ext) Handler(s *site.Site) *DiffHandler {
	return &DiffHandler{ext: e, site: s}
}

// diff returns the diff page of api from a to b in rel, its title and body.
func diffPage(d *data, differ *diff.Differ, rel *release.Release, api *schema.API, a, b int16) (string, template.HTML, error) {
	vd, err := differ.Versions(a, b)
	if err != nil {
		return "", "", err
	}
	pick, err := d.pickerHTML(api, b)
	if err != nil {
		return "", "", err
	}
	dv := &diffPageView{API: api.Name, Release: rel.Label, From: a, To: b, Diff: diffOf(vd), Picker: pick,
		Removed: d.removedNote(api.Key)}
	// The "diffpage" template, written in Go (diffhtml.go).
	return fmt.Sprintf("%s v%d → v%d", api.Name, a, b), diffPageHTML(dv), nil
}

// pickerHTML returns the compare form of api preselecting v-1 -> v (see
// [picker]), rendered once per API and version: every version page and
// every diff page to v shows the same form.
func (d *data) pickerHTML(api *schema.API, v int16) (template.HTML, error) {
	k := pickerKey{api, v}
	d.pickMu.Lock()
	h, ok := d.pickers[k]
	d.pickMu.Unlock()
	if ok {
		return h, nil
	}
	pv := picker(api, v)
	h, err := d.render("picker", pv, func() template.HTML { return pickerGo(pv) })
	if err != nil {
		return "", err
	}
	d.pickMu.Lock()
	if d.pickers == nil {
		d.pickers = map[pickerKey]template.HTML{}
	}
	d.pickers[k] = h
	d.pickMu.Unlock()
	return h, nil
}

type pickerKey struct {
	api *schema.API
	v   int16
}

// removedNote is the sentence marking a removed API, or "".
func (d *data) removedNote(key int16) string {
	ra, ok := d.removed[key]
	if !ok {
		return ""
	}
	how := "no longer defines it"
	if ra.Reserved {
		how = fmt.Sprintf("keeps API key %d only as a reserved key (validVersions \"none\")", ra.Key)
	}
	return fmt.Sprintf("%s was removed in Kafka %s: that release %s, and brokers from %s on reject it. This page is built from Kafka %s, the newest loaded release that defines it.",
		ra.Name, ra.RemovedIn, how, ra.RemovedIn, ra.LastRelease)
}

// changeCount sums up a version diff for the summary: fields added (+),
// removed (−) and changed (~) in the request and the response, and the
// flexible switch.
func changeCount(vd *diff.VersionDiff) string {
	var add, del, mod int
	for _, md := range []*diff.MessageDiff{&vd.Request, &vd.Response} {
		for _, sd := range md.Structs {
			add += len(sd.Added)
			del += len(sd.Removed)
			mod += len(sd.Changed)
		}
	}
	out := "no field changes"
	if add+del+mod > 0 {
		out = fmt.Sprintf("+%d −%d ~%d fields", add, del, mod)
	}
	if vd.Request.Flexible.Changed() {
		out += ", becomes flexible"
		if vd.Request.Flexible.From {
			out = strings.Replace(out, "becomes flexible", "no longer flexible", 1)
		}
	}
	return out
}
