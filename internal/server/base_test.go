package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/release"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/site"
)

// TestBasePath serves a site built under /p/: site paths answer under the
// prefix only, redirects keep it, dynamic HTML pages get relative links
// and the decode API answers what Decoder.DecodeAnswer gives.
func TestBasePath(t *testing.T) {
	reg, err := schema.Load(spec43)
	if err != nil {
		t.Fatal(err)
	}
	st, err := site.Build(site.Options{Releases: []*release.Release{{Label: "4.3", Codec: codec.New(reg)}}, DecodePage: true, BasePath: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Base != "/p/" {
		t.Fatalf("base %q", st.Base)
	}
	srv := New(st)
	d := RegisterDecode(srv, st)
	srv.Handle("GET /dyn/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", site.TypeHTML)
		w.Write([]byte(`<a href="/apis/Fetch/">f</a> <a href="#x">x</a> ` + r.URL.Path))
	}))

	// A handler that answers HEAD as net/http's handlers do: the headers
	// of GET, Content-Length included, and no body.
	srv.Handle("GET /dyn2/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := `<a href="/apis/Fetch/">f</a>`
		w.Header().Set("Content-Type", site.TypeHTML)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if r.Method != http.MethodHead {
			w.Write([]byte(body))
		}
	}))

	w := do(t, srv, "GET", "/p/apis/AlterConfigs/", nil)
	a, _ := st.Lookup("/apis/AlterConfigs/")
	if w.Code != 200 || w.Body.String() != string(a.Body) || !strings.Contains(w.Body.String(), `href="../../static/site.css"`) {
		t.Errorf("GET /p/apis/AlterConfigs/: %d, relative links %v", w.Code, strings.Contains(w.Body.String(), `href="../../static/site.css"`))
	}
	checkSecurity(t, w)
	w = do(t, srv, "GET", "/apis/AlterConfigs/", nil)
	if w.Code != 404 || !strings.Contains(w.Body.String(), `href="/p/static/site.css"`) {
		t.Errorf("GET outside the prefix: %d, want 404 with links under /p/", w.Code)
	}
	for from, to := range map[string]string{"/p": "/p/", "/p/apis/AlterConfigs": "/p/apis/AlterConfigs/", "/p/apis/AlterConfigs?a=1": "/p/apis/AlterConfigs/?a=1"} {
		if w := do(t, srv, "GET", from, nil); w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != to {
			t.Errorf("GET %s: %d to %q, want 301 to %s", from, w.Code, w.Header().Get("Location"), to)
		}
	}
	w = do(t, srv, "GET", "/p/dyn/a/", nil)
	if got := w.Body.String(); w.Code != 200 || got != `<a href="../../apis/Fetch/">f</a> <a href="#x">x</a> /dyn/a/` || w.Header().Get("Content-Length") != strconv.Itoa(len(got)) {
		t.Errorf("dynamic page: %d %q (length %s)", w.Code, got, w.Header().Get("Content-Length"))
	}

	// HEAD of a dynamic page gives GET's headers: the length of the
	// relinked body, not of nothing.
	get, head := do(t, srv, "GET", "/p/dyn2/x/", nil), do(t, srv, "HEAD", "/p/dyn2/x/", nil)
	if got := get.Body.String(); get.Code != 200 || got != `<a href="../../apis/Fetch/">f</a>` || get.Header().Get("Content-Length") != strconv.Itoa(len(got)) {
		t.Errorf("GET of a dynamic page: %d %q (length %s)", get.Code, got, get.Header().Get("Content-Length"))
	}
	if head.Code != 200 || head.Body.Len() != 0 || head.Header().Get("Content-Length") != get.Header().Get("Content-Length") {
		t.Errorf("HEAD of a dynamic page: %d, %d body bytes, Content-Length %q; want 200, none, %q",
			head.Code, head.Body.Len(), head.Header().Get("Content-Length"), get.Header().Get("Content-Length"))
	}

	const hex = "00000015002100020000000000000002000102010100000000"
	r := httptest.NewRequest("POST", "/p/api/decode", strings.NewReader(`{"hex":"`+hex+`"}`))
	r.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, r)
	want, err := json.Marshal(d.DecodeAnswer(DecodeRequest{Hex: hex}))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Code != 200 || rec.Body.String() != string(want) || !strings.Contains(string(want), "AlterConfigsResource[0]") {
		t.Errorf("POST /p/api/decode: %d, answer equals DecodeAnswer: %v", rec.Code, rec.Body.String() == string(want))
	}
	var enc Answer
	if err := json.Unmarshal(want, &enc); err != nil || len(enc.Frames) != 1 {
		t.Fatalf("answer %s", want)
	}
	f := enc.Frames[0]
	back := d.EncodeAnswer(EncodeRequest{Kind: "request", API: "AlterConfigs", Version: 2, CorrelationID: f.CorrelationID, ClientID: f.ClientID, Body: f.Body})
	if back.Error != "" || len(back.Frames) != 1 || back.Frames[0].Hex != hex {
		t.Errorf("EncodeAnswer of the decoded body: %q %v", back.Error, back.Frames)
	}
	if bad := d.EncodeAnswer(EncodeRequest{Kind: "request", API: "NoSuchAPI", Body: f.Body}); bad.Error == "" || len(bad.Frames) != 0 {
		t.Errorf("EncodeAnswer of an unknown API: %+v", bad)
	}
}

// TestBasePathPendingAnswers is TestPendingAnswersBounded's form case
// under a base path, where the page's links are rewritten on the way
// out: the large page counts as pending until it is written to its
// client, not only until the handler has handed it over.
func TestBasePathPendingAnswers(t *testing.T) {
	reg, err := schema.Load(spec43)
	if err != nil {
		t.Fatal(err)
	}
	st, err := site.Build(site.Options{Releases: []*release.Release{{Label: "4.3", Codec: codec.New(reg)}}, DecodePage: true, BasePath: "p"})
	if err != nil {
		t.Fatal(err)
	}
	srv := New(st)
	d := RegisterDecode(srv, st)
	body := `{"Topics":[` + strings.TrimSuffix(strings.Repeat("{},", 500), ",") + `]}`
	form := url.Values{"op": {"encode"}, "kind": {"request"}, "api": {"CreateTopics"}, "version": {"7"}, "correlation_id": {"0"}, "body": {body}}
	formPost := func() *http.Request {
		r := httptest.NewRequest("POST", "/p/decode/", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return r
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, formPost())
	size := rec.Body.Len()
	if rec.Code != http.StatusOK || size <= MaxDecodeBody || !strings.Contains(rec.Body.String(), `href="../static/site.css"`) {
		t.Fatalf("the large page: %d, %d bytes; want 200, more than %d, relative links", rec.Code, size, MaxDecodeBody)
	}
	d.MaxPending = size + size/2

	stalled := newStalledWriter()
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeHTTP(stalled, formPost())
	}()
	select {
	case <-stalled.started:
	case <-time.After(safetyNet):
		t.Fatal("the stalled request was never answered")
	}
	rec = httptest.NewRecorder()
	srv.ServeHTTP(rec, formPost())
	close(stalled.release)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("a second large page while one waits for its client: %d; want 503 with Retry-After", rec.Code)
	}
	select {
	case <-done:
	case <-time.After(safetyNet):
		t.Fatal("the stalled request never finished")
	}
	if stalled.code != http.StatusOK || stalled.body.Len() != size {
		t.Errorf("the stalled page: %d, %d bytes; want 200, %d", stalled.code, stalled.body.Len(), size)
	}
	if n := d.pending.Load(); n != 0 {
		t.Errorf("%d bytes still counted as pending", n)
	}
}
