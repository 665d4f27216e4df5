// Package site builds the whole web site into memory: every page as bytes,
// pre-compressed with gzip and tagged with an ETag, keyed by URL path. The
// same [Site] is written to a directory by `manifester build` and served by
// `manifester serve`, so both give the same bytes for every path.
//
// # URL layout
//
//	/                          All Kafka APIs (index)
//	/apis/<Name>/              the API's page at its highest version (for a
//	                           reserved key, a page saying it is reserved)
//	/apis/<Name>/v<N>/         the page at every valid version
//	/apis/<Name>/v<N>.json     the JSON page model (package page)
//	/vectors.jsonl             every test vector (package vectors)
//	/static/site.css, site.js  style sheet and script
//	/404.html                  the not-found page
//	/decode/                   the decode form (with Options.DecodePage)
//
// # Releases and extensions
//
// [Options.Releases] lists every loaded spec release, oldest first; the
// newest one drives the pages. An [Extension] can add summary items and
// sections to every API page ([Extension.Page]), add whole routes
// ([Extension.Routes], through a [Builder]) and add navigation links.
package site

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"mime"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/release"
	htmlr "github.com/manifester/manifester/internal/render/html"
	"github.com/manifester/manifester/internal/render/jsonr"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/specjson"
	"github.com/manifester/manifester/internal/vectors"
)

// Content types of the site's files.
const (
	TypeHTML  = "text/html; charset=utf-8"
	TypeJSON  = "application/json"
	TypeJSONL = "application/jsonl; charset=utf-8"
	TypeCSS   = "text/css; charset=utf-8"
	TypeJS    = "text/javascript; charset=utf-8"
	TypeWasm  = "application/wasm"
)

// NotFoundPath is the path of the not-found page.
const NotFoundPath = "/404.html"

// DecodePath is the path of the decode page.
const DecodePath = "/decode/"

// APINames lists the names of the registry's APIs that have versions, for
// the decode form's suggestions.
func APINames(reg *schema.Registry) []string {
	var out []string
	for _, a := range reg.APIs {
		if !a.Reserved() {
			out = append(out, a.Name)
		}
	}
	return out
}

// Options configure [Build].
type Options struct {
	// Releases lists every release, oldest first; the last one (the newest)
	// drives the pages. At least one is required.
	Releases []*release.Release
	// Extensions add page sections, routes and links.
	Extensions []Extension
	// Workers bounds the build's parallelism (default GOMAXPROCS).
	Workers int
	// DecodePage adds the /decode/ page (and a "Decode" link). Its form
	// posts to the server's decode handlers (package server), so it only
	// decodes under `manifester serve`.
	DecodePage bool
	// BasePath, when set ("/" or "/prefix/"), makes every page's links
	// relative to the page (the 404 page's: absolute under the base path),
	// so the site works under that prefix and from file:// (see [Link]).
	// Empty keeps the site paths as rendered ("/apis/Fetch/").
	BasePath string
	// StaticDecoder, when set, adds the WebAssembly decoder to the site
	// (with DecodePage): the /decode/ page then decodes in the browser.
	StaticDecoder *StaticDecoder
	// NoCompress leaves every [Asset.Gzip] nil, for a site that is only
	// written to a directory ([Site.WriteDir] writes the bodies only):
	// compressing every file at the best level is most of a build's
	// work. The assets then have no ETags and no header values either
	// (nothing serves them). [Stats] has no gzip sizes, and its largest
	// page is the largest body.
	NoCompress bool
}

// StaticDecoder is the decoder of a static export: cmd/manifester-wasm
// compiled with GOOS=js GOARCH=wasm and the Go distribution's
// wasm_exec.js. The site adds them as [WasmPath] and [WasmExecPath], and
// the newest release's spec files as [SpecsPath] (package specjson).
// The decoder and the specs are also written as scripts ([WasmScriptPath],
// [SpecsScriptPath]) for pages opened from file://, which may load a
// script but not fetch a file.
type StaticDecoder struct {
	Wasm     []byte
	WasmExec []byte
}

