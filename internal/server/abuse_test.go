package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/vectors"
)

// The server-under-abuse tests run the real net/http server on 127.0.0.1
// (Server.Serve), not a recorder, so that timeouts, connection handling
// and concurrency are the ones `manifester serve` has.

// serveLocal serves srv on a random 127.0.0.1 port until the test ends and
// returns its address.
func serveLocal(t *testing.T, srv *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// safetyNet bounds how long a test waits for the server to act. It is not
// a measurement: the server acts after the short timeouts the tests set;
// the safety net only keeps a broken server from hanging the test.
const safetyNet = 20 * time.Second

// dribble writes p to c one byte at a time, pausing between bytes, until
// all is written, a write fails or stop is closed. It returns how many
// bytes were written.
func dribble(c net.Conn, p []byte, stop <-chan struct{}) int {
	for i := range p {
		select {
		case <-stop:
			return i
		case <-time.After(20 * time.Millisecond):
		}
		if _, err := c.Write(p[i : i+1]); err != nil {
			return i
		}
	}
	return len(p)
}

// TestSlowHeaderClientsDisconnected opens several connections that dribble
// an endless request header (slowloris). Meanwhile other clients must be
// served; each dribbling connection must be closed by the server once the
// read-header timeout passes, without a successful answer.
func TestSlowHeaderClientsDisconnected(t *testing.T) {
	srv := New(testSite(t))
	srv.Limits = Limits{ReadHeaderTimeout: 300 * time.Millisecond, ReadTimeout: 2 * time.Second}
	addr := serveLocal(t, srv)

	const slow = 8
	stop := make(chan struct{})
	defer close(stop)
	type outcome struct {
		got []byte
		err error
	}
	results := make(chan outcome, slow)
	for range slow {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n"); err != nil {
			t.Fatal(err)
		}
		// A header line that never ends: far more than the timeout allows.
		go dribble(c, bytes.Repeat([]byte("X-Slow: a\r\n"), 200), stop)
		go func() {
			c.SetReadDeadline(time.Now().Add(safetyNet))
			got, err := io.ReadAll(c)
			results <- outcome{got, err}
		}()
	}

	// Other clients are served while the slow ones hold their connections.
	a, _ := srv.Site().Lookup("/apis/AlterConfigs/")
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			resp, err := http.Get("http://" + addr + "/apis/AlterConfigs/")
			if err != nil {
				t.Errorf("a normal client alongside slow ones: %v", err)
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || !bytes.Equal(b, a.Body) {
				t.Errorf("a normal client alongside slow ones: %d, %d bytes, %v", resp.StatusCode, len(b), err)
			}
		})
	}
	wg.Wait()

	for range slow {
		o := <-results
		var ne net.Error
		if errors.As(o.err, &ne) && ne.Timeout() {
			t.Fatalf("the server kept a dribbling connection open for %v (read %q)", safetyNet, o.got)
		}
		// Closed without a word (net/http's way), or with 408/400; never
		// a page.
		if len(o.got) > 0 && !regexp.MustCompile(`^HTTP/1\.1 (408|400) `).Match(o.got) {
			t.Errorf("a dribbling client was answered %q", firstLine(o.got))
		}
	}
}

func firstLine(b []byte) string {
	line, _, _ := bytes.Cut(b, []byte("\r\n"))
	return string(line)
}

