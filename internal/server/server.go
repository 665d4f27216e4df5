// Package server serves a built [site.Site] over HTTP: every page from
// memory, pre-compressed, with ETags, HEAD, a real 404 page, security
// headers and timeouts, plus dynamic handlers that other packages register
// with [Server.Handle] (such as POST /api/decode), and pages rendered on
// request ([Server.HandlePages]: a few at once, kept in a cache bounded by
// bytes, answered as the site's own pages are).
//
// # Requests
//
// GET and HEAD of a site path answer 200 with the stored bytes, gzipped
// when the client accepts gzip (Vary: Accept-Encoding), or 304 when
// If-None-Match names the representation's ETag; every file, those under
// /static/ too, is sent with Cache-Control: no-cache, so that browsers
// revalidate it. A path without its trailing slash ("/apis/Fetch") is
// redirected to the slash form. Unknown paths get the site's 404 page
// with status 404; other methods on site paths, and on paths a dynamic
// handler answers for GET, get 405.
//
// Every answer carries a Content-Security-Policy of default-src 'self' and
// the usual hardening headers (see [SecurityHeaders]).
//
// [Server.Serve] keeps at most [Limits].MaxConns connections open (default
// [MaxConns]); one more waits until one closes, counted in
// [Server.ConnStats] and logged to [Server].Log.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/manifester/manifester/internal/site"
)

// Limits and timeouts of the HTTP server.
const (
	ReadHeaderTimeout = 5 * time.Second
	ReadTimeout       = 15 * time.Second
	WriteTimeout      = 30 * time.Second
	IdleTimeout       = 120 * time.Second
	MaxHeaderBytes    = 16 << 10
	ShutdownTimeout   = 10 * time.Second
)

// SecurityHeaders are set on every response.
var SecurityHeaders = map[string]string{
	"Content-Security-Policy":      "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'",
	"X-Content-Type-Options":       "nosniff",
	"X-Frame-Options":              "DENY",
	"Referrer-Policy":              "no-referrer",
	"Cross-Origin-Opener-Policy":   "same-origin",
	"Cross-Origin-Resource-Policy": "same-origin",
}

// securityHeaderValues is SecurityHeaders as ready-made header slices, in
// canonical key form, so that serving allocates nothing for them.
var securityHeaderValues = func() map[string][]string {
	m := make(map[string][]string, len(SecurityHeaders))
	for k, v := range SecurityHeaders {
		m[http.CanonicalHeaderKey(k)] = []string{v}
	}
	return m
}()

var (
	hVary    = []string{"Accept-Encoding"}
	hGzip    = []string{"gzip"}
	hAllow   = []string{"GET, HEAD"}
	hHTML    = []string{site.TypeHTML}
	hNoCache = []string{"no-cache"}
)

// Limits are the HTTP server's timeouts and header size limit. A zero
// field takes the package default (ReadHeaderTimeout, ReadTimeout, ...).
type Limits struct {
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int
	// ShutdownTimeout is how long [Server.Serve] lets requests in
	// flight finish once its context is done.
	ShutdownTimeout time.Duration
	// MaxConns caps the connections [Server.Serve] keeps open at once
	// (zero: the MaxConns constant). A connection beyond it waits until
	// one closes; see [Server.ConnStats].
	MaxConns int
}

// Server serves a site.
type Server struct {
	// Limits override the package's timeouts and header size limit for
	// [Server.Serve]; set them before serving.
	Limits Limits
	// Log, when set, is told when the connection limit is reached (for
	// the 1st, 2nd, 4th, 8th... connection that waits for it).
	Log io.Writer

	site  *site.Site
	dyn   *http.ServeMux
	ndyn  int
	conns connCounts
}

// New returns a server of s.
func New(s *site.Site) *Server {
	return &Server{site: s, dyn: http.NewServeMux()}
}