// Paths of the static decoder's files.
const (
	WasmPath     = "/static/manifester.wasm"
	WasmExecPath = "/static/wasm_exec.js"
	SpecsPath    = "/static/specs.json"
	// WasmScriptPath sets window.manifesterWasm to the decoder in base64;
	// SpecsScriptPath sets window.manifesterSpecs to the specs' JSON text.
	WasmScriptPath  = "/static/manifester-wasm.js"
	SpecsScriptPath = "/static/specs.js"
)

// scriptSetting returns a script that sets window.<name> to s as a
// JavaScript string. s is base64 or JSON text; JSON-quoting it escapes
// "<", ">" and "&" as well, so no "</script>" can appear in it.
func scriptSetting(name string, s []byte) ([]byte, error) {
	q, err := json.Marshal(string(s))
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(q)+len(name)+16)
	out = append(out, "window."+name+" = "...)
	out = append(out, q...)
	return append(out, ";\n"...), nil
}

// PageContext is what an extension sees of one API page.
type PageContext struct {
	Releases []*release.Release // every release, oldest first
	API      *schema.API
	Version  int16
	Page     *page.Page
}

// Extension adds to the site. Every field is optional.
type Extension struct {
	// Name identifies the extension in errors.
	Name string
	// Nav links are added to every page's header.
	Nav []htmlr.Link
	// Page returns extra summary items and sections for one API page. It
	// is called concurrently for different pages.
	Page func(pc *PageContext) (htmlr.Extras, error)
	// Routes adds whole pages or files after the API pages are built.
	Routes func(b *Builder) error
	// Setup configures the renderer before any page is rendered (for
	// links to the pages the extension adds).
	Setup func(r *htmlr.Renderer)
	// Index may change the rows of the "All Kafka APIs" page (add badges,
	// say where a reserved key's page comes from) before it is rendered.
	Index func(b *Builder, rows []htmlr.IndexRow) error
}

// Asset is one file of the site.
type Asset struct {
	Path        string
	ContentType string
	Body        []byte
	// Gzip is Body gzip-compressed, or nil when that is not smaller.
	Gzip []byte
	// ETag and GzipETag are strong entity tags (quoted) of each form.
	ETag     string
	GzipETag string
	// Header values, pre-built so serving allocates nothing for them.
	HContentType, HETag, HGzipETag, HLength, HGzipLength []string
}

// Stats describes a built site.
type Stats struct {
	Release   string
	Pages     int // HTML pages (index, API pages, 404, extension pages)
	Files     int // every path
	Bytes     int64
	GzipBytes int64 // sum of the smaller of body and gzip per file
	// Compressed reports whether the files were compressed (see
	// [Options.NoCompress]); without, GzipBytes is Bytes and LargestGzip
	// is 0.
	Compressed bool
	// LargestGzipPath is the HTML page with the largest gzipped size (the
	// largest body when the site is not compressed).
	LargestGzipPath string
	LargestGzip     int
	LargestBody     int
	Duration        time.Duration
}

// Site is the built site.
type Site struct {
	assets   map[string]*Asset
	paths    []string
	NotFound *Asset
	Stats    Stats
	// Renderer renders pages in the site's layout (for dynamic pages).
	Renderer *htmlr.Renderer
	// Releases are the releases the site was built from, oldest first.
	Releases []*release.Release
	// Base is [Options.BasePath] as cleaned ("" when unset).
	Base string
}

// URL is the absolute URL path of a site path under the site's base path,
// for redirects ("/apis/Fetch/" -> "/prefix/apis/Fetch/").
func (s *Site) URL(sitePath string) string {
	if s.Base == "" {
		return sitePath
	}
	return Link(s.Base, "", sitePath)
}

// Relinked returns a page rendered with site paths, such as a dynamic
// page, with its links as the site's pages carry them (relative to the
// page's site path from).
func (s *Site) Relinked(body []byte, from string) []byte {
	return RewriteLinks(body, s.Base, from)
}

// Newest returns the release that drives the pages.
func (s *Site) Newest() *release.Release { return s.Releases[len(s.Releases)-1] }

