package histsite

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/manifester/manifester/internal/diff"
	"github.com/manifester/manifester/internal/history"
	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/release"
	htmlr "github.com/manifester/manifester/internal/render/html"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/site"
)

// index marks the reserved keys that older releases define as removed.
func (e *Ext) index(b *site.Builder, rows []htmlr.IndexRow) error {
	d, err := e.get(b.Releases())
	if err != nil {
		return err
	}
	for i := range rows {
		ra, ok := d.removed[rows[i].Key]
		if !ok {
			continue
		}
		rows[i].Badges = append(rows[i].Badges, htmlr.Badge{Class: "removed", Text: "removed in " + ra.RemovedIn,
			Title: fmt.Sprintf("Kafka %s defines %s v%s; its page is built from that release", ra.LastRelease, ra.Name, ra.API.Request.Valid)})
	}
	return nil
}

// pageAPI is an API whose pages the site holds, with the release they are
// built from.
type pageAPI struct {
	api *schema.API
	rel *release.Release
}

// pageAPIs lists the newest release's APIs with versions and the removed
// ones.
func (d *data) pageAPIs() []pageAPI {
	var out []pageAPI
	newest := d.h.Newest()
	for _, api := range newest.Reg.APIs {
		if !api.Reserved() {
			out = append(out, pageAPI{api, newest})
		}
	}
	for _, ra := range d.h.Removed() {
		out = append(out, pageAPI{ra.API, ra.Release})
	}
	return out
}

// lookup finds an API that has pages by name.
func (d *data) lookup(name string) (pageAPI, bool) {
	newest := d.h.Newest()
	for _, api := range newest.Reg.APIs {
		if api.Name == name && !api.Reserved() {
			return pageAPI{api, newest}, true
		}
	}
	for _, ra := range d.removed {
		if ra.Name == name {
			return pageAPI{ra.API, ra.Release}, true
		}
	}
	return pageAPI{}, false
}

// routes adds the removed APIs' pages, the diff pages, /releases/ and the
// vectors of every release.
func (e *Ext) routes(b *site.Builder) error {
	d, err := e.get(b.Releases())
	if err != nil {
		return err
	}
	for _, ra := range d.h.Removed() {
		if err := d.addRemoved(b, ra); err != nil {
			return fmt.Errorf("%s from %s: %w", ra.Name, ra.LastRelease, err)
		}
	}
	if err := d.addOld(b); err != nil {
		return err
	}
	if err := d.addDiffs(b); err != nil {
		return err
	}
	if err := d.addReleases(b); err != nil {
		return err
	}
	for _, r := range d.h.Releases {
		if !safeLabel.MatchString(r.Label) {
			continue
		}
		lines, err := d.h.VectorLines(r.Label)
		if err != nil {
			return err
		}
		if err := b.Add(VectorsPath(r.Label), site.TypeJSONL, lines); err != nil {
			return err
		}
	}
	return nil
}

// addRemoved builds every version page of an API that only older releases
// define, from the newest of them, marked removed; its /apis/<Name>/
// replaces the reserved-key page.
func (d *data) addRemoved(b *site.Builder, ra history.RemovedAPI) error {
	api, rel := ra.API, ra.Release
	note := d.removedNote(ra.Key)
	for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
		p, err := page.Build(rel.Codec, api, v)
		if err != nil {
			return err
		}
		x, err := d.extras(api, v, rel)
		if err != nil {
			return err
		}
		x.Badges = append(x.Badges, htmlr.Badge{Class: "removed", Text: "removed in " + ra.RemovedIn,
			Title: "No version of " + ra.Name + " is valid in Kafka " + ra.RemovedIn + " and later loaded releases"})
		x.Intro = note
		x.Summary = append(x.Summary, page.Item{Label: "Removed in", Value: "Kafka " + ra.RemovedIn})
		x.Footer = footer(rel.Label)
		html, err := addVersionPage(b, p, api, rel, x)
		if err != nil {
			return err
		}
		if v == api.Request.Valid.Hi {
			if err := b.Replace(htmlr.APIPath(api.Name, -1), site.TypeHTML, html); err != nil {
				return err
			}
		}
		if v == schema.MaxVersion {
			break
		}
	}
	return nil
}

// footer is the footer text of a page built from release label.
func footer(label string) string { return "Kafka " + label + " message specs." }

