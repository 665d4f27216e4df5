package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/manifester/manifester/internal/site"
)

// fakePages renders /p/<n>/ (n a number without leading zeros) as an HTML
// page of about size(n) bytes that links to "/"; /p/0<n>/ is another
// spelling of it. It counts its renders and the most at once; with block
// set, each render tells started and waits for block to close.
type fakePages struct {
	size    func(n int) int
	started chan string
	block   chan struct{}

	mu           sync.Mutex
	inFlight     int
	peakInFlight int
	renders      map[string]int
}

func newFakePages(size func(int) int) *fakePages {
	return &fakePages{size: size, renders: map[string]int{}}
}

func (f *fakePages) Canonical(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/p/")
	num, ok2 := strings.CutSuffix(rest, "/")
	n, err := strconv.Atoi(num)
	if !ok || !ok2 || err != nil || n < 0 {
		return "", false
	}
	return fmt.Sprintf("/p/%d/", n), true
}

func (f *fakePages) Render(ctx context.Context, p string) ([]byte, error) {
	f.mu.Lock()
	f.inFlight++
	f.peakInFlight = max(f.peakInFlight, f.inFlight)
	f.renders[p]++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	if f.block != nil {
		f.started <- p
		select {
		case <-f.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	n, _ := strconv.Atoi(strings.Trim(strings.TrimPrefix(p, "/p/"), "/"))
	var b bytes.Buffer
	fmt.Fprintf(&b, `<!doctype html><title>page %d</title><a href="/">home</a><p>`, n)
	for i := 0; b.Len() < f.size(n); i++ {
		fmt.Fprintf(&b, "%d %x ", i, i*n*2654435761) // some entropy, so gzip keeps some bytes
	}
	return b.Bytes(), nil
}

func (f *fakePages) peak() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.peakInFlight
}

func (f *fakePages) count(p string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.renders[p]
}

// pagesServer serves the small site with f's pages at /p/.
func pagesServer(t *testing.T, f *fakePages, p *Pages) *Server {
	t.Helper()
	p.Source = f
	srv := New(smallSiteWith(t, site.Options{}))
	srv.HandlePages("GET /p/{n}/", p)
	return srv
}

// TestPagesCap holds two renders in progress with a cap of two and a
// queue of one: a third request waits, a fourth is answered 503 with
// Retry-After without rendering, and no more than two render at once.
func TestPagesCap(t *testing.T) {
	f := newFakePages(func(int) int { return 100 })
	f.started, f.block = make(chan string, 8), make(chan struct{})
	p := &Pages{MaxConcurrent: 2, MaxQueued: 1, QueueWait: safetyNet}
	addr := serveLocal(t, pagesServer(t, f, p))
	codes := make(chan int, 3)
	get := func(n int) {
		resp, err := http.Get(fmt.Sprintf("http://%s/p/%d/", addr, n))
		if err != nil {
			t.Error(err)
			codes <- 0
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes <- resp.StatusCode
	}
	go get(1)
	go get(2)
	<-f.started
	<-f.started
	go get(3)
	for deadline := time.Now().Add(safetyNet); p.queued.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if p.queued.Load() == 0 {
		close(f.block)
		t.Fatalf("a third request did not wait for one of two slots (%d rendering at once)", f.peak())
	}
	resp, err := http.Get(fmt.Sprintf("http://%s/p/4/", addr))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" || !strings.Contains(string(body), "retry") {
		t.Errorf("beyond the cap and the queue: %d, Retry-After %q, %q", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	close(f.block)
	<-f.started // the queued one, once a slot is free
	for range 3 {
		if code := <-codes; code != http.StatusOK {
			t.Errorf("a request within the cap or the queue: %d, want 200", code)
		}
	}
	if f.peak() != 2 || f.count("/p/4/") != 0 {
		t.Errorf("%d rendered at once (want 2); the refused page rendered %d times", f.peak(), f.count("/p/4/"))
	}
	if len(p.slots) != 0 || p.queued.Load() != 0 {
		t.Errorf("%d slots held, %d queued after the requests", len(p.slots), p.queued.Load())
	}
}

// TestPagesClientGone: a request waiting for a slot whose client goes
// away leaves the queue, renders nothing and answers nothing.
func TestPagesClientGone(t *testing.T) {
	f := newFakePages(func(int) int { return 100 })
	p := &Pages{MaxConcurrent: 1, MaxQueued: 1, QueueWait: safetyNet}
	srv := pagesServer(t, f, p)
	p.once.Do(p.init)
	if !p.acquire(context.Background()) { // the one slot, held by the test
		t.Fatal("no slot")
	}
	defer p.release()
	ctx, cancel := context.WithCancel(context.Background())
	r := httptest.NewRequest("GET", "/p/1/", nil).WithContext(ctx)
	w := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { srv.ServeHTTP(w, r); close(done) }()
	for deadline := time.Now().Add(safetyNet); p.queued.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	if f.count("/p/1/") != 0 || w.Body.Len() != 0 || p.queued.Load() != 0 {
		t.Errorf("after the client went away: %d renders, %d bytes answered, %d queued", f.count("/p/1/"), w.Body.Len(), p.queued.Load())
	}
}

// TestPagesCached: the same page asked twice is rendered once and served
// with the same bytes and ETag; it is answered as the site's own pages
// are (Cache-Control: no-cache, Vary, gzip when accepted, 304 for its
// ETag, HEAD), and another spelling of its path is redirected.
func TestPagesCached(t *testing.T) {
	f := newFakePages(func(int) int { return 20 << 10 })
	p := &Pages{}
	srv := pagesServer(t, f, p)
	first := do(t, srv, "GET", "/p/7/", nil)
	second := do(t, srv, "GET", "/p/7/", nil)
	if first.Code != 200 || !bytes.Equal(first.Body.Bytes(), second.Body.Bytes()) || first.Header().Get("ETag") != second.Header().Get("ETag") {
		t.Fatalf("twice: %d and %d, %d and %d bytes, ETag %q and %q", first.Code, second.Code, first.Body.Len(), second.Body.Len(),
			first.Header().Get("ETag"), second.Header().Get("ETag"))
	}
	checkSecurity(t, first)
	h := first.Header()
	if h.Get("Cache-Control") != "no-cache" || h.Get("Vary") != "Accept-Encoding" || h.Get("Content-Type") != site.TypeHTML ||
		h.Get("Content-Length") != strconv.Itoa(first.Body.Len()) || h.Get("ETag") == "" {
		t.Errorf("headers %v", h)
	}
	gz := do(t, srv, "GET", "/p/7/", map[string]string{"Accept-Encoding": "gzip"})
	zr, err := gzip.NewReader(gz.Body)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || gz.Header().Get("Content-Encoding") != "gzip" || !bytes.Equal(plain, first.Body.Bytes()) ||
		gz.Header().Get("ETag") == h.Get("ETag") {
		t.Errorf("gzip: %v, Content-Encoding %q, ETag %q; inflated equal: %v", err, gz.Header().Get("Content-Encoding"), gz.Header().Get("ETag"), bytes.Equal(plain, first.Body.Bytes()))
	}
	if w := do(t, srv, "GET", "/p/7/", map[string]string{"If-None-Match": h.Get("ETag")}); w.Code != http.StatusNotModified || w.Body.Len() != 0 {
		t.Errorf("If-None-Match: %d, %d bytes; want 304", w.Code, w.Body.Len())
	}
	if w := do(t, srv, "HEAD", "/p/7/", nil); w.Code != 200 || w.Body.Len() != 0 || w.Header().Get("Content-Length") != h.Get("Content-Length") {
		t.Errorf("HEAD: %d, %d bytes, Content-Length %q", w.Code, w.Body.Len(), w.Header().Get("Content-Length"))
	}
	if w := do(t, srv, "GET", "/p/007/?x=1", nil); w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != "/p/7/?x=1" {
		t.Errorf("another spelling: %d to %q", w.Code, w.Header().Get("Location"))
	}
	if w := do(t, srv, "GET", "/p/x/", nil); w.Code != http.StatusNotFound {
		t.Errorf("a path the source does not name: %d", w.Code)
	}
	if n := f.count("/p/7/"); n != 1 || p.Stats().Renders != 1 {
		t.Errorf("rendered %d times (stats %d), want once", n, p.Stats().Renders)
	}
}

// TestPagesCacheBound renders 300 distinct pages of various sizes into a
// cache of 256 KiB: its bytes never pass the bound, pages larger than an
// eighth of it are not kept (rendered again when asked again), and every
// answer is the page.
func TestPagesCacheBound(t *testing.T) {
	const bound = 256 << 10
	size := func(n int) int { return 1<<10 + n*n%(40<<10) }
	f := newFakePages(size)
	p := &Pages{CacheBytes: bound}
	srv := pagesServer(t, f, p)
	large := 0
	for n := range 300 {
		w := do(t, srv, "GET", fmt.Sprintf("/p/%d/", n), nil)
		if w.Code != 200 || !bytes.Contains(w.Body.Bytes(), fmt.Appendf(nil, "<title>page %d</title>", n)) {
			t.Fatalf("/p/%d/: %d", n, w.Code)
		}
		if st := p.Stats(); st.CacheBytes > bound {
			t.Fatalf("after /p/%d/: the cache holds %d bytes, over its %d", n, st.CacheBytes, bound)
		}
		if size(n) > bound/8 {
			large++
			do(t, srv, "GET", fmt.Sprintf("/p/%d/", n), nil)
			if c := f.count(fmt.Sprintf("/p/%d/", n)); c != 2 {
				t.Errorf("/p/%d/ (%d bytes) rendered %d times, want 2 (not kept)", n, size(n), c)
			}
		}
	}
	st := p.Stats()
	if st.PeakCacheBytes > bound || st.Cached >= 300 || st.Cached == 0 || large == 0 {
		t.Errorf("peak %d bytes of %d; %d pages kept; %d too large", st.PeakCacheBytes, bound, st.Cached, large)
	}
}

// TestPagesEviction: with room for three pages, the least recently used
// one goes out first.
func TestPagesEviction(t *testing.T) {
	f := newFakePages(func(int) int { return 4 << 10 })
	p := &Pages{}
	srv := pagesServer(t, f, p)
	get := func(n int) {
		if w := do(t, srv, "GET", fmt.Sprintf("/p/%d/", n), nil); w.Code != 200 {
			t.Fatalf("/p/%d/: %d", n, w.Code)
		}
	}
	get(1)
	// Room for three pages of about the size of the first, not four.
	p.cache.mu.Lock()
	p.cache.limit = p.cache.used * 7 / 2
	p.cache.maxEntry = p.cache.limit
	p.cache.mu.Unlock()
	for _, n := range []int{2, 3, 1, 4} { // 4 puts out 2, the least recently used
		get(n)
	}
	if st := p.Stats(); st.Cached != 3 {
		t.Fatalf("%d pages kept, want 3", st.Cached)
	}
	for _, n := range []int{1, 3, 4} {
		get(n)
	}
	get(2)
	for n, want := range map[int]int{1: 1, 2: 2, 3: 1, 4: 1} {
		if got := f.count(fmt.Sprintf("/p/%d/", n)); got != want {
			t.Errorf("/p/%d/ rendered %d times, want %d", n, got, want)
		}
	}
}

// TestPagesBasePath: under a base path, a page's links are relinked as
// the site's own pages' are, once (the cached copy too), and redirects go
// under the base path.
func TestPagesBasePath(t *testing.T) {
	f := newFakePages(func(int) int { return 100 })
	srv := New(smallSiteWith(t, site.Options{BasePath: "/kafka/"}))
	srv.HandlePages("GET /p/{n}/", &Pages{Source: f})
	for range 2 {
		w := do(t, srv, "GET", "/kafka/p/5/", nil)
		if w.Code != 200 || !strings.Contains(w.Body.String(), `<a href="../../">home</a>`) {
			t.Errorf("under /kafka/: %d, %q", w.Code, w.Body.String()[:min(120, w.Body.Len())])
		}
	}
	if w := do(t, srv, "GET", "/kafka/p/05/", nil); w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != "/kafka/p/5/" {
		t.Errorf("another spelling: %d to %q", w.Code, w.Header().Get("Location"))
	}
	if f.count("/p/5/") != 1 {
		t.Errorf("rendered %d times", f.count("/p/5/"))
	}
}

// TestPagesPending: a page too large to keep is refused 503 when the
// bytes of such pages being sent would pass MaxPending.
func TestPagesPending(t *testing.T) {
	f := newFakePages(func(int) int { return 64 << 10 })
	p := &Pages{CacheBytes: 64 << 10, MaxPending: 32 << 10}
	srv := pagesServer(t, f, p)
	w := do(t, srv, "GET", "/p/1/", nil)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Errorf("a page over the pending bound: %d", w.Code)
	}
	p.pending.limit = 1 << 20
	if w := do(t, srv, "GET", "/p/1/", nil); w.Code != 200 || p.pending.used.Load() != 0 {
		t.Errorf("within the bound: %d, %d bytes still counted", w.Code, p.pending.used.Load())
	}
}
