package server

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/manifester/manifester/internal/compress"
	hostilef "github.com/manifester/manifester/internal/hostile"
	htmlr "github.com/manifester/manifester/internal/render/html"
)

// inflatingServer is a decode server whose codec inflates batches, as
// `manifester serve` sets it up.
func inflatingServer(t *testing.T) (*Server, *Decoder) {
	t.Helper()
	srv := New(testSite(t))
	d := RegisterDecode(srv, testSite(t))
	d.Codec.Decompress = compress.Decompressor()
	d.Codec.DecompressLimit = compress.LimitDecompressor()
	t.Cleanup(func() { d.Codec.Decompress, d.Codec.DecompressLimit = nil, nil })
	return srv, d
}

func TestAPIWrongMethod(t *testing.T) {
	srv := decodeServer(t)
	for _, path := range []string{"/api/decode", "/api/encode"} {
		for _, m := range []string{"GET", "HEAD", "PUT", "DELETE"} {
			w := do(t, srv, m, path, nil)
			if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "POST" {
				t.Errorf("%s %s: %d, Allow %q; want 405, POST", m, path, w.Code, w.Header().Get("Allow"))
			}
			checkSecurity(t, w)
		}
	}
	if w := do(t, srv, "GET", "/api/nothing", nil); w.Code != http.StatusNotFound {
		t.Errorf("GET /api/nothing: %d, want 404", w.Code)
	}
	if w := do(t, srv, "POST", "/api/nothing", nil); w.Code != http.StatusNotFound {
		t.Errorf("POST /api/nothing: %d, want 404", w.Code)
	}
}