// addOld builds the pages of the versions that only older releases define
// for APIs the newest release still has (Produce v0-v2 with 4.3 newest),
// each from the newest release that defines it, marked removed.
func (d *data) addOld(b *site.Builder) error {
	for _, key := range slices.Sorted(maps.Keys(d.old)) {
		vs := d.old[key]
		for _, v := range slices.Sorted(maps.Keys(vs)) {
			ov := vs[v]
			if err := d.addOldPage(b, ov, v); err != nil {
				return fmt.Errorf("%s v%d from %s: %w", ov.api.Name, v, ov.rel.Label, err)
			}
		}
	}
	return nil
}

func (d *data) addOldPage(b *site.Builder, ov oldVersion, v int16) error {
	api, rel := ov.api, ov.rel
	p, err := page.Build(rel.Codec, api, v)
	if err != nil {
		return err
	}
	x, err := d.extras(api, v, rel)
	if err != nil {
		return err
	}
	x.Badges = append(x.Badges, htmlr.Badge{Class: "removed", Text: "removed in " + ov.removedIn,
		Title: fmt.Sprintf("Kafka %s is the newest loaded release that defines %s v%d", rel.Label, api.Name, v)})
	x.Intro = oldNote(api.Name, v, ov)
	x.Summary = append(x.Summary, page.Item{Label: "Removed in", Value: "Kafka " + ov.removedIn},
		page.Item{Label: "Built from", Value: "Kafka " + rel.Label})
	x.Footer = footer(rel.Label)
	_, err = addVersionPage(b, p, api, rel, x)
	return err
}

// addVersionPage renders the page of one version built from release rel
// and adds its HTML and JSON at the version's paths; it returns the HTML.
func addVersionPage(b *site.Builder, p *page.Page, api *schema.API, rel *release.Release, x htmlr.Extras) ([]byte, error) {
	var hb bytes.Buffer
	in := &htmlr.PageInput{Page: p, API: api, RequestHeader: rel.Reg.RequestHeader, ResponseHeader: rel.Reg.ResponseHeader, Extras: x}
	if err := b.Renderer().Page(&hb, in); err != nil {
		return nil, err
	}
	js, err := site.PageJSON(p)
	if err != nil {
		return nil, err
	}
	v := int(p.Version)
	if err := b.Add(htmlr.APIPath(api.Name, v), site.TypeHTML, hb.Bytes()); err != nil {
		return nil, err
	}
	return hb.Bytes(), b.Add(htmlr.JSONPath(api.Name, v), site.TypeJSON, js)
}

type pairJob struct {
	pa   pageAPI
	d    *diff.Differ // shared by every pair of the API
	a, b int16
}

// AllPairsMax is the most versions an API may have for the static site
// to hold the diff of every pair of them (V·(V-1)/2 pages, with an index
// of V×V cells). An API with more gets the diff of each version from the
// previous one and to the newest (2V-3 pages) and an index listing them;
// `manifester serve` answers every other pair ([DiffHandler]). Kafka's
// widest range has 18 versions (Fetch v0-v17 in 3.9), so every real API
// keeps all its pairs.
const AllPairsMax = 32

// allPairs reports whether the site holds every pair of versions of an
// API whose pages' release defines valid.
func allPairs(valid schema.Versions) bool {
	return int(valid.Hi)-int(valid.Lo)+1 <= AllPairsMax
}

// builtPair reports whether the static site holds the diff of an API from
// version a to b (a < b, both in valid).
func builtPair(valid schema.Versions, a, b int16) bool {
	return allPairs(valid) || b == a+1 || b == valid.Hi
}

// builtTo lists, lowest first, the versions b > a the site holds the diff
// from a to ([builtPair]).
func builtTo(valid schema.Versions, a int16) []int16 {
	if a >= valid.Hi {
		return nil
	}
	if !allPairs(valid) {
		if a+1 == valid.Hi {
			return []int16{a + 1}
		}
		return []int16{a + 1, valid.Hi}
	}
	out := make([]int16, 0, valid.Hi-a)
	for b := a + 1; b <= valid.Hi; b++ {
		out = append(out, b)
	}
	return out
}