// httpServer is HTTPServer(s) with s.Limits applied.
func (s *Server) httpServer() *http.Server {
	hs := HTTPServer(s)
	l := s.Limits
	if l.ReadHeaderTimeout > 0 {
		hs.ReadHeaderTimeout = l.ReadHeaderTimeout
	}
	if l.ReadTimeout > 0 {
		hs.ReadTimeout = l.ReadTimeout
	}
	if l.WriteTimeout > 0 {
		hs.WriteTimeout = l.WriteTimeout
	}
	if l.IdleTimeout > 0 {
		hs.IdleTimeout = l.IdleTimeout
	}
	if l.MaxHeaderBytes > 0 {
		hs.MaxHeaderBytes = l.MaxHeaderBytes
	}
	return hs
}

// Site returns the site the server serves (for dynamic handlers that
// render in its layout).
func (s *Server) Site() *site.Site { return s.site }

// Handle registers a dynamic handler for a pattern (http.ServeMux syntax,
// e.g. "POST /api/decode"). For GET and HEAD, site paths take precedence
// over dynamic ones; other methods try the dynamic handlers first (so a
// form on a site page can post to its own path). The handler's responses
// get the security headers too. Register handlers before serving.
func (s *Server) Handle(pattern string, h http.Handler) {
	s.dyn.Handle(pattern, h)
	s.ndyn++
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	for k, v := range securityHeaderValues {
		h[k] = v
	}
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	if base := s.site.Base; base != "" && base != "/" {
		rest, under := strings.CutPrefix(r.URL.Path, base)
		if !under {
			if get && r.URL.Path+"/" == base {
				http.Redirect(w, r, base, http.StatusMovedPermanently)
				return
			}
			s.notFound(w, r)
			return
		}
		r = stripBase(r, "/"+rest)
	}
	a, ok := s.site.Lookup(r.URL.Path)
	if (!ok || !get) && s.ndyn > 0 {
		if dh, pattern := s.dyn.Handler(r); pattern != "" {
			if ph, ok := dh.(pagesHandler); ok {
				// Rendered with its links under the base path already.
				ph.serve(w, r)
				return
			}
			if s.site.Base != "" {
				lw := &linkWriter{ResponseWriter: w, site: s.site, from: r.URL.Path}
				if r.Method == http.MethodHead {
					// The length of a relinked page is known only
					// from its body: have the handler write it as
					// for GET, and send the headers alone.
					lw.head = true
					r = withMethod(r, http.MethodGet)
				}
				dh.ServeHTTP(lw, r)
				lw.flush()
				return
			}
			dh.ServeHTTP(w, r)
			return
		}
	}
	if !ok && !get && s.ndyn > 0 && s.dynGET(r) {
		// A page a dynamic handler answers for GET (the reverse diff
		// pages) takes other methods as the site's own pages do.
		h["Allow"] = s.allow(r)
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !ok {
		if get {
			if !strings.HasSuffix(r.URL.Path, "/") {
				if _, ok := s.site.Lookup(r.URL.Path + "/"); ok {
					target := s.site.URL(r.URL.Path + "/")
					if r.URL.RawQuery != "" {
						target += "?" + r.URL.RawQuery
					}
					http.Redirect(w, r, target, http.StatusMovedPermanently)
					return
				}
			}
		}
		s.notFound(w, r)
		return
	}
	if !get {
		h["Allow"] = s.allow(r)
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}
	serveAsset(w, r, a)
}

// serveAsset answers GET or HEAD with a page or file: its bytes, gzipped
// when the client accepts gzip, or 304 when If-None-Match names its
// ETag.
func serveAsset(w http.ResponseWriter, r *http.Request, a *site.Asset) {
	h := w.Header()
	h["Vary"] = hVary
	// Every file, /static/ ones too, keeps its URL from build to build:
	// browsers revalidate each time (304 while the ETag still names the
	// bytes) rather than keep an old build's stylesheet or script.
	h["Cache-Control"] = hNoCache
	h["Content-Type"] = a.HContentType
	body, tag, length := a.Body, a.HETag, a.HLength
	if a.Gzip != nil && acceptsGzip(r.Header.Values("Accept-Encoding")) {
		body, tag, length = a.Gzip, a.HGzipETag, a.HGzipLength
		h["Content-Encoding"] = hGzip
	}
	h["Etag"] = tag
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatch(inm, tag[0]) {
		delete(h, "Content-Type")
		delete(h, "Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Length"] = length
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// dynGET reports whether a dynamic handler answers GET at r's path.
func (s *Server) dynGET(r *http.Request) bool {
	_, pattern := s.dyn.Handler(withMethod(r, http.MethodGet))
	return pattern != ""
}

// dynMethods are the methods besides GET and HEAD that a dynamic handler
// may take on a site path (as the decode form posts to /decode/).
var dynMethods = []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// allow is the Allow header of a 405 on the site path of r: GET and HEAD,
// and the methods dynamic handlers take there.
func (s *Server) allow(r *http.Request) []string {
	if s.ndyn == 0 {
		return hAllow
	}
	allow := hAllow[0]
	for _, m := range dynMethods {
		if _, pattern := s.dyn.Handler(withMethod(r, m)); pattern != "" {
			allow += ", " + m
		}
	}
	return []string{allow}
}

// NotFound answers with the site's 404 page, for dynamic handlers that
// find nothing to serve.
func (s *Server) NotFound(w http.ResponseWriter, r *http.Request) { s.notFound(w, r) }

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h["Content-Type"] = hHTML
	h["Cache-Control"] = hNoCache
	a := s.site.NotFound
	var body []byte
	if a != nil {
		body = a.Body
		h["Content-Length"] = a.HLength
	}
	w.WriteHeader(http.StatusNotFound)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

// acceptsGzip reports whether Accept-Encoding values allow gzip: a "gzip"
// (or "x-gzip") coding without q=0, or, when neither is named, a "*"
// coding without q=0. A coding named outright overrides "*" wherever it
// stands ("*;q=0, gzip" accepts gzip).
func acceptsGzip(values []string) bool {
	named, star := -1, -1 // -1: not given, 0: refused, 1: accepted
	for _, v := range values {
		for len(v) > 0 {
			var part string
			part, v, _ = strings.Cut(v, ",")
			coding, params, _ := strings.Cut(part, ";")
			coding = strings.TrimSpace(coding)
			var at *int
			switch {
			case strings.EqualFold(coding, "gzip") || strings.EqualFold(coding, "x-gzip"):
				at = &named
			case coding == "*":
				at = &star
			default:
				continue
			}
			ok := 1
			if qZero(params) {
				ok = 0
			}
			*at = max(*at, ok)
		}
	}
	if named >= 0 {
		return named == 1
	}
	return star == 1
}

// qZero reports whether parameters set q to zero ("q=0", "q=0.000").
func qZero(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		val = strings.TrimSpace(val)
		return strings.Trim(val, "0.") == "" && val != ""
	}
	return false
}

// etagMatch implements If-None-Match's weak comparison against one tag.
func etagMatch(header, tag string) bool {
	tag = strings.TrimPrefix(tag, "W/")
	for len(header) > 0 {
		var t string
		t, header, _ = strings.Cut(header, ",")
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == tag {
			return true
		}
	}
	return false
}

// HTTPServer returns an http.Server for h with the package's timeouts and
// limits.
func HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}

// Serve serves on ln, with the timeouts of s.Limits and at most
// s.Limits.MaxConns connections open, until ctx is done, then shuts down
// gracefully: it stops accepting, lets requests in flight finish (for at
// most ShutdownTimeout) and returns nil. Requests still running then have
// their connections closed, and the error says so.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := s.httpServer()
	maxConns := MaxConns
	if s.Limits.MaxConns > 0 {
		maxConns = s.Limits.MaxConns
	}
	idle := newIdleConns()
	hs.ConnState = idle.state
	limited := newLimitListener(ln, maxConns, &s.conns, s.Log)
	limited.reclaim, limited.idled = idle.closeOldest, idle.idled
	ln = limited
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	timeout := ShutdownTimeout
	if s.Limits.ShutdownTimeout > 0 {
		timeout = s.Limits.ShutdownTimeout
	}
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			hs.Close()
			return fmt.Errorf("server: requests still running %s after the stop were cut off", timeout)
		}
		return fmt.Errorf("server: shutting down: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}