// Lookup returns the asset at a URL path.
func (s *Site) Lookup(urlPath string) (*Asset, bool) {
	a, ok := s.assets[urlPath]
	return a, ok
}

// Paths returns every URL path, sorted.
func (s *Site) Paths() []string { return s.paths }

// Builder collects the files of a site under construction. Extensions get
// one in [Extension.Routes].
type Builder struct {
	mu       sync.Mutex
	r        *htmlr.Renderer
	assets   map[string]*Asset
	releases []*release.Release
}

// Releases returns every release, oldest first.
func (b *Builder) Releases() []*release.Release { return b.releases }

// Renderer returns the site's HTML renderer (layout, navigation).
func (b *Builder) Renderer() *htmlr.Renderer { return b.r }

// Add adds a file. The path must start with "/" and not be taken.
func (b *Builder) Add(urlPath, contentType string, body []byte) error {
	if !validPath(urlPath) {
		return fmt.Errorf("site: invalid path %q", urlPath)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, dup := b.assets[urlPath]; dup {
		return fmt.Errorf("site: %s is added twice", urlPath)
	}
	b.assets[urlPath] = &Asset{Path: urlPath, ContentType: contentType, Body: body}
	return nil
}

// validBase reports whether a cleaned base path is made of plain segments.
func validBase(p string) bool {
	if p == "/" {
		return true
	}
	for _, seg := range strings.Split(strings.Trim(p, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
		for _, c := range seg {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._~-", c)) {
				return false
			}
		}
	}
	return true
}

// validPath reports whether a URL path can name a file of the site: it
// starts with "/", has no empty, "." or ".." segment and no backslash
// ("v3..v4" is a valid segment).
func validPath(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return false
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		if s == "." || s == ".." || (s == "" && i != len(segs)-1) {
			return false
		}
	}
	return true
}

// Replace puts a file at a path whether or not the site already has one
// there, for an extension that supersedes a page the site made (a reserved
// key's page replaced by the API's page from an older release).
func (b *Builder) Replace(urlPath, contentType string, body []byte) error {
	b.mu.Lock()
	delete(b.assets, urlPath)
	b.mu.Unlock()
	return b.Add(urlPath, contentType, body)
}

// Has reports whether the site has a file at the path.
func (b *Builder) Has(urlPath string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.assets[urlPath]
	return ok
}

// AddDoc adds an HTML page whose body is wrapped in the site layout.
func (b *Builder) AddDoc(urlPath, title string, body template.HTML) error {
	return b.Add(urlPath, TypeHTML, b.r.DocHTML(title, body))
}