// diffIndex is the view of /apis/<Name>/diff/: the table of every pair,
// or, for an API of more than [AllPairsMax] versions, the list of the
// pairs the site holds, with every version.
func (d *data) diffIndex(pa pageAPI) *diffIndexView {
	valid := pa.api.Request.Valid
	iv := &diffIndexView{API: pa.api.Name, Release: pa.rel.Label, Removed: d.removedNote(pa.api.Key),
		Picker: picker(pa.api, valid.Hi), All: allPairs(valid), Max: AllPairsMax, Hi: valid.Hi, Count: int(valid.Hi) - int(valid.Lo) + 1}
	if !iv.All {
		for x := valid.Lo; x <= valid.Hi; x++ {
			row := pairItem{V: x, Hi: valid.Hi, Prev: x > valid.Lo, ToNewest: x+1 < valid.Hi}
			if row.Prev {
				row.From = x - 1
				iv.Pairs++
			}
			if row.ToNewest {
				iv.Pairs++
			}
			iv.List = append(iv.List, row)
		}
		return iv
	}
	for x := valid.Lo; x <= valid.Hi; x++ {
		iv.Versions = append(iv.Versions, x)
	}
	for x := valid.Lo; x < valid.Hi; x++ {
		row := pairRow{From: x}
		for y := valid.Lo; y <= valid.Hi; y++ {
			row.Cells = append(row.Cells, pairCell{From: x, To: y, Link: y > x})
			if y > x {
				iv.Pairs++
			}
		}
		iv.Rows = append(iv.Rows, row)
	}
	return iv
}

