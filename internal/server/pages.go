package server

import (
	"bytes"
	"compress/gzip"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/manifester/manifester/internal/site"
)

// Limits of the pages rendered on demand ([Server.HandlePages]).
const (
	// PageCacheBytes bounds the bytes of the rendered pages kept, each
	// counted as its body, its gzipped body and its path.
	PageCacheBytes = 32 << 20
	// MaxPendingPages bounds the bytes of rendered pages too large to
	// keep (more than an eighth of the cache) that are waiting for their
	// clients to read them; a page that would pass it is answered 503.
	MaxPendingPages = 64 << 20
)

// errRendering is answered 503 when no render slot is free.
var (
	errRendering   = errors.New("the server is rendering as many pages as it allows; retry shortly")
	errPendingPage = errors.New("the server is sending as many large pages as it allows; retry shortly")
)

// A PageSource renders pages that the built site does not hold, on
// request (as the diffs of version pairs the static site leaves out).
type PageSource interface {
	// Canonical returns the site path of the page a site path names
	// (the same path, or another spelling of it to redirect to); false
	// when there is no such page.
	Canonical(sitePath string) (string, bool)
	// Render renders the page at a canonical site path: a whole HTML
	// document in the site's layout, its links site paths. It stops
	// with ctx's error when ctx is done, if it can.
	Render(ctx context.Context, sitePath string) ([]byte, error)
}

// Pages answers the pages of a [PageSource] as the site's own pages are
// answered (ETag, gzip, Cache-Control: no-cache, 304, links under the
// base path), rendering at most MaxConcurrent at once and keeping the
// pages it rendered in a cache of at most CacheBytes, least recently used
// out first. Set the fields before serving; zero ones take the package's
// defaults.
type Pages struct {
	Source PageSource
	// MaxConcurrent caps the pages rendered at once (zero:
	// MaxConcurrentDecodes(), slots of their own); MaxQueued more
	// requests may wait at most QueueWait for a slot (zero:
	// MaxQueuedDecodes, QueueWait), the others are answered 503 with
	// Retry-After.
	MaxConcurrent int
	MaxQueued     int
	QueueWait     time.Duration
	// CacheBytes bounds the cache (zero: PageCacheBytes). A page of more
	// than an eighth of it is rendered for each request and not kept.
	CacheBytes int64
	// MaxPending bounds the bytes of pages not kept that are waiting for
	// their clients (zero: MaxPendingPages).
	MaxPending int64

	once    sync.Once
	gate    // the render slots and their queue
	cache   pageCache
	pending byteBudget
	renders atomic.Int64
}

// PageStats counts a [Pages]' work.
type PageStats struct {
	// Renders is how many times a page was rendered.
	Renders int64
	// Cached is how many pages the cache holds, CacheBytes their bytes
	// and PeakCacheBytes the most they have been.
	Cached         int
	CacheBytes     int64
	PeakCacheBytes int64
}

// Stats returns the counts of p's work so far.
func (p *Pages) Stats() PageStats {
	p.once.Do(p.init)
	c := &p.cache
	c.mu.Lock()
	defer c.mu.Unlock()
	return PageStats{Renders: p.renders.Load(), Cached: len(c.byKey), CacheBytes: c.used, PeakCacheBytes: c.peak}
}

func (p *Pages) init() {
	p.gate.init(p.MaxConcurrent, p.MaxQueued, p.QueueWait)
	if p.CacheBytes <= 0 {
		p.CacheBytes = PageCacheBytes
	}
	p.cache.init(p.CacheBytes)
	p.pending.limit = p.MaxPending
	if p.MaxPending <= 0 {
		p.pending.limit = MaxPendingPages
	}
}

// HandlePages registers the pages of p for a pattern (http.ServeMux
// syntax, e.g. "GET /apis/{name}/diff/{pair}/"), as [Server.Handle] does.
// A path that p's source does not name gets the site's 404 page; another
// spelling of a page's path is redirected to its canonical path.
func (s *Server) HandlePages(pattern string, p *Pages) {
	s.Handle(pattern, pagesHandler{s, p})
}

// pagesHandler is the handler HandlePages registers; the server calls
// its serve with the answer writer itself, not through the writer that
// relinks dynamic answers: the pages are relinked before they are cached.
type pagesHandler struct {
	srv *Server
	p   *Pages
}

func (h pagesHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.serve(w, r) }

