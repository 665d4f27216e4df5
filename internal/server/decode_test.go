package server

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/records"
	"github.com/manifester/manifester/internal/report"
)

// kmsgAlterConfigs is AlterConfigs v2 with one resource and one config,
// encoded by franz-go's kmsg.
func kmsgAlterConfigs(validateOnly bool) []byte {
	req := kmsg.NewPtrAlterConfigsRequest()
	req.Version = 2
	req.ValidateOnly = validateOnly
	res := kmsg.NewAlterConfigsRequestResource()
	res.ResourceName = "topic-a"
	res.ResourceType = 2
	cfg := kmsg.NewAlterConfigsRequestResourceConfig()
	cfg.Name = "retention.ms"
	v := "1000"
	cfg.Value = &v
	res.Configs = append(res.Configs, cfg)
	req.Resources = append(req.Resources, res)
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("cli")).AppendRequest(nil, req, 7)
}

func decodeServer(t *testing.T) *Server {
	t.Helper()
	srv := New(testSite(t))
	RegisterDecode(srv, testSite(t))
	return srv
}

func postJSON(t *testing.T, h http.Handler, path string, v any) (*httptest.ResponseRecorder, Answer) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("POST", path, bytes.NewReader(b))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var a Answer
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil {
		t.Fatalf("%s answered non-JSON %q: %v", path, w.Body.String(), err)
	}
	return w, a
}