// TestSlowBodyCutOff posts to /api/decode a valid request whose body
// arrives slower than the read timeout allows. Had the server waited for
// the whole body it would have answered 200 with the decoded frame; it must
// instead cut the client off before the body is complete.
func TestSlowBodyCutOff(t *testing.T) {
	srv := decodeServer(t)
	srv.Limits = Limits{ReadHeaderTimeout: 2 * time.Second, ReadTimeout: 400 * time.Millisecond}
	addr := serveLocal(t, srv)

	// Trailing spaces make the body long enough that dribbling all of it
	// takes many times the read timeout.
	body := fmt.Sprintf(`{"hex": %q}`, hex.EncodeToString(kmsgAlterConfigs(false))) + strings.Repeat(" ", 300)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /api/decode HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	stop := make(chan struct{})
	sent := make(chan int, 1)
	go func() { sent <- dribble(c, []byte(body), stop) }()

	c.SetReadDeadline(time.Now().Add(safetyNet))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	close(stop)
	n := <-sent
	if n == len(body) {
		t.Fatalf("the server read the whole slow body (%d bytes) before answering", n)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server waited %v on a slow body", safetyNet)
	}
	if err != nil {
		return // cut off without an answer: fine
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == 200 {
		t.Fatalf("a body cut off after %d of %d bytes was answered 200: %s", n, len(body), b)
	}
	var a Answer
	if json.Unmarshal(b, &a) != nil || a.Error == "" {
		t.Errorf("cut-off answer %d %q is not a JSON error", resp.StatusCode, b)
	}
}

// decodeCase is one POST /api/decode request and what a direct decode of
// the same bytes reports.
type decodeCase struct {
	req  DecodeRequest
	code int
	want []*report.Frame
}

// decodeCases builds requests from every test vector (requests and
// responses), plus invalid ones: truncated frames with a consistent size
// prefix, an unknown API key and bad hex.
func decodeCases(t *testing.T, c *codec.Codec) []decodeCase {
	t.Helper()
	vs, err := vectors.Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	var out []decodeCase
	add := func(in DecodeRequest, b []byte, opts report.Options) {
		f := report.Decode(c, b, opts)
		out = append(out, decodeCase{req: in, code: 200, want: []*report.Frame{f}})
	}
	for i, v := range vs {
		b, err := hex.DecodeString(v.Hex)
		if err != nil {
			t.Fatal(err)
		}
		in := DecodeRequest{Hex: v.Hex, Kind: v.Kind}
		opts := report.Options{Roundtrip: true, Kind: schema.TypeRequest}
		if v.Kind == "response" {
			api, err := c.Reg.Lookup(v.Name)
			if err != nil {
				t.Fatal(err)
			}
			ver := int(v.Version)
			in.API, in.Version = v.Name, &ver
			opts.Kind, opts.API, opts.Version = schema.TypeResponse, api, v.Version
		}
		add(in, b, opts)
		if i%7 == 0 && len(b) > 8 {
			// Cut the last byte and make the size prefix say so: a frame
			// that splits cleanly but does not decode.
			cut := append([]byte{}, b[:len(b)-1]...)
			cut[0], cut[1], cut[2], cut[3] = 0, 0, byte((len(cut)-4)>>8), byte(len(cut)-4)
			in.Hex = hex.EncodeToString(cut)
			add(in, cut, opts)
		}
	}
	unknown := []byte{0, 0, 0, 10, 0x27, 0x0f, 0, 0, 0, 0, 0, 1, 0xff, 0xff}
	add(DecodeRequest{Hex: hex.EncodeToString(unknown)}, unknown, report.Options{Roundtrip: true})
	out = append(out, decodeCase{req: DecodeRequest{Hex: "00 zz"}, code: 400})
	return out
}

// TestConcurrentDecodes sends many POST /api/decode requests at once (run
// it with -race) and checks every answer against a direct report.Decode
// of the same bytes.
func TestConcurrentDecodes(t *testing.T) {
	srv := decodeServer(t)
	addr := serveLocal(t, srv)
	cases := decodeCases(t, srv.Site().Newest().Codec)
	invalid := 0
	for _, tc := range cases {
		if tc.code == 200 && tc.want[0].Error != "" {
			invalid++
		}
	}
	if invalid < 10 {
		t.Fatalf("only %d cases decode with an error: the invalid cases are not invalid", invalid)
	}

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	const workers, each = 64, 6
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := range each {
				// Spread the workers over the cases, invalid ones included.
				k := (g*each + i) * 37 % len(cases)
				if i == each-1 {
					k = len(cases) - 1 - g%2 // the unknown API or the bad hex
				}
				if err := checkDecode(client, addr, cases[k]); err != nil {
					t.Errorf("worker %d request %d (%+v): %v", g, i, cases[k].req, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// answerFrame is what a direct decode and an answer must agree on.
type answerFrame struct {
	Kind, API, Error, ErrorPath, Hex string
	APIKey, Version                  int16
	CorrelationID                    int32
	ClientID                         *string
	Size                             int
	ErrorOffset                      *int
	Roundtrip                        *bool
	Body                             string
}

func essentials(f *report.Frame) answerFrame {
	body := ""
	if len(f.Body) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, f.Body); err != nil {
			body = "invalid JSON: " + err.Error()
		} else {
			body = buf.String()
		}
	}
	return answerFrame{Kind: f.Kind, API: f.API, Error: f.Error, ErrorPath: f.ErrorPath, Hex: f.Hex,
		APIKey: f.APIKey, Version: f.Version, CorrelationID: f.CorrelationID, ClientID: f.ClientID,
		Size: f.Size, ErrorOffset: f.ErrorOffset, Roundtrip: f.Roundtrip, Body: body}
}

func checkDecode(client *http.Client, addr string, tc decodeCase) error {
	b, err := json.Marshal(tc.req)
	if err != nil {
		return err
	}
	var resp *http.Response
	var body []byte
	// Beyond the decode cap the server answers 503 with Retry-After
	// (see TestDecodeCapacity): a client retries, as told.
	for deadline := time.Now().Add(safetyNet); ; {
		if resp, err = client.Post("http://"+addr+"/api/decode", "application/json", bytes.NewReader(b)); err != nil {
			return err
		}
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if resp.StatusCode != tc.code {
		return fmt.Errorf("status %d, want %d: %s", resp.StatusCode, tc.code, body)
	}
	var a Answer
	if err := json.Unmarshal(body, &a); err != nil {
		return fmt.Errorf("answer is not JSON: %v", err)
	}
	if tc.code != 200 {
		if a.Error == "" || len(a.Frames) != 0 {
			return fmt.Errorf("error answer without error: %s", body)
		}
		return nil
	}
	if a.Error != "" || len(a.Frames) != len(tc.want) {
		return fmt.Errorf("%d frames, error %q; want %d frames", len(a.Frames), a.Error, len(tc.want))
	}
	for i, f := range a.Frames {
		if d := cmp.Diff(essentials(tc.want[i]), essentials(f.Frame)); d != "" {
			return fmt.Errorf("frame %d differs from a direct decode (-direct +served):\n%s", i, d)
		}
		if n := len(cellsOf(f.HTML)); n != tc.want[i].Size {
			return fmt.Errorf("frame %d markup has %d byte cells, the frame %d bytes", i, n, tc.want[i].Size)
		}
	}
	return nil
}

// cellsOf is cells without a testing.T, for use from worker goroutines.
func cellsOf(markup string) []string {
	doc, err := html.Parse(strings.NewReader("<body>" + markup))
	if err != nil {
		return nil
	}
	var out []string
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.DataAtom == atom.Td {
			for _, a := range n.Attr {
				if a.Key == "class" && strings.HasPrefix(a.Val, "b ") {
					out = append(out, a.Val)
				}
			}
		}
	}
	return out
}

// wrkScript rotates over site pages (plain and gzip), a JSON page model,
// the 404 page and a decode POST, counts the answers that are not 2xx
// (404 expected for the unknown path) and prints the totals. No HEAD:
// wrk's parser would wait for a HEAD answer's body and stall the
// connection.
const wrkScript = `
local threads = {}
function setup(thread) table.insert(threads, thread) end

local reqs = {}
function init(args)
  ok, bad, notfound = 0, 0, 0
  local gz = {["Accept-Encoding"] = "gzip"}
  local js = {["Content-Type"] = "application/json"}
  reqs = {
    wrk.format("GET", "/"),
    wrk.format("GET", "/apis/AlterConfigs/", gz),
    wrk.format("GET", "/apis/Fetch/"),
    wrk.format("GET", "/apis/AlterConfigs/v2.json", gz),
    wrk.format("GET", "/static/site.css"),
    wrk.format("GET", "/apis/Produce/v9/", gz),
    wrk.format("GET", "/no/such/page"),
    wrk.format("POST", "/api/decode", js, '{"hex": "DECODE_HEX"}'),
  }
  i = 0
end

function request()
  i = i + 1
  return reqs[(i % #reqs) + 1]
end

function response(status, headers, body)
  if status == 404 then
    notfound = notfound + 1
  elseif status >= 200 and status < 300 then
    ok = ok + 1
  else
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local o, b, n = 0, 0, 0
  for _, t in ipairs(threads) do
    o = o + t:get("ok")
    b = b + t:get("bad")
    n = n + t:get("notfound")
  end
  local e = summary.errors
  io.write(string.format("CHECK ok=%d bad=%d notfound=%d connect=%d read=%d write=%d status=%d timeout=%d\n",
    o, b, n, e.connect, e.read, e.write, e.status, e.timeout))
end
`

// TestWrkLoad runs wrk against a served site and requires zero errors:
// every answer 2xx (404 for the one unknown path), no socket errors.
func TestWrkLoad(t *testing.T) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("wrk is not installed; CI installs it (.ci/run)")
		}
		t.Skip("wrk is not installed")
	}
	if testing.Short() {
		t.Skip("load test skipped in -short mode")
	}
	srv := decodeServer(t)
	addr := serveLocal(t, srv)
	script := filepath.Join(t.TempDir(), "load.lua")
	src := strings.Replace(wrkScript, "DECODE_HEX", hex.EncodeToString(kmsgAlterConfigs(false)), 1)
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/", "/apis/AlterConfigs/", "/apis/Fetch/", "/apis/AlterConfigs/v2.json", "/static/site.css", "/apis/Produce/v9/"} {
		if _, ok := srv.Site().Lookup(p); !ok {
			t.Fatalf("the load script asks for %s, which the site lacks", p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), safetyNet)
	defer cancel()
	out, err := exec.CommandContext(ctx, wrk, "-t2", "-c32", "-d2s", "-s", script, "http://"+addr+"/").CombinedOutput()
	if err != nil {
		t.Fatalf("wrk: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`CHECK ok=(\d+) bad=(\d+) notfound=(\d+) connect=(\d+) read=(\d+) write=(\d+) status=(\d+) timeout=(\d+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("no totals in wrk's output:\n%s", out)
	}
	n := make([]int, len(m)-1)
	for i := range n {
		n[i], _ = strconv.Atoi(string(m[i+1]))
	}
	ok, bad, notFound := n[0], n[1], n[2]
	if ok == 0 || notFound == 0 || bad != 0 || n[3]+n[4]+n[5]+n[7] != 0 {
		t.Errorf("wrk: %d ok, %d unexpected statuses, %d 404, socket errors connect %d read %d write %d timeout %d\n%s",
			ok, bad, notFound, n[3], n[4], n[5], n[7], out)
	}
	// The one unknown path is an eighth of the requests; the rest are 2xx.
	if notFound > (ok+notFound)/4 {
		t.Errorf("%d of %d answers were 404: more than the unknown path accounts for\n%s", notFound, ok+notFound, out)
	}
	t.Logf("wrk: %d answers, %d 404\n%s", ok+notFound, notFound, out)
}

// Hostile strings: markup, quotes of both kinds, an entity, and invalid
// UTF-8.
var hostile = []string{
	`<script>alert(1)</script>`,
	`"><img src=x onerror=alert(2)>`,
	`'><svg onload=alert(3)>`,
	"\xff\xfe<b>\xc3\x28</b>&amp;\x00",
}

// fillStrings sets every string field present at v in val (the value of
// s), nested ones included, to str.
func fillStrings(s *schema.Struct, v int16, val *codec.Value, str []byte) {
	for i, f := range s.Fields {
		if !f.Versions.Contains(v) || f.IsTagged(v) {
			continue
		}
		fillValue(f.Type, v, &val.Kids()[i], str)
	}
}

func fillValue(t *schema.Type, v int16, val *codec.Value, str []byte) {
	switch t.Kind {
	case schema.KindString:
		val.SetBytes(str)
		val.SetNull(false)
	case schema.KindStruct:
		fillStrings(t.Struct, v, val, str)
	case schema.KindArray:
		for j := range val.Kids() {
			fillValue(t.Elem, v, &val.Kids()[j], str)
		}
	}
}

// hostileFrames encodes, with the codec, requests and responses whose
// client id and string fields hold s.
func hostileFrames(t *testing.T, c *codec.Codec, s string) []DecodeRequest {
	t.Helper()
	var out []DecodeRequest
	for _, at := range []struct {
		api  string
		v    int16
		kind schema.MessageType
	}{
		{"AlterConfigs", 2, schema.TypeRequest},     // classic strings
		{"CreateTopics", 7, schema.TypeRequest},     // compact strings, nested structs
		{"DescribeConfigs", 4, schema.TypeResponse}, // error messages, config values
	} {
		api, err := c.Reg.Lookup(at.api)
		if err != nil {
			t.Fatal(err)
		}
		f := sample.Frame(api, at.kind, at.v)
		m := api.Request
		if at.kind == schema.TypeResponse {
			m = api.Response
		}
		fillStrings(m.Body, at.v, &f.Body, []byte(s))
		var b []byte
		if at.kind == schema.TypeResponse {
			b, err = c.EncodeResponse(nil, f)
		} else {
			f.ClientID = []byte(s)
			b, err = c.EncodeRequest(nil, f)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(s)) {
			t.Fatalf("%s v%d: the hostile string is not in the frame", at.api, at.v)
		}
		in := DecodeRequest{Hex: hex.EncodeToString(b), Kind: at.kind.String()}
		if at.kind == schema.TypeResponse {
			v := int(at.v)
			in.API, in.Version = at.api, &v
		}
		out = append(out, in)
	}
	return out
}

// checkNoInjection parses markup as HTML and fails on anything an input
// string could have injected: script elements other than the site's own,
// elements the site never writes (img, svg, b), event-handler attributes,
// and raw invalid UTF-8.
func checkNoInjection(t *testing.T, what, markup string) {
	t.Helper()
	if !utf8.ValidString(markup) {
		i := 0
		for i < len(markup) {
			r, n := utf8.DecodeRuneInString(markup[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		t.Errorf("%s: invalid UTF-8 at byte %d: %q", what, i, markup[max(i-40, 0):min(i+40, len(markup))])
	}
	doc, err := html.Parse(strings.NewReader(markup))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.DataAtom {
		case atom.Script:
			src := ""
			for _, a := range n.Attr {
				if a.Key == "src" {
					src = a.Val
				}
			}
			if !strings.HasPrefix(src, "/static/") {
				t.Errorf("%s: injected script element (src %q, text %q)", what, src, textOf(n))
			}
		case atom.Img, atom.Svg, atom.B:
			t.Errorf("%s: injected <%s> element", what, n.Data)
		}
		if n.Data == "svg" || n.Namespace == "svg" {
			t.Errorf("%s: injected svg element", what)
		}
		for _, a := range n.Attr {
			if strings.HasPrefix(strings.ToLower(a.Key), "on") || a.Key == "src" && n.DataAtom != atom.Script {
				t.Errorf("%s: injected attribute %s=%q on <%s>", what, a.Key, a.Val, n.Data)
			}
		}
	}
}

func textOf(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}

// TestHostileInput decodes frames whose strings are full of markup,
// quotes and invalid UTF-8, through the JSON API and the form post, and
// posts hostile text as hex, API name and version: the HTML holds no
// injected element or attribute, and the JSON answers are valid JSON of
// valid UTF-8.
func TestHostileInput(t *testing.T) {
	srv := decodeServer(t)
	c := srv.Site().Newest().Codec
	for _, s := range hostile {
		for _, in := range hostileFrames(t, c, s) {
			what := fmt.Sprintf("%s %s with %q", in.Kind, in.API, s)
			w, raw := postRaw(t, srv, "/api/decode", "application/json", mustJSON(t, in))
			if w != 200 {
				t.Fatalf("%s: status %d: %s", what, w, raw)
			}
			if !json.Valid(raw) || !utf8.Valid(raw) {
				t.Errorf("%s: the answer is not valid JSON of valid UTF-8: %q", what, raw)
			}
			var a Answer
			if err := json.Unmarshal(raw, &a); err != nil || len(a.Frames) != 1 {
				t.Fatalf("%s: %v, %d frames, error %q", what, err, len(a.Frames), a.Error)
			}
			if a.Frames[0].Error != "" {
				t.Errorf("%s: did not decode: %s", what, a.Frames[0].Error)
			}
			if in.Kind == "request" && a.Frames[0].ClientID == nil {
				t.Errorf("%s: no client id", what)
			}
			checkNoInjection(t, what+" (API html)", "<body>"+a.Frames[0].HTML)

			form := url.Values{"op": {"decode"}, "hex": {in.Hex}, "kind": {in.Kind}, "api": {in.API}}
			if in.Version != nil {
				form.Set("version", strconv.Itoa(*in.Version))
			}
			code, page := postRaw(t, srv, "/decode/", "application/x-www-form-urlencoded", []byte(form.Encode()))
			if code != 200 {
				t.Fatalf("%s form post: status %d", what, code)
			}
			checkNoInjection(t, what+" (page)", string(page))
		}

		// Hostile text where hex, an API name and a version belong.
		for _, form := range []url.Values{
			{"op": {"decode"}, "hex": {s}, "kind": {"request"}},
			{"op": {"decode"}, "hex": {"00"}, "kind": {"response"}, "api": {s}, "version": {"1"}},
			{"op": {"decode"}, "hex": {"00"}, "kind": {"response"}, "api": {"Fetch"}, "version": {s}},
			{"op": {"decode"}, "hex": {"00"}, "kind": {s}},
			{"op": {"encode"}, "kind": {"request"}, "api": {"AlterConfigs"}, "version": {"2"}, "correlation_id": {"1"},
				"client_id": {s}, "body": {`{"Resources":[{"ResourceName":` + string(mustJSON(t, s)) + `}]}`}},
			{"op": {"encode"}, "kind": {"request"}, "api": {"AlterConfigs"}, "version": {"2"}, "correlation_id": {"1"},
				"body": {`{` + string(mustJSON(t, s)) + `: 1}`}},
		} {
			what := fmt.Sprintf("form %v", form)
			code, page := postRaw(t, srv, "/decode/", "application/x-www-form-urlencoded", []byte(form.Encode()))
			if code != 200 && code != 400 {
				t.Errorf("%s: status %d", what, code)
			}
			checkNoInjection(t, what, string(page))
		}
		for _, in := range []any{
			DecodeRequest{Hex: s},
			DecodeRequest{Hex: "00", Kind: "response", API: s},
			DecodeRequest{Hex: "00", Kind: s},
			EncodeRequest{Kind: "request", API: "AlterConfigs", Version: 2, ClientID: &s,
				Body: json.RawMessage(`{"Resources":[{"ResourceName":` + string(mustJSON(t, s)) + `}]}`)},
		} {
			path := "/api/decode"
			if _, ok := in.(EncodeRequest); ok {
				path = "/api/encode"
			}
			what := fmt.Sprintf("%s %+v", path, in)
			code, raw := postRaw(t, srv, path, "application/json", mustJSON(t, in))
			if code != 200 && code != 400 {
				t.Errorf("%s: status %d", what, code)
			}
			if !json.Valid(raw) || !utf8.Valid(raw) {
				t.Errorf("%s: the answer is not valid JSON of valid UTF-8: %q", what, raw)
			}
			var a Answer
			if err := json.Unmarshal(raw, &a); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			for _, f := range a.Frames {
				checkNoInjection(t, what+" (html)", "<body>"+f.HTML)
			}
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// postRaw posts body to path and returns the status and answer bytes.
func postRaw(t *testing.T, h http.Handler, path, contentType string, body []byte) (int, []byte) {
	t.Helper()
	r := httptest.NewRequest("POST", path, bytes.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.Bytes()
}
