package server

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/release"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/site"
	"github.com/manifester/manifester/internal/testdeadline"
	"github.com/manifester/manifester/internal/testshared"
)

var spec43 = testshared.SpecPath("4.3")

var (
	once   sync.Once
	built  *site.Site
	errSet error
)

func testSite(t testing.TB) *site.Site {
	t.Helper()
	testshared.Dir(t)
	once.Do(func() {
		reg, err := schema.Load(spec43)
		if err != nil {
			errSet = err
			return
		}
		built, errSet = site.Build(site.Options{Releases: []*release.Release{{Label: "4.3", Codec: codec.New(reg)}}, DecodePage: true})
	})
	if errSet != nil {
		t.Fatal(errSet)
	}
	return built
}

func do(t *testing.T, h http.Handler, method, path string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func checkSecurity(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	if got := w.Header().Get("Content-Security-Policy"); !strings.HasPrefix(got, "default-src 'self'") {
		t.Errorf("CSP %q", got)
	}
	if w.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("no nosniff")
	}
}

func TestGetHeadGzip(t *testing.T) {
	s := testSite(t)
	h := New(s)
	a, _ := s.Lookup("/apis/AlterConfigs/")

	w := do(t, h, "GET", "/apis/AlterConfigs/", nil)
	if w.Code != 200 || !bytes.Equal(w.Body.Bytes(), a.Body) {
		t.Fatalf("GET: %d, %d bytes; want 200 with the page", w.Code, w.Body.Len())
	}
	checkSecurity(t, w)
	if w.Header().Get("Content-Type") != site.TypeHTML || w.Header().Get("Content-Encoding") != "" ||
		w.Header().Get("Vary") != "Accept-Encoding" || w.Header().Get("ETag") != a.ETag {
		t.Errorf("GET headers %v", w.Header())
	}

	w = do(t, h, "GET", "/apis/AlterConfigs/", map[string]string{"Accept-Encoding": "br, gzip"})
	if w.Header().Get("Content-Encoding") != "gzip" || !bytes.Equal(w.Body.Bytes(), a.Gzip) || w.Header().Get("ETag") != a.GzipETag {
		t.Errorf("gzip GET: encoding %q, %d bytes", w.Header().Get("Content-Encoding"), w.Body.Len())
	}
	if w.Header().Get("Content-Length") != itoa(len(a.Gzip)) {
		t.Errorf("gzip Content-Length %q, want %d", w.Header().Get("Content-Length"), len(a.Gzip))
	}
	w = do(t, h, "GET", "/apis/AlterConfigs/", map[string]string{"Accept-Encoding": "gzip;q=0, identity"})
	if w.Header().Get("Content-Encoding") != "" || !bytes.Equal(w.Body.Bytes(), a.Body) {
		t.Errorf("gzip;q=0 got encoding %q", w.Header().Get("Content-Encoding"))
	}

	w = do(t, h, "HEAD", "/apis/AlterConfigs/", nil)
	if w.Code != 200 || w.Body.Len() != 0 || w.Header().Get("Content-Length") != itoa(len(a.Body)) {
		t.Errorf("HEAD: %d, body %d, length %q", w.Code, w.Body.Len(), w.Header().Get("Content-Length"))
	}
}

func itoa(n int) string {
	var b []byte
	if n == 0 {
		return "0"
	}
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestConditional(t *testing.T) {
	s := testSite(t)
	h := New(s)
	a, _ := s.Lookup("/")
	for _, tc := range []struct {
		inm, ae string
		want    int
	}{
		{a.ETag, "", 304},
		{"W/" + a.ETag, "", 304},
		{`"other", ` + a.ETag, "", 304},
		{"*", "", 304},
		{a.GzipETag, "gzip", 304},
		{a.ETag, "gzip", 200}, // the identity tag does not match the gzip form
		{`"other"`, "", 200},
	} {
		w := do(t, h, "GET", "/", map[string]string{"If-None-Match": tc.inm, "Accept-Encoding": tc.ae})
		if w.Code != tc.want {
			t.Errorf("If-None-Match %s (Accept-Encoding %q): %d, want %d", tc.inm, tc.ae, w.Code, tc.want)
		}
		if w.Code == 304 && (w.Body.Len() != 0 || w.Header().Get("ETag") == "") {
			t.Errorf("304 with a body or without an ETag")
		}
	}
}

func TestNotFoundMethodRedirect(t *testing.T) {
	s := testSite(t)
	h := New(s)
	w := do(t, h, "GET", "/apis/NoSuchAPI/", nil)
	if w.Code != 404 || !bytes.Equal(w.Body.Bytes(), s.NotFound.Body) || w.Header().Get("Content-Type") != site.TypeHTML {
		t.Errorf("unknown path: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	checkSecurity(t, w)
	if !strings.Contains(w.Body.String(), "Page not found") {
		t.Errorf("404 page lacks its heading")
	}
	w = do(t, h, "POST", "/", nil)
	if w.Code != 405 || w.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /: %d allow %q", w.Code, w.Header().Get("Allow"))
	}
	w = do(t, h, "GET", "/apis/AlterConfigs?x=1", nil)
	if w.Code != 301 || w.Header().Get("Location") != "/apis/AlterConfigs/?x=1" {
		t.Errorf("no-slash path: %d to %q", w.Code, w.Header().Get("Location"))
	}
	w = do(t, h, "GET", "/apis/AlterConfigs/v9/", nil)
	if w.Code != 404 {
		t.Errorf("invalid version: %d, want 404", w.Code)
	}
}

func TestDynamicHandler(t *testing.T) {
	s := testSite(t)
	h := New(s)
	h.Handle("POST /api/echo", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	}))
	r := httptest.NewRequest("POST", "/api/echo", strings.NewReader("hello"))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 || w.Body.String() != "hello" {
		t.Errorf("dynamic handler: %d %q", w.Code, w.Body.String())
	}
	checkSecurity(t, w)
	// The site still wins for its own paths, and unknown paths still 404.
	if w := do(t, h, "GET", "/", nil); w.Code != 200 {
		t.Errorf("GET / with a dynamic handler: %d", w.Code)
	}
	if w := do(t, h, "GET", "/api/echo", nil); w.Code != 405 && w.Code != 404 {
		t.Errorf("GET on a POST-only dynamic route: %d", w.Code)
	}
	// A site path a dynamic handler also takes POST on lists POST in the
	// Allow of its 405 (RFC 9110: every method the resource supports).
	h.Handle("POST /decode/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for _, m := range []string{"PUT", "DELETE", "OPTIONS"} {
		if w := do(t, h, m, "/decode/", nil); w.Code != 405 || w.Header().Get("Allow") != "GET, HEAD, POST" {
			t.Errorf("%s /decode/: %d, Allow %q; want 405, GET, HEAD, POST", m, w.Code, w.Header().Get("Allow"))
		}
	}
	if w := do(t, h, "PUT", "/", nil); w.Code != 405 || w.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("PUT /: %d, Allow %q; want 405, GET, HEAD", w.Code, w.Header().Get("Allow"))
	}
}