// Build renders every page of the newest release.
func Build(opts Options) (*Site, error) {
	start := time.Now()
	if len(opts.Releases) == 0 {
		return nil, errors.New("site: no releases")
	}
	for _, rel := range opts.Releases {
		if err := rel.Complete(); err != nil {
			return nil, fmt.Errorf("site: %w", err)
		}
	}
	if err := checkVersions(opts.Releases); err != nil {
		return nil, err
	}
	base := ""
	if opts.BasePath != "" {
		base = CleanBase(opts.BasePath)
		if !validBase(base) {
			return nil, fmt.Errorf("site: base path %q: want /, or /prefix/ of letters, digits and . _ ~ - segments", opts.BasePath)
		}
	}
	newest := opts.Releases[len(opts.Releases)-1]
	c := newest.Codec
	r, err := htmlr.New()
	if err != nil {
		return nil, err
	}
	if opts.DecodePage {
		r.Nav = append(r.Nav, htmlr.Link{Href: DecodePath, Text: "Decode"})
	}
	for _, e := range opts.Extensions {
		r.Nav = append(r.Nav, e.Nav...)
		if e.Setup != nil {
			e.Setup(r)
		}
	}
	r.Footer = "Kafka " + newest.Label + " message specs."
	b := &Builder{r: r, assets: map[string]*Asset{}, releases: opts.Releases}

	if err := addStatic(b); err != nil {
		return nil, err
	}
	var nf bytes.Buffer
	if err := r.NotFound(&nf); err != nil {
		return nil, err
	}
	if err := b.Add(NotFoundPath, TypeHTML, nf.Bytes()); err != nil {
		return nil, err
	}

	highest, err := buildAPIPages(b, opts, newest)
	if err != nil {
		return nil, err
	}
	if err := buildIndex(b, opts, newest, highest); err != nil {
		return nil, err
	}
	vs, err := vectors.Generate(c)
	if err != nil {
		return nil, fmt.Errorf("site: vectors: %w", err)
	}
	var vb bytes.Buffer
	if err := vectors.Write(&vb, vs); err != nil {
		return nil, fmt.Errorf("site: vectors: %w", err)
	}
	if err := b.Add("/vectors.jsonl", TypeJSONL, vb.Bytes()); err != nil {
		return nil, err
	}
	if opts.DecodePage {
		var db bytes.Buffer
		if err := r.DecodePage(&db, &htmlr.DecodeInput{APIs: APINames(c.Reg), Form: htmlr.DecodeForm{Kind: "request"}, Static: opts.StaticDecoder != nil}); err != nil {
			return nil, err
		}
		if sd := opts.StaticDecoder; sd != nil {
			specs, err := specjson.Marshal(c.Reg, r.ErrorsPath)
			if err != nil {
				return nil, fmt.Errorf("site: %w", err)
			}
			wasmJS, err := scriptSetting("manifesterWasm", []byte(base64.StdEncoding.EncodeToString(sd.Wasm)))
			if err != nil {
				return nil, fmt.Errorf("site: %w", err)
			}
			specsJS, err := scriptSetting("manifesterSpecs", specs)
			if err != nil {
				return nil, fmt.Errorf("site: %w", err)
			}
			for _, f := range []struct {
				path, ct string
				body     []byte
			}{{WasmPath, TypeWasm, sd.Wasm}, {WasmExecPath, TypeJS, sd.WasmExec}, {SpecsPath, TypeJSON, specs},
				{WasmScriptPath, TypeJS, wasmJS}, {SpecsScriptPath, TypeJS, specsJS}} {
				if err := b.Add(f.path, f.ct, f.body); err != nil {
					return nil, err
				}
			}
		}
		if err := b.Add(DecodePath, TypeHTML, db.Bytes()); err != nil {
			return nil, err
		}
	}
	for _, e := range opts.Extensions {
		if e.Routes == nil {
			continue
		}
		if err := e.Routes(b); err != nil {
			return nil, fmt.Errorf("site: extension %s: %w", e.Name, err)
		}
	}

	s := &Site{assets: b.assets, Renderer: r, Releases: opts.Releases, Base: base}
	for p := range b.assets {
		s.paths = append(s.paths, p)
	}
	sort.Strings(s.paths)
	if err := finish(s, opts.workers(), !opts.NoCompress); err != nil {
		return nil, err
	}
	s.NotFound = s.assets[NotFoundPath]
	s.Stats.Release = newest.Label
	s.Stats.Duration = time.Since(start)
	return s, nil
}