// serve answers a GET or HEAD of a page, from the cache or rendered.
func (h pagesHandler) serve(w http.ResponseWriter, r *http.Request) {
	p := h.p
	p.once.Do(p.init)
	canonical, ok := p.Source.Canonical(r.URL.Path)
	switch {
	case !ok:
		h.srv.notFound(w, r)
		return
	case canonical != r.URL.Path:
		target := h.srv.site.URL(canonical)
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, target, http.StatusMovedPermanently)
		return
	}
	if a, ok := p.cache.get(canonical); ok {
		serveAsset(w, r, a)
		return
	}
	if !p.acquire(r.Context()) {
		if r.Context().Err() == nil {
			pageBusy(w, errRendering)
		}
		return
	}
	a, kept, err := h.render(r.Context(), canonical)
	switch {
	case r.Context().Err() != nil:
		return // the client went away: nobody to answer
	case err != nil:
		http.Error(w, "500 "+err.Error(), http.StatusInternalServerError)
		return
	}
	if !kept {
		// Written after the slot is released, as decode answers are: a
		// client that reads slowly holds its connection, not a slot.
		n := int64(len(a.Body) + len(a.Gzip))
		if !p.pending.take(n) {
			pageBusy(w, errPendingPage)
			return
		}
		defer p.pending.give(n)
	}
	serveAsset(w, r, a)
}

// render renders the page at a canonical path with a render slot, which
// it releases, unless the cache has it by now (another request rendered
// it while this one waited); kept says whether the cache holds the page.
func (h pagesHandler) render(ctx context.Context, canonical string) (a *site.Asset, kept bool, err error) {
	p := h.p
	defer p.release()
	if a, ok := p.cache.get(canonical); ok {
		return a, true, nil
	}
	p.renders.Add(1)
	body, err := p.Source.Render(ctx, canonical)
	if err != nil {
		return nil, false, fmt.Errorf("rendering %s: %w", canonical, err)
	}
	if s := h.srv.site; s.Base != "" {
		body = s.Relinked(body, canonical)
	}
	a, err = pageAsset(canonical, body)
	if err != nil {
		return nil, false, err
	}
	return a, p.cache.put(canonical, a), nil
}

// gzipWriters are compressors for pageAsset: a gzip writer at the best
// level allocates about 1 MB, and at most one is in use per render slot.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestCompression)
	return zw
}}

// pageAsset makes a rendered HTML page an asset as the site makes its
// own: its gzip when smaller, strong ETags from the body's SHA-256, and
// the header values.
func pageAsset(path string, body []byte) (*site.Asset, error) {
	a := &site.Asset{Path: path, ContentType: site.TypeHTML, Body: body}
	sum := sha256.Sum256(body)
	tag := base64.RawURLEncoding.EncodeToString(sum[:12])
	a.ETag = `"` + tag + `"`
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	var buf bytes.Buffer
	buf.Grow(len(body)/4 + 64)
	zw.Reset(&buf)
	if _, err := zw.Write(body); err != nil {
		return nil, fmt.Errorf("compressing %s: %w", path, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing %s: %w", path, err)
	}
	if buf.Len() < len(body) {
		a.Gzip = buf.Bytes()
		a.GzipETag = `"` + tag + `-gz"`
		a.HGzipETag = []string{a.GzipETag}
		a.HGzipLength = []string{strconv.Itoa(len(a.Gzip))}
	}
	a.HContentType = hHTML
	a.HETag = []string{a.ETag}
	a.HLength = []string{strconv.Itoa(len(body))}
	return a, nil
}

// pageCache keeps rendered pages by canonical path, at most limit bytes of
// them, the least recently used out first.
type pageCache struct {
	mu       sync.Mutex
	limit    int64
	maxEntry int64 // a larger page is not kept
	used     int64
	peak     int64
	order    list.List // of *cacheEntry, the most recently used first
	byKey    map[string]*list.Element
}

type cacheEntry struct {
	key  string
	page *site.Asset
	size int64
}

// cacheEntryOverhead is what an entry is counted beyond its bytes: the
// asset, its header values, the list element and the map slot.
const cacheEntryOverhead = 512

func (c *pageCache) init(limit int64) {
	c.limit, c.maxEntry = limit, limit/8
	c.byKey = map[string]*list.Element{}
}

// entrySize is what a page is counted in the cache.
func entrySize(key string, a *site.Asset) int64 {
	return int64(len(key)+len(a.Body)+len(a.Gzip)) + cacheEntryOverhead
}

// get returns the page kept at key, marking it the most recently used.
func (c *pageCache) get(key string) (*site.Asset, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cacheEntry).page, true
}

// put keeps a page at key, putting out the least recently used pages to
// make room; false, keeping nothing, when the page is larger than an
// entry may be.
func (c *pageCache) put(key string, a *site.Asset) bool {
	size := entrySize(key, a)
	if size > c.maxEntry {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.remove(e)
	}
	for c.used+size > c.limit {
		c.remove(c.order.Back())
	}
	c.byKey[key] = c.order.PushFront(&cacheEntry{key: key, page: a, size: size})
	c.used += size
	c.peak = max(c.peak, c.used)
	return true
}

func (c *pageCache) remove(e *list.Element) {
	ce := c.order.Remove(e).(*cacheEntry)
	delete(c.byKey, ce.key)
	c.used -= ce.size
}