func TestHelpers(t *testing.T) {
	for _, tc := range []struct {
		ae   []string
		want bool
	}{
		{nil, false},
		{[]string{"gzip"}, true},
		{[]string{"deflate, gzip;q=1.0"}, true},
		{[]string{"GZIP"}, true},
		{[]string{"gzip;q=0"}, false},
		{[]string{"gzip; q=0.000"}, false},
		{[]string{"gzip;q=0.5"}, true},
		{[]string{"*"}, true},
		{[]string{"br", "gzip"}, true},
		{[]string{"identity"}, false},
		{[]string{"gzipx"}, false},
		// A coding named outright overrides "*", wherever it stands.
		{[]string{"*;q=0, gzip"}, true},
		{[]string{"*;q=0", "gzip;q=0.8"}, true},
		{[]string{"gzip;q=0, *"}, false},
		{[]string{"x-gzip;q=0, gzip"}, true},
		{[]string{"br, *;q=0"}, false},
	} {
		if got := acceptsGzip(tc.ae); got != tc.want {
			t.Errorf("acceptsGzip(%q) = %v", tc.ae, got)
		}
	}
	hs := HTTPServer(http.NotFoundHandler())
	if hs.ReadHeaderTimeout == 0 || hs.ReadTimeout == 0 || hs.WriteTimeout == 0 || hs.IdleTimeout == 0 || hs.MaxHeaderBytes == 0 {
		t.Errorf("HTTPServer leaves a limit unset: %+v", hs)
	}
}

// TestServeGracefulShutdown serves on 127.0.0.1, holds a request in a slow
// dynamic handler, cancels, and checks that the request still completes and
// Serve returns nil.
func TestServeGracefulShutdown(t *testing.T) {
	s := testSite(t)
	srv := New(s)
	started := make(chan struct{})
	srv.Handle("GET /api/slow", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, "done")
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get(base + "/api/slow")
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	<-started
	cancel()
	if body := <-got; body != "done" {
		t.Errorf("request in flight during shutdown got %q", body)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(testdeadline.Remaining(t)):
		t.Fatal("Serve did not return after cancel")
	}
	if _, err := http.Get(base + "/"); err == nil {
		t.Errorf("server still answers after shutdown")
	}
}

func BenchmarkServeGzip(b *testing.B) {
	s := testSite(b)
	h := New(s)
	r := httptest.NewRequest("GET", "/apis/AlterConfigs/", nil)
	r.Header.Set("Accept-Encoding", "gzip, deflate")
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, r)
	}
}

type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// TestServeShutdownCutsOff stops serving while a request runs past the
// shutdown timeout: Serve cuts it off (its connection closed, so its
// handler's context ends) and says so, rather than returning with the
// request still running.
func TestServeShutdownCutsOff(t *testing.T) {
	srv := New(testSite(t))
	srv.Limits.ShutdownTimeout = 100 * time.Millisecond
	started, ended := make(chan struct{}), make(chan struct{})
	srv.Handle("GET /api/stuck", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
		close(ended)
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	go func() {
		if resp, err := http.Get("http://" + ln.Addr().String() + "/api/stuck"); err == nil {
			resp.Body.Close()
		}
	}()
	<-started
	cancel()
	select {
	case err := <-served:
		if err == nil || !strings.Contains(err.Error(), "cut off") {
			t.Errorf("Serve: %v; want an error saying the request was cut off", err)
		}
	case <-time.After(testdeadline.Remaining(t)):
		t.Fatal("Serve did not return after cancel")
	}
	select {
	case <-ended:
	case <-time.After(safetyNet):
		t.Fatal("the request still runs after Serve returned")
	}
}