func (o Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

func addStatic(b *Builder) error {
	return fs.WalkDir(htmlr.Static(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(htmlr.Static(), p)
		if err != nil {
			return err
		}
		ct := mime.TypeByExtension(path.Ext(p))
		switch path.Ext(p) {
		case ".css":
			ct = TypeCSS
		case ".js":
			ct = TypeJS
		}
		return b.Add("/static/"+p, ct, body)
	})
}

type job struct {
	api *schema.API
	v   int16
}

// buildAPIPages renders every API at every valid version, in parallel, and
// returns the pages at the highest versions by API key.
func buildAPIPages(b *Builder, opts Options, rel *release.Release) (map[int16]*page.Page, error) {
	c := rel.Codec
	var jobs []job
	for _, api := range c.Reg.APIs {
		if api.Reserved() {
			continue
		}
		for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
			jobs = append(jobs, job{api, v})
		}
	}
	highest := map[int16]*page.Page{}
	var mu sync.Mutex
	var firstErr error
	ch := make(chan job)
	var wg sync.WaitGroup
	for range opts.workers() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				p, err := buildAPIPage(b, opts, rel, j)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if p != nil && j.v == j.api.Request.Valid.Hi {
					highest[j.api.Key] = p
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	return highest, firstErr
}

func buildAPIPage(b *Builder, opts Options, rel *release.Release, j job) (*page.Page, error) {
	c := rel.Codec
	p, err := page.Build(c, j.api, j.v)
	if err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	in := &htmlr.PageInput{Page: p, API: j.api, RequestHeader: c.Reg.RequestHeader, ResponseHeader: c.Reg.ResponseHeader}
	for _, e := range opts.Extensions {
		if e.Page == nil {
			continue
		}
		x, err := e.Page(&PageContext{Releases: opts.Releases, API: j.api, Version: j.v, Page: p})
		if err != nil {
			return nil, fmt.Errorf("site: extension %s: %s v%d: %w", e.Name, j.api.Name, j.v, err)
		}
		in.Extras.Summary = append(in.Extras.Summary, x.Summary...)
		in.Extras.Sections = append(in.Extras.Sections, x.Sections...)
		in.Extras.Badges = append(in.Extras.Badges, x.Badges...)
		in.Extras.Older = append(in.Extras.Older, x.Older...)
		if x.Intro != "" {
			in.Extras.Intro = x.Intro
		}
		if x.Footer != "" {
			in.Extras.Footer = x.Footer
		}
		if x.Switcher != nil {
			in.Extras.Switcher = x.Switcher
		}
	}
	hb, err := b.r.PageHTML(in)
	if err != nil {
		return nil, fmt.Errorf("site: %s v%d: %w", j.api.Name, j.v, err)
	}
	js, err := PageJSON(p)
	if err != nil {
		return nil, fmt.Errorf("site: %s v%d: %w", j.api.Name, j.v, err)
	}
	if err := b.Add(htmlr.APIPath(j.api.Name, int(j.v)), TypeHTML, hb); err != nil {
		return nil, err
	}
	if err := b.Add(htmlr.JSONPath(j.api.Name, int(j.v)), TypeJSON, js); err != nil {
		return nil, err
	}
	if j.v == j.api.Request.Valid.Hi {
		if err := b.Add(htmlr.APIPath(j.api.Name, -1), TypeHTML, hb); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// PageJSON encodes a page the way `manifester show --format json` prints
// it (package jsonr writes it).
func PageJSON(p *page.Page) ([]byte, error) {
	return jsonr.PageDocument(p)
}

func buildIndex(b *Builder, opts Options, rel *release.Release, highest map[int16]*page.Page) error {
	in := &htmlr.IndexInput{Release: rel.Label}
	for _, api := range rel.Codec.Reg.APIs {
		req := api.Request
		row := htmlr.IndexRow{Key: api.Key, Name: api.Name, Reserved: api.Reserved(), Versions: req.Valid.String(),
			Flexible: req.Flexible.String(), Listeners: req.Listeners, ControllerOnly: api.ControllerOnly(),
			Unstable: req.LatestVersionUnstable, Highest: req.Valid.Hi}
		if row.Reserved {
			row.Flexible, row.Listeners, row.Unstable, row.ControllerOnly = "-", nil, false, false
			var rb bytes.Buffer
			if err := b.r.Reserved(&rb, &htmlr.ReservedInput{Release: rel.Label, Key: api.Key, Name: api.Name}); err != nil {
				return err
			}
			if err := b.Add(htmlr.APIPath(api.Name, -1), TypeHTML, rb.Bytes()); err != nil {
				return err
			}
		} else if p := highest[api.Key]; p != nil {
			row.RequestSize, row.ResponseSize = p.Request.Size, p.Response.Size
		}
		in.Rows = append(in.Rows, row)
	}
	for _, e := range opts.Extensions {
		if e.Index == nil {
			continue
		}
		if err := e.Index(b, in.Rows); err != nil {
			return fmt.Errorf("site: extension %s: index: %w", e.Name, err)
		}
	}
	var buf bytes.Buffer
	if err := b.r.Index(&buf, in); err != nil {
		return err
	}
	return b.Add("/", TypeHTML, buf.Bytes())
}

// finish rewrites the links of every page under the base path and, with
// compress, compresses every asset and computes ETags and header values;
// then the stats.
func finish(s *Site, workers int, compress bool) error {
	ch := make(chan *Asset)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One compressor per worker, reset for every file: a gzip
			// writer at the best level allocates about 1 MB.
			var zw *gzip.Writer
			if compress {
				zw, _ = gzip.NewWriterLevel(io.Discard, gzip.BestCompression)
			}
			for a := range ch {
				if s.Base != "" && a.ContentType == TypeHTML {
					from := a.Path
					if from == NotFoundPath {
						from = "" // served at any depth: absolute links
					}
					a.Body = RewriteLinks(a.Body, s.Base, from)
				}
				if !compress {
					continue // written to a directory only: no tags, no headers
				}
				if err := prepare(a, zw); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, p := range s.paths {
		ch <- s.assets[p]
	}
	close(ch)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	st := &s.Stats
	st.Compressed = compress
	for _, p := range s.paths {
		a := s.assets[p]
		st.Files++
		st.Bytes += int64(len(a.Body))
		gz := len(a.Body)
		if a.Gzip != nil {
			gz = len(a.Gzip)
		}
		st.GzipBytes += int64(gz)
		if a.ContentType == TypeHTML {
			st.Pages++
			switch {
			case compress && gz > st.LargestGzip:
				st.LargestGzip, st.LargestGzipPath, st.LargestBody = gz, p, len(a.Body)
			case !compress && len(a.Body) > st.LargestBody:
				st.LargestGzipPath, st.LargestBody = p, len(a.Body)
			}
		}
	}
	return nil
}

// GzipSize returns the size of body gzipped the way the site compresses
// its files (for a page's size when the site is not compressed).
func GzipSize(body []byte) int {
	var n countWriter
	zw, _ := gzip.NewWriterLevel(&n, gzip.BestCompression)
	zw.Write(body)
	zw.Close()
	return int(n)
}

type countWriter int

func (c *countWriter) Write(b []byte) (int, error) { *c += countWriter(len(b)); return len(b), nil }

// prepare tags an asset and, with a compressor, compresses it.
func prepare(a *Asset, zw *gzip.Writer) error {
	sum := sha256.Sum256(a.Body)
	tag := base64.RawURLEncoding.EncodeToString(sum[:12])
	a.ETag = `"` + tag + `"`
	if zw != nil {
		var buf bytes.Buffer
		buf.Grow(len(a.Body)/4 + 64)
		zw.Reset(&buf)
		if _, err := zw.Write(a.Body); err != nil {
			return fmt.Errorf("site: compressing %s: %w", a.Path, err)
		}
		if err := zw.Close(); err != nil {
			return fmt.Errorf("site: compressing %s: %w", a.Path, err)
		}
		if buf.Len() < len(a.Body) {
			a.Gzip = buf.Bytes()
			a.GzipETag = `"` + tag + `-gz"`
		}
	}
	a.HContentType = []string{a.ContentType}
	a.HETag = []string{a.ETag}
	a.HLength = []string{fmt.Sprint(len(a.Body))}
	if a.Gzip != nil {
		a.HGzipETag = []string{a.GzipETag}
		a.HGzipLength = []string{fmt.Sprint(len(a.Gzip))}
	}
	return nil
}

// FilePath maps a URL path to the file that holds it in a written site:
// "/" is index.html, "/apis/X/" is apis/X/index.html.
func FilePath(urlPath string) string {
	p := strings.TrimPrefix(urlPath, "/")
	if p == "" || strings.HasSuffix(p, "/") {
		p += "index.html"
	}
	return filepath.FromSlash(p)
}

// URLPath is the inverse of [FilePath].
func URLPath(file string) string {
	p := "/" + filepath.ToSlash(file)
	if p == "/index.html" {
		return "/"
	}
	if strings.HasSuffix(p, "/index.html") {
		return strings.TrimSuffix(p, "index.html")
	}
	return p
}