func post(client *http.Client, url string, v any) (*http.Response, []byte, error) {
	b, _ := json.Marshal(v)
	resp, err := client.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// TestDecodeCapacity fills the decode slots and the queue: one more
// request is answered 503 with Retry-After at once, and the queued one is
// decoded when a slot frees.
func TestDecodeCapacity(t *testing.T) {
	srv, d := inflatingServer(t)
	d.MaxConcurrent, d.MaxQueued, d.QueueWait = 1, 1, safetyNet
	addr := serveLocal(t, srv)
	if !d.acquire(context.Background()) { // the one slot, held by the test
		t.Fatal("no slot")
	}
	req := DecodeRequest{Hex: hex.EncodeToString(kmsgAlterConfigs(false))}
	queued := make(chan int, 1)
	go func() {
		resp, _, err := post(http.DefaultClient, "http://"+addr+"/api/decode", req)
		if err != nil {
			t.Error(err)
			queued <- 0
			return
		}
		queued <- resp.StatusCode
	}()
	deadline := time.Now().Add(safetyNet)
	for d.queued.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	resp, body, err := post(http.DefaultClient, "http://"+addr+"/api/decode", req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" || !strings.Contains(string(body), "retry") {
		t.Errorf("beyond the queue: %d, Retry-After %q, %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	d.release()
	if code := <-queued; code != http.StatusOK {
		t.Errorf("the queued request: %d, want 200", code)
	}
}

// TestDecodeTimeout stops a request's work when its timeout fires: the
// answer is 503, and the slot is free again.
func TestDecodeTimeout(t *testing.T) {
	srv, d := inflatingServer(t)
	d.Timeout = time.Nanosecond
	frame := hostilef.Shapes[0].Build(hostilef.Gzip, 64<<10)
	w, a := postJSON(t, srv, "/api/decode", DecodeRequest{Hex: hex.EncodeToString(frame)})
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(a.Error, "took longer than") {
		t.Errorf("%d %q", w.Code, a.Error)
	}
	if len(d.slots) != 0 {
		t.Errorf("%d slots still held", len(d.slots))
	}
}

// TestDecodeCancelled decodes with a context that is already done: the
// decoder stops at its first check and says why.
func TestDecodeCancelled(t *testing.T) {
	_, d := inflatingServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	frame := hostilef.Shapes[0].Build(hostilef.Zstd, 64<<10)
	fs, err := d.DecodeContext(ctx, DecodeRequest{Hex: hex.EncodeToString(frame) + hex.EncodeToString(frame)})
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("err = %v", err)
	}
	if len(fs) != 1 || !strings.Contains(fs[0].Error, "decoding cancelled") {
		for _, f := range fs {
			t.Logf("frame %d: %s", f.Index, f.Error)
		}
		t.Errorf("%d frames; want the first, stopped", len(fs))
	}
}

// TestHostileDecodeAPIBounded posts the hostile frames of issue 9 to
// /api/decode: each answer is bounded in size and memory and says which
// limit was reached.
func TestHostileDecodeAPIBounded(t *testing.T) {
	srv, _ := inflatingServer(t)
	for _, sh := range hostilef.Shapes {
		for _, cd := range []int{hostilef.Gzip, hostilef.Zstd} {
			frame := sh.Build(cd, 200<<10)
			var w interface{ Result() *http.Response }
			var a Answer
			u := hostilef.Measure(func() {
				rec, ans := postJSON(t, srv, "/api/decode", DecodeRequest{Hex: hex.EncodeToString(frame)})
				w, a = rec, ans
			})
			resp := w.Result()
			size := resp.ContentLength
			if size < 0 {
				b, _ := io.ReadAll(resp.Body)
				size = int64(len(b))
			}
			t.Logf("%s/%d: %d bytes in, answer %d bytes, peak heap %d MiB, allocated %d MiB; %.200s", sh.Name, cd, len(frame), size, u.Peak>>20, u.Total>>20, a.Frames[0].Budget)
			if resp.StatusCode != 200 || len(a.Frames) != 1 {
				t.Fatalf("%s: %d, %d frames, %s", sh.Name, resp.StatusCode, len(a.Frames), a.Error)
			}
			if u.Peak > 384<<20 {
				t.Errorf("%s: peak heap %d MiB", sh.Name, u.Peak>>20)
			}
			if size > MaxAnswer {
				t.Errorf("%s: answer of %d bytes", sh.Name, size)
			}
			if sh.Name != "zeros" && a.Frames[0].Budget == "" {
				t.Errorf("%s: no budget note", sh.Name)
			}
			if a.Frames[0].Budget != "" && !strings.Contains(a.Frames[0].HTML, "budget: ") {
				t.Errorf("%s: the markup does not say the budget was reached", sh.Name)
			}
		}
	}
}

// TestEncodeEmptyElementsBounded posts 1 MiB of empty array elements to
// /api/encode (issue 9: a 360 MB answer): refused or bounded.
func TestEncodeEmptyElementsBounded(t *testing.T) {
	srv, _ := inflatingServer(t)
	n := (MaxDecodeBody - 200) / 3
	body := `{"Topics":[` + strings.TrimSuffix(strings.Repeat("{},", n), ",") + `]}`
	in := EncodeRequest{Kind: "request", API: "CreateTopics", Version: 7, Body: json.RawMessage(body)}
	var code int
	var a Answer
	var size int
	u := hostilef.Measure(func() {
		b, _ := json.Marshal(in)
		r := newJSONRequest("/api/encode", b)
		rec := newRecorder()
		srv.ServeHTTP(rec, r)
		code, size = rec.Code, rec.Body.Len()
		json.Unmarshal(rec.Body.Bytes(), &a)
	})
	t.Logf("%d elements: %d, answer %d bytes, peak heap %d MiB, allocated %d MiB: %s", n, code, size, u.Peak>>20, u.Total>>20, a.Error)
	if size > 1<<20 || u.Peak > 256<<20 {
		t.Errorf("answer %d bytes, peak heap %d MiB", size, u.Peak>>20)
	}
	if code != http.StatusBadRequest || !strings.Contains(a.Error, "larger than the") {
		t.Errorf("%d %q", code, a.Error)
	}
	// Fewer elements fit, and are answered with a bounded tree.
	small := `{"Topics":[` + strings.TrimSuffix(strings.Repeat("{},", 20000), ",") + `]}`
	in.Body = json.RawMessage(small)
	w, a2 := postJSON(t, srv, "/api/encode", in)
	if w.Code != 200 || len(a2.Frames) != 1 || w.Body.Len() > MaxAnswer {
		t.Fatalf("20000 elements: %d, %d bytes, %s", w.Code, w.Body.Len(), a2.Error)
	}
	t.Logf("20000 elements: answer %d bytes, frame %d bytes: %s", w.Body.Len(), a2.Frames[0].Size, a2.Frames[0].Error)
}

// TestPageServedDuringBombs serves site pages while hostile frames are
// being decoded: every page comes within a second (the bound; a
// page is served from memory in microseconds), and decodes beyond the
// cap are refused with 503 rather than queued without end.
func TestPageServedDuringBombs(t *testing.T) {
	srv, _ := inflatingServer(t)
	addr := serveLocal(t, srv)
	bomb := DecodeRequest{Hex: hex.EncodeToString(hostilef.Shapes[1].Build(hostilef.Zstd, 200<<10))}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	client := &http.Client{Timeout: safetyNet}
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, _, err := post(client, "http://"+addr+"/api/decode", bomb)
				if err != nil {
					return
				}
				mu.Lock()
				statuses[resp.StatusCode]++
				mu.Unlock()
			}
		})
	}
	// Let the bombs start.
	deadline := time.Now().Add(safetyNet)
	for time.Now().Before(deadline) {
		mu.Lock()
		n := len(statuses)
		mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := range 5 {
		start := time.Now()
		resp, err := client.Get("http://" + addr + "/apis/Produce/")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if took := time.Since(start); resp.StatusCode != 200 || took > time.Second {
			t.Errorf("page %d: %d after %s while bombs decode", i, resp.StatusCode, took)
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("bomb answers by status: %v", statuses)
	for code := range statuses {
		if code != 200 && code != 503 {
			t.Errorf("a bomb was answered %d", code)
		}
	}
}

func newJSONRequest(path string, b []byte) *http.Request {
	r, _ := http.NewRequest("POST", path, bytes.NewReader(b))
	r.Header.Set("Content-Type", "application/json")
	return r
}

type recorder struct {
	h    http.Header
	Code int
	Body bytes.Buffer
}

func newRecorder() *recorder                    { return &recorder{h: http.Header{}} }
func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) Write(b []byte) (int, error) { return r.Body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.Code = code }
func (r *recorder) String() string              { return fmt.Sprint(r.Code) }

// TestAnswerLimit lowers the answer limit: an answer past it keeps the
// frames' summaries, without markup or trees, and says so.
func TestAnswerLimit(t *testing.T) {
	srv, d := inflatingServer(t)
	frame := hex.EncodeToString(kmsgAlterConfigs(false))
	w, a := postJSON(t, srv, "/api/decode", DecodeRequest{Hex: frame + frame + frame})
	whole := w.Body.Len()
	d.MaxAnswer = whole / 2
	w, a = postJSON(t, srv, "/api/decode", DecodeRequest{Hex: frame + frame + frame})
	if w.Code != 200 || len(a.Frames) != 3 || w.Body.Len() > whole/2 || !strings.Contains(a.Error, "left out") {
		t.Fatalf("%d, %d frames, %d bytes (whole %d): %q", w.Code, len(a.Frames), w.Body.Len(), whole, a.Error)
	}
	var trees struct {
		Frames []struct {
			Tree json.RawMessage `json:"tree"`
		} `json:"frames"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &trees); err != nil || len(trees.Frames) != 3 {
		t.Fatalf("answer frames: %v", err)
	}
	if a.Frames[0].HTML != "" && a.Frames[2].HTML != "" || (len(trees.Frames[2].Tree) > 0 && string(trees.Frames[2].Tree) != "null") || a.Frames[2].API != "AlterConfigs" {
		t.Errorf("frames past the limit keep markup or tree, or lose their summary: %+v", a.Frames[2])
	}
}

// stalledBody is a request body whose client is still sending: its first
// Read says so on started and blocks until release is closed.
type stalledBody struct {
	started, release chan struct{}
	once             sync.Once
}

func (b *stalledBody) Read(p []byte) (int, error) {
	b.once.Do(func() { close(b.started) })
	<-b.release
	return 0, io.EOF
}

// TestFormPostBodyReadWithoutSlot posts the /decode/ form with a body that
// is still arriving while the only decode slot is free: reading a body is
// the client's time, not decode work, so a JSON decode posted meanwhile
// gets the slot and is answered 200 (it used to wait behind the form's
// body and get 503).
func TestFormPostBodyReadWithoutSlot(t *testing.T) {
	srv := New(testSite(t))
	d := RegisterDecode(srv, testSite(t))
	d.MaxConcurrent, d.MaxQueued, d.QueueWait = 1, 1, 100*time.Millisecond

	body := &stalledBody{started: make(chan struct{}), release: make(chan struct{})}
	slow := httptest.NewRequest("POST", "/decode/", body)
	slow.ContentLength = -1
	slow.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	done := make(chan int, 1)
	go func() {
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, slow)
		done <- w.Code
	}()
	select {
	case <-body.started:
	case <-time.After(safetyNet):
		t.Fatal("the form handler never read its body")
	}
	w, a := postJSON(t, srv, "/api/decode", DecodeRequest{Hex: hex.EncodeToString(kmsgAlterConfigs(false))})
	close(body.release)
	if w.Code != http.StatusOK || len(a.Frames) != 1 {
		t.Errorf("a decode while a form body is arriving: %d %q; want 200 with one frame", w.Code, a.Error)
	}
	select {
	case code := <-done:
		if code != http.StatusBadRequest {
			t.Errorf("the empty form post: %d, want 400", code)
		}
	case <-time.After(safetyNet):
		t.Fatal("the form post never finished")
	}
	if len(d.slots) != 0 {
		t.Errorf("%d slots still held", len(d.slots))
	}
}

// stalledWriter is a client that does not read its answer: the first
// Write says so on started and blocks until release is closed.
type stalledWriter struct {
	h                http.Header
	started, release chan struct{}
	once             sync.Once
	code             int
	body             bytes.Buffer
}

func newStalledWriter() *stalledWriter {
	return &stalledWriter{h: http.Header{}, started: make(chan struct{}), release: make(chan struct{})}
}

func (w *stalledWriter) Header() http.Header { return w.h }
func (w *stalledWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *stalledWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	w.once.Do(func() { close(w.started) })
	<-w.release
	return w.body.Write(p)
}

// TestAnswerWrittenWithoutSlot decodes for a client that does not read
// its answer, through the JSON API and the form: writing the answer is
// the client's time, so a decode posted meanwhile gets the only slot and
// is answered 200 (it used to wait behind the stalled write and get 503).
func TestAnswerWrittenWithoutSlot(t *testing.T) {
	frame := hex.EncodeToString(kmsgAlterConfigs(false))
	form := url.Values{"op": {"decode"}, "hex": {frame}, "kind": {"request"}}
	for _, stalled := range []*http.Request{
		newJSONRequest("/api/decode", mustJSON(t, DecodeRequest{Hex: frame})),
		newJSONRequest("/api/encode", mustJSON(t, EncodeRequest{Kind: "request", API: "AlterConfigs", Version: 2, Body: json.RawMessage(`{"Resources": [{"ResourceName": "a"}]}`)})),
		httptest.NewRequest("POST", "/decode/", strings.NewReader(form.Encode())),
	} {
		t.Run(stalled.URL.Path, func(t *testing.T) {
			srv := New(testSite(t))
			d := RegisterDecode(srv, testSite(t))
			d.MaxConcurrent, d.MaxQueued, d.QueueWait = 1, 1, 100*time.Millisecond
			if stalled.URL.Path == "/decode/" {
				stalled.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			w := newStalledWriter()
			done := make(chan struct{})
			go func() {
				defer close(done)
				srv.ServeHTTP(w, stalled)
			}()
			select {
			case <-w.started:
			case <-time.After(safetyNet):
				t.Fatal("the stalled request was never answered")
			}
			rec, a := postJSON(t, srv, "/api/decode", DecodeRequest{Hex: frame})
			close(w.release)
			if rec.Code != http.StatusOK || len(a.Frames) != 1 {
				t.Errorf("a decode while an answer is being written: %d %q; want 200 with one frame", rec.Code, a.Error)
			}
			select {
			case <-done:
			case <-time.After(safetyNet):
				t.Fatal("the stalled request never finished")
			}
			if w.code != http.StatusOK || !strings.Contains(w.body.String(), "AlterConfigs") {
				t.Errorf("the stalled request's answer: %d, %d bytes", w.code, w.body.Len())
			}
			if len(d.slots) != 0 {
				t.Errorf("%d slots still held", len(d.slots))
			}
		})
	}
}

// TestPendingAnswersBounded stalls a client on a large answer (500 empty
// CreateTopics topics: about 5 MB of markup and tree from a 2 KB request)
// with room for one such answer: since answers are written without a
// decode slot, the bytes waiting for slow clients are what bounds memory.
// A second large answer is refused with 503 while the first waits; small
// answers still go out; when the first is written the room is free again.
func TestPendingAnswersBounded(t *testing.T) {
	srv := New(testSite(t))
	d := RegisterDecode(srv, testSite(t))
	big := EncodeRequest{Kind: "request", API: "CreateTopics", Version: 7,
		Body: json.RawMessage(`{"Topics":[` + strings.TrimSuffix(strings.Repeat("{},", 500), ",") + `]}`)}
	w, _ := postJSON(t, srv, "/api/encode", big)
	size := w.Body.Len()
	if w.Code != http.StatusOK || size <= MaxDecodeBody {
		t.Fatalf("the large answer: %d, %d bytes; want 200 and more than %d", w.Code, size, MaxDecodeBody)
	}
	d.MaxPending = size + size/2

	stalled := newStalledWriter()
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeHTTP(stalled, newJSONRequest("/api/encode", mustJSON(t, big)))
	}()
	select {
	case <-stalled.started:
	case <-time.After(safetyNet):
		t.Fatal("the stalled request was never answered")
	}
	w, a := postJSON(t, srv, "/api/encode", big)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" || !strings.Contains(a.Error, "answers") {
		t.Errorf("a second large answer while one waits for its client: %d %q; want 503 with Retry-After", w.Code, a.Error)
	}
	form := url.Values{"op": {"encode"}, "kind": {"request"}, "api": {"CreateTopics"}, "version": {"7"}, "correlation_id": {"0"}, "body": {string(big.Body)}}
	r := httptest.NewRequest("POST", "/decode/", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, r)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
		t.Errorf("a large form answer while one waits for its client: %d; want 503 with Retry-After", rec.Code)
	}
	if w, a := postJSON(t, srv, "/api/decode", DecodeRequest{Hex: hex.EncodeToString(kmsgAlterConfigs(false))}); w.Code != http.StatusOK || len(a.Frames) != 1 {
		t.Errorf("a small answer while a large one waits: %d %q", w.Code, a.Error)
	}
	close(stalled.release)
	select {
	case <-done:
	case <-time.After(safetyNet):
		t.Fatal("the stalled request never finished")
	}
	if stalled.code != http.StatusOK || stalled.body.Len() != size {
		t.Errorf("the stalled answer: %d, %d bytes; want 200, %d", stalled.code, stalled.body.Len(), size)
	}
	if n := d.pending.Load(); n != 0 {
		t.Errorf("%d bytes still counted as pending", n)
	}
	if w, _ := postJSON(t, srv, "/api/encode", big); w.Code != http.StatusOK {
		t.Errorf("a large answer once the first is written: %d", w.Code)
	}
}

// TestInflatedGridsBounded decodes a 6 KB Produce request of 40 gzip
// batches that each inflate to 60 KiB of zeros: within the inflation
// budget (1 MiB: 17 batches and part of one more), but drawn as byte
// grids that is 83 MB of markup (and 400 MiB of heap) from 12 KB of hex.
// The grids of inflated records of one answer share MaxInflatedGridBytes:
// the first batch's records are drawn, later ones that no longer fit are
// named with their size and left out, in the JSON API's answer and on the
// form's page alike.
func TestInflatedGridsBounded(t *testing.T) {
	srv, d := inflatingServer(t)
	d.Timeout = 10 * safetyNet // slow machines are slower, not failing
	var batches [][]byte
	for range 40 {
		batches = append(batches, hostilef.Batch(hostilef.Gzip, make([]byte, 60<<10), 1))
	}
	b := hostilef.Produce(batches...)
	frame := hex.EncodeToString(b)
	const bound = 16 << 20
	check := func(what, markup string) {
		t.Helper()
		drawn := strings.Count(markup, `class="msg decoded inflated"`)
		left := strings.Count(markup, "These records inflate to 61440 bytes, more than this answer still draws")
		if drawn < 1 || left < 10 {
			t.Errorf("%s: %d inflated sections drawn, %d left out; want at least 1 and 10", what, drawn, left)
		}
		if n := len(cellsOf(markup)); n < len(b)+60<<10 || n > len(b)+htmlr.MaxInflatedGridBytes {
			t.Errorf("%s: %d byte cells; want the frame's %d and %d to %d inflated", what, n, len(b), 60<<10, htmlr.MaxInflatedGridBytes)
		}
	}

	w, a := postJSON(t, srv, "/api/decode", DecodeRequest{Hex: frame})
	if w.Code != http.StatusOK || len(a.Frames) != 1 || a.Error != "" || w.Body.Len() > bound {
		t.Fatalf("API: %d, %d frames, %d bytes, error %q; want 200, one frame with its markup, at most %d bytes", w.Code, len(a.Frames), w.Body.Len(), a.Error, bound)
	}
	check("API", a.Frames[0].HTML)

	form := url.Values{"op": {"decode"}, "hex": {frame}, "kind": {"request"}}
	r := httptest.NewRequest("POST", "/decode/", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK || rec.Body.Len() > bound {
		t.Fatalf("form: %d, %d bytes; want 200, at most %d", rec.Code, rec.Body.Len(), bound)
	}
	check("form", rec.Body.String())
}

// TestAnswerLimitKeepsWhatFits pastes 1 MiB of hex of CreateTopics
// requests of 500 empty topics (5 KB each; the first 64 are decoded):
// their markup and trees together are about 100 MB of JSON, past
// MaxAnswer. The answer keeps the markup of the frames that fit and
// leaves the rest out, saying which (it used to marshal all 100 MB, a
// peak of 500 MiB of heap, and then leave every frame's markup out).
func TestAnswerLimitKeepsWhatFits(t *testing.T) {
	srv, d := inflatingServer(t)
	d.Timeout = 10 * safetyNet // slow machines are slower, not failing
	f, err := d.Encode(EncodeRequest{Kind: "request", API: "CreateTopics", Version: 7,
		Body: json.RawMessage(`{"Topics":[` + strings.TrimSuffix(strings.Repeat("{},", 500), ",") + `]}`)})
	if err != nil {
		t.Fatal(err)
	}
	in := DecodeRequest{Hex: strings.Repeat(f.Hex, (MaxDecodeBody-1000)/len(f.Hex))}
	var w *httptest.ResponseRecorder
	var a Answer
	u := hostilef.Measure(func() { w, a = postJSON(t, srv, "/api/decode", in) })
	t.Logf("%d bytes of hex: answer %d bytes, peak heap %d MiB: %s", len(in.Hex), w.Body.Len(), u.Peak>>20, a.Error)
	if w.Code != http.StatusOK || len(a.Frames) != MaxDecodeFrames || w.Body.Len() > MaxAnswer {
		t.Fatalf("%d, %d frames, %d bytes", w.Code, len(a.Frames), w.Body.Len())
	}
	kept := 0
	for kept < len(a.Frames) && a.Frames[kept].HTML != "" {
		kept++
	}
	for _, f := range a.Frames[kept:] {
		if f.HTML != "" || f.API != "CreateTopics" {
			t.Fatalf("frame %d: markup after a frame without, or no summary", f.Index)
		}
	}
	if kept == 0 || kept == len(a.Frames) || !strings.Contains(a.Error, fmt.Sprintf("frames %d to %d are left out", kept, len(a.Frames)-1)) {
		t.Errorf("%d frames keep their markup; error %q", kept, a.Error)
	}
	if u.Peak > 384<<20 {
		t.Errorf("peak heap %d MiB", u.Peak>>20)
	}
	if b, err := json.Marshal(d.DecodeAnswer(in)); err != nil || string(b) != w.Body.String() {
		t.Errorf("DecodeAnswer differs from the HTTP answer (%v)", err)
	}
}

// TestFormPageLimit lowers the answer limit below the form page of three
// frames: as the JSON API does, the page keeps the frames that fit and
// shows the others by their summary, saying what was left out (the page
// had no limit; its worst is the trees' budget, some 100 MB).
func TestFormPageLimit(t *testing.T) {
	srv, d := inflatingServer(t)
	frame := hex.EncodeToString(kmsgAlterConfigs(false))
	form := url.Values{"op": {"decode"}, "hex": {frame + frame + frame}, "kind": {"request"}}
	page := func() (int, string) {
		r := httptest.NewRequest("POST", "/decode/", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, r)
		return rec.Code, rec.Body.String()
	}
	code, whole := page()
	if code != 200 || len(cells(t, whole)) != 3*len(frame)/2 {
		t.Fatalf("the whole page: %d, %d cells", code, len(cells(t, whole)))
	}
	d.MaxAnswer = len(whole) / 2
	code, got := page()
	if code != 200 || len(got) > len(whole)/2+2048 {
		t.Errorf("past the limit: %d, %d bytes (whole %d, limit %d)", code, len(got), len(whole), d.MaxAnswer)
	}
	if n := len(cells(t, got)); n == 0 || n == 3*len(frame)/2 {
		t.Errorf("past the limit: %d cells; want the first frames' only", n)
	}
	if !strings.Contains(got, "are left out") || strings.Count(got, "Frame f2: request AlterConfigs(33) v2") != 1 {
		t.Errorf("past the limit, the page does not say what it left out, or loses a frame's summary")
	}
	checkNoInjection(t, "page past the limit", got)
}
