package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestEveryAnswerHeaders sends a request for every kind of answer the
// server gives (page, HEAD, redirect, 304, 404, 405, the decode API's
// 200, 400, 404, 405, 413, 415 and 503, the form's page and 503): each
// carries the security headers, and each with a body its Content-Type.
// (A 307 of http.ServeMux, to the clean form of a path posted to, has
// neither body nor Content-Type.)
func TestEveryAnswerHeaders(t *testing.T) {
	srv := New(testSite(t))
	RegisterDecode(srv, testSite(t))
	srv.Handle("GET /apis/{name}/diff/{pair}/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<p>diff</p>"))
	}))
	a, _ := testSite(t).Lookup("/")
	type req struct {
		method, path, ctype, body string
		hdr                       map[string]string
	}
	reqs := []req{
		{method: "GET", path: "/"},
		{method: "HEAD", path: "/"},
		{method: "GET", path: "/static/site.css"},
		{method: "GET", path: "/", hdr: map[string]string{"If-None-Match": a.ETag}},
		{method: "GET", path: "/apis/AlterConfigs"},
		{method: "HEAD", path: "/apis/AlterConfigs"},
		{method: "GET", path: "/no/such/page/"},
		{method: "POST", path: "/no/such/page/"},
		{method: "POST", path: "/"},
		{method: "DELETE", path: "/apis/Fetch/diff/v3..v1/"},
		{method: "GET", path: "/apis/Fetch/diff/v3..v1/"},
		{method: "GET", path: "/api/decode"},
		{method: "GET", path: "/api/nothing"},
		{method: "POST", path: "/api/decode", ctype: "text/plain", body: "x"},
		{method: "POST", path: "/api/decode", ctype: "application/json", body: "{"},
		{method: "POST", path: "/api/decode", ctype: "application/json", body: `{"hex": "00"}`},
		{method: "POST", path: "/api/decode", ctype: "application/json", body: strings.Repeat(" ", MaxDecodeBody+1)},
		{method: "POST", path: "/api//decode", ctype: "application/json", body: `{"hex": "00"}`},
		{method: "POST", path: "/decode/", ctype: "application/x-www-form-urlencoded", body: "hex=00"},
	}
	check := func(r req, w *httptest.ResponseRecorder) {
		t.Helper()
		for k, v := range SecurityHeaders {
			if got := w.Header().Get(k); got != v {
				t.Errorf("%s %s (%d): %s %q, want %q", r.method, r.path, w.Code, k, got, v)
			}
		}
		if (w.Body.Len() > 0 || r.method == "HEAD" && w.Code != http.StatusNotModified) && w.Header().Get("Content-Type") == "" {
			t.Errorf("%s %s (%d): no Content-Type", r.method, r.path, w.Code)
		}
	}
	send := func(r req) *httptest.ResponseRecorder {
		hr := httptest.NewRequest(r.method, r.path, strings.NewReader(r.body))
		if r.ctype != "" {
			hr.Header.Set("Content-Type", r.ctype)
		}
		for k, v := range r.hdr {
			hr.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, hr)
		return w
	}
	for _, r := range reqs {
		check(r, send(r))
	}
	// 503s: no room for bodies.
	srv = New(testSite(t))
	RegisterDecode(srv, testSite(t)).MaxBodies = 1
	for _, r := range []req{
		{method: "POST", path: "/api/decode", ctype: "application/json", body: `{"hex": "00"}`},
		{method: "POST", path: "/decode/", ctype: "application/x-www-form-urlencoded", body: "hex=00"},
	} {
		w := send(r)
		if w.Code != http.StatusServiceUnavailable {
			t.Errorf("%s %s with no room for bodies: %d", r.method, r.path, w.Code)
		}
		check(r, w)
	}
}
