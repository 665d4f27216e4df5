package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// stalledPost is a POST to path whose body of n announced bytes is still
// arriving (n < 0: chunked, no length announced).
func stalledPost(path string, n int64) (*http.Request, *stalledBody) {
	body := &stalledBody{started: make(chan struct{}), release: make(chan struct{})}
	r := httptest.NewRequest("POST", path, body)
	r.ContentLength = n
	if path == "/decode/" {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r.Header.Set("Content-Type", "application/json")
	}
	return r, body
}

// countedPost is a POST to path of an n-byte body that counts what is read
// of it.
func countedPost(path string, n int64) (*http.Request, *countingReader) {
	cr := &countingReader{limit: int(max(n, 1<<10))}
	r := httptest.NewRequest("POST", path, cr)
	r.ContentLength = n
	if path == "/decode/" {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r.Header.Set("Content-Type", "application/json")
	}
	return r, cr
}

// TestBodiesBounded fills the budget of request bodies with bodies still
// arriving, one on each decode handler: a further request is answered 503
// with Retry-After before any of its body is read, whichever handler it
// posts to, and whether or not it announces its length. The bodies read
// at once used to have no bound but the number of connections.
func TestBodiesBounded(t *testing.T) {
	srv := New(testSite(t))
	d := RegisterDecode(srv, testSite(t))
	const each = 1000
	d.MaxBodies = 3 * each
	paths := []string{"/api/decode", "/api/encode", "/decode/"}
	var wg sync.WaitGroup
	var bodies []*stalledBody
	for _, p := range paths {
		r, body := stalledPost(p, each)
		bodies = append(bodies, body)
		wg.Go(func() { srv.ServeHTTP(httptest.NewRecorder(), r) })
		select {
		case <-body.started:
		case <-time.After(safetyNet):
			t.Fatalf("POST %s never read its body", p)
		}
	}
	if got := d.bodies.used.Load(); got != 3*each {
		t.Errorf("three bodies of %d bytes arriving: %d bytes counted, want %d", each, got, 3*each)
	}
	for _, p := range paths {
		for _, n := range []int64{1, -1} {
			r, cr := countedPost(p, n)
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, r)
			if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" || cr.n != 0 {
				t.Errorf("POST %s (length %d) with the budget full: %d, Retry-After %q, %d bytes read; want 503, 1, none", p, n, w.Code, w.Header().Get("Retry-After"), cr.n)
			}
			checkSecurity(t, w)
			if p != "/decode/" {
				var a Answer
				if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil || !strings.Contains(a.Error, "request bodies") {
					t.Errorf("POST %s with the budget full: %q (%v)", p, w.Body.String(), err)
				}
			}
		}
	}
	for _, b := range bodies {
		close(b.release)
	}
	wg.Wait()
	if used, peak := d.bodies.used.Load(), d.bodies.peak.Load(); used != 0 || peak != 3*each {
		t.Errorf("after the bodies: %d bytes counted, peak %d; want 0 and %d", used, peak, 3*each)
	}
	w, a := postJSON(t, srv, "/api/decode", DecodeRequest{Hex: "00"})
	if w.Code == http.StatusServiceUnavailable {
		t.Errorf("with the budget free again: 503 %q", a.Error)
	}
}

// TestChunkedBodyCountsWhole: a body that announces no length counts as
// the largest (MaxDecodeBody) while it is read.
func TestChunkedBodyCountsWhole(t *testing.T) {
	srv := New(testSite(t))
	d := RegisterDecode(srv, testSite(t))
	d.MaxBodies = MaxDecodeBody + 100
	r, body := stalledPost("/api/decode", -1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeHTTP(httptest.NewRecorder(), r)
	}()
	select {
	case <-body.started:
	case <-time.After(safetyNet):
		t.Fatal("the chunked post never read its body")
	}
	if got := d.bodies.used.Load(); got != MaxDecodeBody {
		t.Errorf("a chunked body arriving: %d bytes counted, want %d", got, MaxDecodeBody)
	}
	r, cr := countedPost("/api/decode", 101)
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable || cr.n != 0 {
		t.Errorf("101 bytes beside a chunked body, budget %d: %d after reading %d bytes; want 503 before reading", d.MaxBodies, w.Code, cr.n)
	}
	// What fits beside it is read and answered.
	hexBody := mustJSON(t, DecodeRequest{Hex: "0000"})
	if len(hexBody) > 100 {
		t.Fatalf("request of %d bytes", len(hexBody))
	}
	w = httptest.NewRecorder()
	srv.ServeHTTP(w, newJSONRequest("/api/decode", hexBody))
	if w.Code == http.StatusServiceUnavailable {
		t.Errorf("%d bytes beside a chunked body, budget %d: 503 %s", len(hexBody), d.MaxBodies, w.Body.String())
	}
	close(body.release)
	<-done
	if got := d.bodies.used.Load(); got != 0 {
		t.Errorf("all answered: %d bytes still counted", got)
	}
}

// TestManyBodiesBounded posts many bodies at once against a budget for
// five: five are read, the others answered 503 at once, and the bytes
// counted never pass the budget.
func TestManyBodiesBounded(t *testing.T) {
	srv := New(testSite(t))
	d := RegisterDecode(srv, testSite(t))
	const each, room, clients = 4 << 10, 5, 40
	d.MaxBodies = room * each
	var wg sync.WaitGroup
	codes := make(chan int, clients)
	var bodies []*stalledBody
	for i := range clients {
		r, body := stalledPost([]string{"/api/decode", "/decode/"}[i%2], each)
		bodies = append(bodies, body)
		wg.Go(func() {
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, r)
			codes <- w.Code
		})
	}
	refused := 0
	for refused < clients-room {
		select {
		case c := <-codes:
			if c != http.StatusServiceUnavailable {
				t.Fatalf("a body beyond the budget: %d, want 503", c)
			}
		case <-time.After(safetyNet):
			t.Fatalf("%d bodies beyond the budget refused, want %d", refused, clients-room)
		}
		refused++
	}
	if used := d.bodies.used.Load(); used != room*each {
		t.Errorf("%d bodies arriving: %d bytes counted, want %d", room, used, room*each)
	}
	for _, b := range bodies {
		close(b.release)
	}
	wg.Wait()
	if used, peak := d.bodies.used.Load(), d.bodies.peak.Load(); used != 0 || peak > int64(d.MaxBodies) {
		t.Errorf("%d bytes still counted, peak %d; want 0 and at most %d", used, peak, d.MaxBodies)
	}
}