// addDiffs adds /apis/<Name>/diff/ and the pairs A < B the site holds
// ([builtPair]) of every API with pages, rendering in parallel.
func (d *data) addDiffs(b *site.Builder) error {
	var jobs []pairJob
	for _, pa := range d.pageAPIs() {
		valid := pa.api.Request.Valid
		differ := diff.NewDiffer(pa.rel.Codec, pa.api)
		for x := valid.Lo; x < valid.Hi; x++ {
			for _, y := range builtTo(valid, x) {
				jobs = append(jobs, pairJob{pa, differ, x, y})
			}
		}
		body, err := execHTML("diffindex", d.diffIndex(pa))
		if err != nil {
			return err
		}
		if err := b.AddDoc(DiffIndexPath(pa.api.Name), pa.api.Name+" version diffs", body); err != nil {
			return err
		}
	}
	ch := make(chan pairJob)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				title, body, err := diffPage(d, j.d, j.pa.rel, j.pa.api, j.a, j.b)
				if err == nil {
					err = b.AddDoc(DiffPath(j.pa.api.Name, j.a, j.b), title, body)
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("%s v%d..v%d: %w", j.pa.api.Name, j.a, j.b, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	return firstErr
}

// addReleases adds /releases/.
func (d *data) addReleases(b *site.Builder) error {
	v := &releasesView{Labels: d.h.Labels(), Newest: d.h.Newest().Label, Single: d.single()}
	for _, r := range d.h.Releases {
		vl := vectorLink{Label: r.Label}
		if safeLabel.MatchString(r.Label) {
			vl.Href = VectorsPath(r.Label)
		}
		v.Vectors = append(v.Vectors, vl)
	}
	for _, ra := range d.h.Removed() {
		v.Removed = append(v.Removed, removedView{Key: ra.Key, Name: ra.Name, Href: htmlr.APIPath(ra.Name, -1),
			LastRelease: ra.LastRelease, RemovedIn: ra.RemovedIn, Reserved: ra.Reserved})
	}
	diffs := d.h.ReleaseDiffs()
	if n := len(d.h.Releases); n > 2 {
		all, err := d.h.ReleaseDiff(d.h.Releases[0].Label, d.h.Releases[n-1].Label)
		if err != nil {
			return err
		}
		diffs = append(diffs, all)
	}
	for _, rd := range diffs {
		v.Diffs = append(v.Diffs, d.releaseDiffView(rd))
	}
	body, err := execHTML("releases", v)
	if err != nil {
		return err
	}
	return b.AddDoc(ReleasesPath, "Kafka releases", body)
}

func (d *data) href(name string) string {
	if _, ok := d.lookup(name); ok {
		return htmlr.APIPath(name, -1)
	}
	return ""
}

func (d *data) refs(rs []diff.APIRef) []apiRefView {
	var out []apiRefView
	for _, r := range rs {
		out = append(out, apiRefView{Key: r.Key, Name: r.Name, Href: d.href(r.Name), Versions: r.Versions, Reserved: r.Reserved})
	}
	return out
}

func (d *data) releaseDiffView(rd *diff.ReleaseDiff) releaseDiffView {
	v := releaseDiffView{ID: "r" + idPart(rd.From) + "-" + idPart(rd.To), From: rd.From, To: rd.To,
		Added: d.refs(rd.Added), Removed: d.refs(rd.Removed), Unstable: d.refs(rd.Unstable)}
	for i := range rd.Changed {
		c := &rd.Changed[i]
		cv := apiChangeView{Key: c.Key, Name: c.Name, Href: d.href(c.Name), Notes: strings.Join(c.Notes(), "; ")}
		for _, r := range c.Redefined {
			cv.Redefined = append(cv.Redefined, diff.RedefinedLines(r.Version, "request", r.Request, "−", "→")...)
			cv.Redefined = append(cv.Redefined, diff.RedefinedLines(r.Version, "response", r.Response, "−", "→")...)
		}
		v.Changed = append(v.Changed, cv)
	}
	return v
}

// idPart keeps the characters of a label that are safe in an element id.
func idPart(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// DiffHandler renders the diff pages the site does not hold (see
// [Ext.Handler]); it is a server.PageSource.
type DiffHandler struct {
	ext  *Ext
	site *site.Site
}

var pairPattern = regexp.MustCompile(`^v(\d{1,5})\.\.v(\d{1,5})$`)

// Canonical returns the path of the diff page a URL path (a site path,
// without the base path) names: /apis/<Name>/diff/v<A>..v<B>/ for any two
// different versions of an API with pages, in either direction, the
// versions without leading zeros; false for an unknown API, a malformed
// pair or a version the API lacks.
func (h *DiffHandler) Canonical(urlPath string) (string, bool) {
	d, err := h.ext.get(h.site.Releases)
	if err != nil {
		return "", false
	}
	pa, a, b, ok := d.pairOf(urlPath)
	if !ok {
		return "", false
	}
	return DiffPath(pa.api.Name, a, b), true
}

// Serves reports whether the handler has a diff page for a URL path (a
// site path, without the base path), in any spelling [DiffHandler.Canonical]
// takes.
func (h *DiffHandler) Serves(urlPath string) bool {
	_, ok := h.Canonical(urlPath)
	return ok
}

// Render renders the diff page at a canonical path in the site's layout,
// its links site paths. The server asks it for the pairs its site lacks:
// the reversed ones, and, for an API of more than [AllPairsMax] versions,
// the forward pairs that are neither adjacent nor to the newest version.
// It stops with ctx's error between its steps (the diff, its HTML, the
// page) when ctx is done.
func (h *DiffHandler) Render(ctx context.Context, urlPath string) ([]byte, error) {
	d, err := h.ext.get(h.site.Releases)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	pa, a, b, ok := d.pairOf(urlPath)
	if !ok {
		return nil, fmt.Errorf("no diff page at %s", urlPath)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	title, body, err := diffPage(d, diff.NewDiffer(pa.rel.Codec, pa.api), pa.rel, pa.api, a, b)
	if err != nil {
		return nil, fmt.Errorf("%s v%d..v%d: %w", pa.api.Name, a, b, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := h.site.Renderer.Doc(&buf, title, body); err != nil {
		return nil, fmt.Errorf("%s v%d..v%d: %w", pa.api.Name, a, b, err)
	}
	return buf.Bytes(), nil
}

// pairOf parses /apis/<Name>/diff/v<A>..v<B>/: an API with pages and two
// different versions it defines.
func (d *data) pairOf(urlPath string) (pa pageAPI, a, b int16, ok bool) {
	// The path is parsed here rather than with r.PathValue: the server
	// calls the handler it looked up in its mux directly, which leaves the
	// path values unset.
	parts := strings.Split(strings.TrimPrefix(urlPath, "/apis/"), "/")
	if len(parts) != 4 || parts[1] != "diff" || parts[3] != "" {
		return pa, 0, 0, false
	}
	pa, found := d.lookup(parts[0])
	m := pairPattern.FindStringSubmatch(parts[2])
	if !found || m == nil {
		return pa, 0, 0, false
	}
	x, errA := strconv.Atoi(m[1])
	y, errB := strconv.Atoi(m[2])
	valid := pa.api.Request.Valid
	if errA != nil || errB != nil || x == y || x > int(schema.MaxVersion) || y > int(schema.MaxVersion) ||
		!valid.Contains(int16(x)) || !valid.Contains(int16(y)) {
		return pa, 0, 0, false
	}
	return pa, int16(x), int16(y), true
}