// cells parses an answer's markup and returns the byte cells' text.
func cells(t *testing.T, markup string) []string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader("<body>" + markup))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == atom.Td {
			for _, a := range n.Attr {
				if a.Key == "class" && strings.HasPrefix(a.Val, "b ") && n.FirstChild != nil {
					out = append(out, n.FirstChild.Data)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}

func TestDecodeAPIRequest(t *testing.T) {
	srv := decodeServer(t)
	frame := kmsgAlterConfigs(false)
	// Two frames back to back, spaced hex.
	in := hex.EncodeToString(append(append([]byte{}, frame...), frame...))
	w, a := postJSON(t, srv, "/api/decode", map[string]any{"hex": in, "kind": "request"})
	if w.Code != 200 || len(a.Frames) != 2 {
		t.Fatalf("decode: %d, %d frames, error %q", w.Code, len(a.Frames), a.Error)
	}
	checkSecurity(t, w)
	f := a.Frames[1]
	if f.API != "AlterConfigs" || f.Version != 2 || f.CorrelationID != 7 || f.Error != "" || f.Offset != int64(len(frame)) {
		t.Errorf("frame 1: %s v%d corr %d offset %d error %q", f.API, f.Version, f.CorrelationID, f.Offset, f.Error)
	}
	if f.ClientID == nil || *f.ClientID != "cli" {
		t.Errorf("client id %v", f.ClientID)
	}
	var body struct {
		Resources []struct {
			ResourceName string
			Configs      []struct{ Name, Value string }
		}
	}
	if err := json.Unmarshal(f.Body, &body); err != nil || len(body.Resources) != 1 || body.Resources[0].ResourceName != "topic-a" ||
		body.Resources[0].Configs[0].Value != "1000" {
		t.Errorf("body %s (%v)", f.Body, err)
	}
	got := cells(t, f.HTML)
	if len(got) != len(frame) {
		t.Fatalf("frame 1 markup has %d cells, the frame %d bytes", len(got), len(frame))
	}
	for i, c := range got {
		if c != hex.EncodeToString(frame[i:i+1]) {
			t.Errorf("cell %d shows %s, frame has %02x", i, c, frame[i])
		}
	}
	if !strings.Contains(f.HTML, `id="f1"`) || !strings.Contains(f.HTML, `id="f1:`) {
		t.Errorf("frame 1 markup does not use the f1 ids")
	}
}

func TestDecodeAPIResponseAndErrors(t *testing.T) {
	srv := decodeServer(t)
	resp := kmsg.NewPtrAlterConfigsResponse()
	resp.Version = 2
	resp.ThrottleMillis = 5
	b := resp.AppendTo(nil)
	// Response frame: size, correlation id, header tagged fields (v1), body.
	frame := append([]byte{0, 0, 0, byte(5 + len(b)), 0, 0, 0, 9, 0}, b...)

	// Without its API, the frame is answered with the APIs and versions
	// that explain it (as the CLI and a capture's lost request do), this
	// AlterConfigs v2 response's among them; with a version but no API,
	// the request is refused.
	w, a := postJSON(t, srv, "/api/decode", map[string]any{"hex": hex.EncodeToString(frame), "kind": "response"})
	if w.Code != 200 || len(a.Frames) != 1 || !strings.Contains(a.Frames[0].Warning, "does not name its API") ||
		!slices.Contains(a.Frames[0].Candidates, report.Candidate{APIKey: 33, Name: "AlterConfigs", Version: 2}) ||
		!strings.Contains(a.Frames[0].HTML, "response (API unknown: not given) correlation_id 9") ||
		!strings.Contains(a.Frames[0].HTML, `<p class="note">warning: a response does not name its API or version`) ||
		!strings.Contains(a.Frames[0].HTML, `<p class="note">candidates (decode cleanly and re-encode byte for byte): `) ||
		!strings.Contains(a.Frames[0].HTML, "and 45 more (the search stops at 50)</p>") {
		t.Errorf("response without API: %d %q %+v", w.Code, a.Error, a.Frames)
	}
	// Given as a request, it fails, and the page says that it reads as a
	// response.
	w, a = postJSON(t, srv, "/api/decode", map[string]any{"hex": hex.EncodeToString(frame)})
	if w.Code != 200 || len(a.Frames) != 1 || a.Frames[0].Error == "" || !slices.Contains(a.Frames[0].AsResponse, report.Candidate{APIKey: 33, Name: "AlterConfigs", Version: 2}) ||
		!strings.Contains(a.Frames[0].HTML, `<p class="note">it may be a response: as one it decodes cleanly and re-encodes as `) {
		t.Errorf("response as a request: %d %q %+v", w.Code, a.Error, a.Frames)
	}
	w, a = postJSON(t, srv, "/api/decode", map[string]any{"hex": hex.EncodeToString(frame), "kind": "response", "version": 2})
	if w.Code != 400 || !strings.Contains(a.Error, "API") {
		t.Errorf("response with a version and no API: %d %q", w.Code, a.Error)
	}
	w, a = postJSON(t, srv, "/api/decode", map[string]any{"hex": hex.EncodeToString(frame), "kind": "response", "api": "33", "version": 7})
	if w.Code != 400 || !strings.Contains(a.Error, "valid versions are 0-2") {
		t.Errorf("bad version: %d %q", w.Code, a.Error)
	}
	w, a = postJSON(t, srv, "/api/decode", map[string]any{"hex": hex.EncodeToString(frame), "kind": "response", "api": "AlterConfigs", "version": 2})
	if w.Code != 200 || len(a.Frames) != 1 || a.Frames[0].Error != "" || a.Frames[0].CorrelationID != 9 {
		t.Fatalf("response decode: %d %+v %q", w.Code, a.Frames, a.Error)
	}
	if !strings.Contains(string(a.Frames[0].Body), `"ThrottleTimeMs":5`) {
		t.Errorf("response body %s", a.Frames[0].Body)
	}

	// A truncated request: the report names the offset; the partial tree
	// and every byte are still shown.
	req := kmsgAlterConfigs(false)
	cut := append([]byte{}, req[:20]...)
	cut[3] = 16 // a size prefix that matches the cut frame
	w, a = postJSON(t, srv, "/api/decode", map[string]any{"hex": hex.EncodeToString(cut)})
	if w.Code != 200 || len(a.Frames) != 1 || a.Frames[0].Error == "" || a.Frames[0].ErrorOffset == nil {
		t.Fatalf("truncated: %d %+v", w.Code, a)
	}
	if n := len(cells(t, a.Frames[0].HTML)); n != 20 {
		t.Errorf("truncated frame shows %d cells, want all 20 bytes", n)
	}

	w, a = postJSON(t, srv, "/api/decode", map[string]any{"hex": "00 0x zz"})
	if w.Code != 400 || !strings.Contains(a.Error, "line 1") {
		t.Errorf("bad hex: %d %q", w.Code, a.Error)
	}
	w, a = postJSON(t, srv, "/api/decode", map[string]any{"hex": "00", "bogus": 1})
	if w.Code != 400 || !strings.Contains(a.Error, "bogus") {
		t.Errorf("unknown JSON field: %d %q", w.Code, a.Error)
	}
	// Whatever follows the request object is refused, not ignored: two
	// objects are not two requests.
	for _, body := range []string{`{"hex": "00"} {"hex": "01"}`, `{"hex": "00"} x`, `{"hex": "00"}]`} {
		w, raw := postRaw(t, srv, "/api/decode", "application/json", []byte(body))
		if err := json.Unmarshal(raw, &a); w != 400 || err != nil || !strings.Contains(a.Error, "after the request") {
			t.Errorf("%s: %d %.200s", body, w, raw)
		}
	}
	if w, raw := postRaw(t, srv, "/api/decode", "application/json", []byte("{\"hex\": \"00\"}\n\t ")); w != 200 {
		t.Errorf("a request object and white space: %d %.200s", w, raw)
	}
	r := httptest.NewRequest("POST", "/api/decode", strings.NewReader("hex=00"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	wr := httptest.NewRecorder()
	srv.ServeHTTP(wr, r)
	if wr.Code != http.StatusUnsupportedMediaType {
		t.Errorf("form post to the JSON API: %d", wr.Code)
	}
}

// countingReader counts what the handler reads.
type countingReader struct {
	n, limit int
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n >= c.limit {
		return 0, io.EOF
	}
	k := min(len(p), c.limit-c.n)
	for i := range p[:k] {
		p[i] = '0'
	}
	c.n += k
	return k, nil
}

func TestDecodeBodyLimit(t *testing.T) {
	srv := decodeServer(t)
	// Announced too large: refused without reading.
	cr := &countingReader{limit: 4 << 20}
	r := httptest.NewRequest("POST", "/api/decode", cr)
	r.ContentLength = int64(cr.limit)
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, r)
	if w.Code != http.StatusRequestEntityTooLarge || cr.n != 0 {
		t.Errorf("announced 4 MiB: %d after reading %d bytes; want 413 after reading none", w.Code, cr.n)
	}
	// Unannounced (chunked): read up to the limit, then refused.
	cr = &countingReader{limit: 4 << 20}
	r = httptest.NewRequest("POST", "/api/decode", cr)
	r.ContentLength = -1
	r.Header.Set("Content-Type", "application/json")
	w = httptest.NewRecorder()
	srv.ServeHTTP(w, r)
	if w.Code != http.StatusRequestEntityTooLarge || cr.n > MaxDecodeBody+64<<10 {
		t.Errorf("chunked 4 MiB: %d after reading %d bytes; want 413 after about %d", w.Code, cr.n, MaxDecodeBody)
	}
	// The form post too.
	cr = &countingReader{limit: 4 << 20}
	r = httptest.NewRequest("POST", "/decode/", cr)
	r.ContentLength = int64(cr.limit)
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w = httptest.NewRecorder()
	srv.ServeHTTP(w, r)
	if w.Code != http.StatusRequestEntityTooLarge || cr.n != 0 {
		t.Errorf("form post of 4 MiB: %d after reading %d", w.Code, cr.n)
	}
}

func TestEncodeAPI(t *testing.T) {
	srv := decodeServer(t)
	frame := kmsgAlterConfigs(false)
	_, a := postJSON(t, srv, "/api/decode", map[string]any{"hex": hex.EncodeToString(frame)})
	if len(a.Frames) != 1 || a.Frames[0].Body == nil {
		t.Fatalf("decode: %+v", a)
	}
	// Edit the decoded body: ValidateOnly true. The re-encoding must be
	// kmsg's encoding of the same request with ValidateOnly set.
	edited := strings.Replace(string(a.Frames[0].Body), `"ValidateOnly":false`, `"ValidateOnly":true`, 1)
	if edited == string(a.Frames[0].Body) {
		t.Fatalf("no ValidateOnly in %s", a.Frames[0].Body)
	}
	cli := "cli"
	w, a := postJSON(t, srv, "/api/encode", EncodeRequest{Kind: "request", API: "AlterConfigs", Version: 2, CorrelationID: 7,
		ClientID: &cli, Body: json.RawMessage(edited), Index: 3})
	if w.Code != 200 || len(a.Frames) != 1 {
		t.Fatalf("encode: %d %q", w.Code, a.Error)
	}
	if want := hex.EncodeToString(kmsgAlterConfigs(true)); a.Frames[0].Hex != want {
		t.Errorf("re-encoded %s\nkmsg       %s", a.Frames[0].Hex, want)
	}
	if !strings.Contains(a.Frames[0].HTML, `id="f3"`) {
		t.Errorf("encode answer does not use the index for its ids")
	}
	w, a = postJSON(t, srv, "/api/encode", EncodeRequest{Kind: "request", API: "AlterConfigs", Version: 2, Body: json.RawMessage(`{"NoSuchField": 1}`)})
	if w.Code != 400 || !strings.Contains(a.Error, "NoSuchField") {
		t.Errorf("bad body: %d %q", w.Code, a.Error)
	}
}

func TestDecodeFormPost(t *testing.T) {
	srv := decodeServer(t)
	frame := kmsgAlterConfigs(false)
	form := url.Values{"op": {"decode"}, "hex": {"0x" + hex.EncodeToString(frame)}, "kind": {"request"}}
	r := httptest.NewRequest("POST", "/decode/", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, r)
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("form post: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	checkSecurity(t, w)
	if n := len(cells(t, w.Body.String())); n != len(frame) {
		t.Errorf("form answer shows %d cells, want %d", n, len(frame))
	}
	if !strings.Contains(w.Body.String(), "ValidateOnly") || !strings.Contains(w.Body.String(), `class="encode"`) {
		t.Errorf("form answer lacks the editable body")
	}
	// GET /decode/ is the static page.
	if g := do(t, srv, "GET", "/decode/", nil); g.Code != 200 || !strings.Contains(g.Body.String(), `id="decode-form"`) {
		t.Errorf("GET /decode/: %d", g.Code)
	}
}

// TestDecodeInflatedRecords decodes a Produce request (kmsg) whose batch
// is gzip-compressed: the answer shows the inflated records in a grid and
// tree of their own.
func TestDecodeInflatedRecords(t *testing.T) {
	srv := New(testSite(t))
	d := RegisterDecode(srv, testSite(t))
	d.Codec.Decompress = compress.Decompressor()
	defer func() { d.Codec.Decompress = nil }()
	// One record: length 11, attributes 0, timestamp and offset deltas 0,
	// null key, value "hello", no headers (zig-zag varints).
	rec := []byte{0x16, 0, 0, 0, 0x01, 0x0a, 'h', 'e', 'l', 'l', 'o', 0}
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(rec)
	zw.Close()
	batch := records.AppendBatch(nil, &records.Batch{Attributes: 1, NumRecords: 1, Records: zb.Bytes()})
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	req.Acks = -1
	tp := kmsg.NewProduceRequestTopic()
	tp.Topic = "t"
	p := kmsg.NewProduceRequestTopicPartition()
	p.Records = batch
	tp.Partitions = append(tp.Partitions, p)
	req.Topics = append(req.Topics, tp)
	frame := kmsg.NewRequestFormatter().AppendRequest(nil, req, 1)

	w, a := postJSON(t, srv, "/api/decode", map[string]any{"hex": hex.EncodeToString(frame)})
	if w.Code != 200 || len(a.Frames) != 1 || a.Frames[0].Error != "" {
		t.Fatalf("decode: %d %+v", w.Code, a)
	}
	markup := a.Frames[0].HTML
	i := strings.Index(markup, `id="f0-z0"`)
	if i < 0 {
		t.Fatalf("no inflated-records section in the answer")
	}
	if got := cells(t, markup[i-len(`<section `):]); strings.Join(got, "") != hex.EncodeToString(rec) {
		t.Errorf("inflated grid shows %v, want the record %x", got, rec)
	}
	if !strings.Contains(markup[i:], "hello") {
		t.Errorf("inflated tree lacks the record value")
	}
}

// TestDecodeAPISqueezedHex: a hex dump whose "*" lines (squeezed
// repeated lines) stand for more than MaxSqueezedHex in all is refused
// with the line, before anything is expanded: two hundred of them in a
// few kilobytes of request would otherwise claim 12 GiB.
func TestDecodeAPISqueezedHex(t *testing.T) {
	srv := decodeServer(t)
	var b strings.Builder
	off := 0
	for range 200 {
		fmt.Fprintf(&b, "%08x  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n*\n", off)
		off += 64 << 20
	}
	fmt.Fprintf(&b, "%08x  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n", off)
	w, a := postJSON(t, srv, "/api/decode", map[string]any{"hex": b.String(), "kind": "request"})
	if w.Code != http.StatusBadRequest || !strings.Contains(a.Error, "line 3") || !strings.Contains(a.Error, fmt.Sprint(MaxSqueezedHex)) {
		t.Errorf("%d bytes of squeezed dump: %d %q; want 400 naming line 3 and the bound", b.Len(), w.Code, a.Error)
	}
}
