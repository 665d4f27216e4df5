package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/net/html"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/compress"
	htmlr "github.com/manifester/manifester/internal/render/html"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/server"
	"github.com/manifester/manifester/internal/site"
)

// prefix is the base path the static export is built for.
const prefix = "/prefix/"

// staticHost serves dir under prefix with net/http.FileServer (no
// manifester code) and records every path asked for.
type staticHost struct {
	URL   string // http://127.0.0.1:N
	mu    sync.Mutex
	paths []string
}

func serveStatic(t *testing.T, dir string) *staticHost {
	t.Helper()
	h := &staticHost{}
	files := http.StripPrefix(strings.TrimSuffix(prefix, "/"), http.FileServer(http.Dir(dir)))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.paths = append(h.paths, r.URL.Path)
		h.mu.Unlock()
		if !strings.HasPrefix(r.URL.Path, prefix) {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	h.URL = "http://" + ln.Addr().String()
	return h
}

// outside lists the recorded paths not under the prefix.
func (h *staticHost) outside() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, p := range h.paths {
		if !strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	return out
}

// existsIn reports whether a URL path under the prefix names a file of
// the export in dir.
func existsIn(dir, urlPath string) bool {
	rest, ok := strings.CutPrefix(urlPath, prefix)
	if !ok {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, site.FilePath("/"+rest)))
	return err == nil && st.Mode().IsRegular()
}

// linkValues returns the values of the link attributes of an HTML page.
func linkValues(t *testing.T, body []byte) []string {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				switch a.Key {
				case "href", "src", "action", "data-base":
					out = append(out, a.Val)
				case "content":
					if v, ok := strings.CutPrefix(a.Val, "0; url="); ok {
						out = append(out, v)
					}
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

// TestStaticExport builds the site under /prefix/ with the WebAssembly
// decoder and checks it from a plain file server (no manifester process
// serving) and from file://: every link of every page resolves to a file
// of the export, the browser asks for nothing outside the prefix, search
// results and redirects stay under it, and /decode/ decodes, edits and
// re-encodes in the browser as the Go codec does. It also checks that
// `serve --base-path` serves the same bytes there.
func TestStaticExport(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the WebAssembly decoder and drives a browser")
	}
	dir := t.TempDir()
	out, errs, code := runCLI(t, "build", "--spec", spec43, "--base-path", prefix, "--wasm", "--out", dir)
	if code != ExitOK {
		t.Fatalf("build exited %d: %s", code, errs)
	}
	if !strings.Contains(out, "static decoder: "+site.WasmPath) {
		t.Errorf("build output does not name the static decoder: %q", out)
	}

	t.Run("links", func(t *testing.T) {
		// Every link of every page is relative (the 404 page's: under
		// the prefix) and names a file of the export.
		pages, links := 0, 0
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			sitePath := site.URLPath(rel)
			body, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			pageURL, _ := url.Parse("http://h" + strings.TrimSuffix(prefix, "/") + sitePath)
			pages++
			for _, v := range linkValues(t, body) {
				if htmlr.IsReferenceLink(v) {
					continue // a KIP or Jira number in a schema comment: the one kind of link that leaves
				}
				links++
				if sitePath == site.NotFoundPath {
					if !strings.HasPrefix(v, prefix) && !strings.HasPrefix(v, "#") {
						t.Errorf("404 page: link %q is not under %s", v, prefix)
					}
				} else if strings.HasPrefix(v, "/") {
					t.Errorf("%s: link %q is not relative", sitePath, v)
					continue
				}
				ref, err := url.Parse(v)
				if err != nil {
					t.Errorf("%s: link %q: %v", sitePath, v, err)
					continue
				}
				u := pageURL.ResolveReference(ref)
				if !existsIn(dir, u.Path) {
					t.Errorf("%s: link %q leads to %s, which the export does not have", sitePath, v, u.Path)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if pages < 1000 || links < 40000 {
			t.Errorf("checked only %d pages and %d links", pages, links)
		}
	})

	t.Run("serve", func(t *testing.T) {
		// serve --base-path answers the same bytes under the prefix (the
		// decode page and the decoder's files aside: serve decodes on the
		// server), redirects under it and nothing outside it.
		base := serveWith(t, "--spec", spec43, "--base-path", prefix)
		if !strings.HasSuffix(base, strings.TrimSuffix(prefix, "/")) {
			t.Fatalf("serve printed %q, not under %s", base, prefix)
		}
		origin := strings.TrimSuffix(base, strings.TrimSuffix(prefix, "/"))
		client := &http.Client{Transport: &http.Transport{DisableCompression: true},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		get := func(p string) (*http.Response, []byte) {
			resp, err := client.Get(origin + p)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp, b
		}
		n := 0
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			sp := site.URLPath(rel)
			if sp == site.DecodePath || sp == site.WasmPath || sp == site.WasmExecPath || sp == site.SpecsPath || sp == site.WasmScriptPath || sp == site.SpecsScriptPath {
				return nil
			}
			if n++; n%7 != 0 && !strings.HasSuffix(sp, "/") { // every page, a seventh of the other files
				return nil
			}
			want, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			resp, got := get(strings.TrimSuffix(prefix, "/") + sp)
			if resp.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
				t.Errorf("%s%s: status %d, %d bytes; the export has %d", prefix, sp, resp.StatusCode, len(got), len(want))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for from, to := range map[string]string{"/prefix": "/prefix/", "/prefix/apis/AlterConfigs": "/prefix/apis/AlterConfigs/",
			"/prefix/apis/33/v1/": "/prefix/apis/AlterConfigs/v1/", "/prefix/apis/fetch/v4/?x=1": "/prefix/apis/Fetch/v4/?x=1"} {
			// (ServeMux answers a dynamic pattern's missing slash with 307.)
			if resp, _ := get(from); resp.StatusCode != http.StatusMovedPermanently && resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != to {
				t.Errorf("GET %s: %d to %q, want 301 to %s", from, resp.StatusCode, resp.Header.Get("Location"), to)
			}
		}
		if resp, body := get("/apis/AlterConfigs/"); resp.StatusCode != http.StatusNotFound || !bytes.Contains(body, []byte(`href="/prefix/static/site.css"`)) {
			t.Errorf("GET outside the prefix: %d, want 404 with the 404 page under the prefix", resp.StatusCode)
		}
		// The decode form's answer page links as the static pages do.
		resp, err := client.PostForm(origin+"/prefix/decode/", url.Values{"op": {"decode"}, "hex": {alterConfigsV2()}, "kind": {"request"}})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`href="../static/site.css"`)) || !bytes.Contains(body, []byte(`AlterConfigsResource[0]`)) {
			t.Errorf("POST /prefix/decode/: %d, relative links %v", resp.StatusCode, bytes.Contains(body, []byte(`href="../static/site.css"`)))
		}
		for _, v := range linkValues(t, body) {
			if strings.HasPrefix(v, "/") {
				t.Errorf("POST /prefix/decode/: link %q is not relative", v)
			}
		}
		resp, err = client.Post(origin+"/prefix/api/decode", "application/json", strings.NewReader(`{"hex":"`+alterConfigsV2()+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("POST /prefix/api/decode: %d", resp.StatusCode)
		}
	})

	host := serveStatic(t, dir)
	ctx := browser(t)
	watch(t, ctx, host.URL)
	at := func(p string) string { return host.URL + strings.TrimSuffix(prefix, "/") + p }

	// checkPage checks the loaded page's style sheet and script and that
	// every href and src names a file of the export under the prefix.
	checkPage := func(t *testing.T, p string) {
		t.Helper()
		if pos := eval[string](t, ctx, `getComputedStyle(document.querySelector("a.skip")).position`); pos != "absolute" {
			t.Errorf("%s: the style sheet did not apply (skip link position %q)", p, pos)
		}
		if typ := eval[string](t, ctx, `typeof window.manifesterSiteURL`); typ != "function" {
			t.Errorf("%s: site.js did not run", p)
		}
		urls := eval[[]string](t, ctx, `[...document.querySelectorAll("[href],[src]")].map(e => e.href || e.src)`)
		if len(urls) < 10 {
			t.Errorf("%s: only %d links", p, len(urls))
		}
		for _, s := range urls {
			u, err := url.Parse(s)
			if err != nil || u.Scheme+"://"+u.Host != host.URL || !existsIn(dir, u.Path) {
				t.Errorf("%s: link %s does not lead to a file of the export under %s", p, s, prefix)
			}
		}
	}

	t.Run("pages", func(t *testing.T) {
		for _, p := range []string{"/", "/apis/AlterConfigs/", "/apis/AlterConfigs/v1/", "/apis/Fetch/diff/v12..v13/", "/apis/Fetch/diff/",
			"/releases/", "/errors/", "/types/", "/headers/", "/decode/", "/apis/LeaderAndIsr/"} {
			if err := chromedp.Do(ctx, chromedp.Navigate(at(p)), chromedp.WaitReady("footer")); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			checkPage(t, p)
		}
		// Clicking through: the version switcher and the compare form.
		if err := chromedp.Do(ctx, chromedp.Navigate(at("/apis/AlterConfigs/")), chromedp.WaitVisible("nav.versions"),
			chromedp.Click(`nav.versions a[href="v0/"]`), chromedp.WaitVisible(`#request .title`)); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, ctx, `location.pathname`); got != "/prefix/apis/AlterConfigs/v0/" {
			t.Errorf("the v0 link led to %s", got)
		}
	})

	t.Run("search", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(at("/search/?q=AlterConfigs")), chromedp.WaitVisible("#results li a")); err != nil {
			t.Fatal(err)
		}
		checkPage(t, "/search/")
		hrefs := eval[[]string](t, ctx, `[...document.querySelectorAll("#results li a")].map(a => a.href)`)
		if len(hrefs) < 5 || !strings.HasSuffix(hrefs[0], "/prefix/apis/AlterConfigs/") {
			t.Errorf("search results %v, want /prefix/apis/AlterConfigs/ first", hrefs)
		}
	})

	t.Run("redirect", func(t *testing.T) {
		// The export's redirect page (a meta refresh) leads to the API's
		// page under the prefix. The page changes while it is looked at,
		// so ask until it has arrived (for at most a generous minute).
		if err := chromedp.Do(ctx, chromedp.Navigate(at("/apis/33/"))); err != nil {
			t.Fatal(err)
		}
		var got string
		for i := 0; i < 300; i++ {
			if v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#request .tools") ? location.pathname : ""`)); err == nil && v != "" {
				got = v
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if got != "/prefix/apis/AlterConfigs/" {
			t.Errorf("/prefix/apis/33/ led to %q, want /prefix/apis/AlterConfigs/", got)
		}
	})

	t.Run("decode", func(t *testing.T) {
		want, body, frame := goDecode(t, alterConfigsV2())
		if err := chromedp.Do(ctx, chromedp.Navigate(at("/decode/")), chromedp.WaitVisible("#hex"),
			chromedp.SendKeys("#hex", alterConfigsV2()), chromedp.Click(`#decode-form button[type=submit]`)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!document.querySelector('#f0 td.b[data-o="16"]')`,
			chromedp.WithPollingTimeout(60*time.Second))); err != nil {
			t.Fatalf("no decoded frame: %v (page says %q)", err, eval[string](t, ctx, `document.querySelector("#decode-results").textContent`))
		}
		if n := eval[float64](t, ctx, `document.querySelectorAll("#f0 td.b").length`); n != 25 {
			t.Errorf("decoded frame shows %v cells, want 25", n)
		}
		rows := eval[[]string](t, ctx, `[...document.querySelectorAll("#f0 table.tree tbody tr")].map(r => r.querySelector("th").textContent + " | " + r.querySelector("td.val").textContent)`)
		if len(want) < 20 || strings.Join(rows, "\n") != strings.Join(want, "\n") {
			t.Errorf("the browser's tree:\n%s\nthe Go codec's:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
		}
		if !strings.Contains(strings.Join(rows, "\n"), "AlterConfigsResource[0]") {
			t.Errorf("tree rows lack AlterConfigsResource[0]: %v", rows)
		}
		t.Logf("time to first decode (loading wasm_exec.js, the specs and the decoder, building the codec): %s ms",
			eval[string](t, ctx, `document.documentElement.dataset.wasmLoadMs`))
		// Edit the body: ValidateOnly true, a resource name; encode again.
		edited := strings.Replace(strings.Replace(body, `"ValidateOnly": false`, `"ValidateOnly": true`, 1), `"ResourceName": ""`, `"ResourceName": "t1"`, 1)
		if edited == body {
			t.Fatalf("the body has no ValidateOnly false / empty ResourceName: %s", body)
		}
		wantHex := goEncode(t, frame, edited)
		js, _ := json.Marshal(edited)
		if err := chromedp.Do(ctx,
			chromedp.Evaluate[chromedp.Void](`document.querySelector("#f0-body").value = `+string(js)),
			chromedp.Click(`#f0 form.encode button`)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector("#hex").value !== `+strconvQuote(alterConfigsV2()),
			chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("the re-encoded hex did not arrive: %v", err)
		}
		if got := eval[string](t, ctx, `document.querySelector("#hex").value`); got != wantHex {
			t.Errorf("re-encoded hex %s, the Go codec gives %s", got, wantHex)
		}
		if got := eval[string](t, ctx, `document.querySelector("#f0 td.b[data-o='25']").textContent`); got != "01" {
			t.Errorf("after re-encoding, byte 0x19 (ValidateOnly) is %q, want 01", got)
		}
		if o := host.outside(); len(o) > 0 {
			t.Errorf("the browser asked for paths outside %s: %v", prefix, o)
		}
	})

	t.Run("file", func(t *testing.T) {
		fctx := browser(t)
		watch(t, fctx, "file://")
		root := "file://" + filepath.ToSlash(dir)
		for _, p := range []string{"index.html", "apis/AlterConfigs/index.html", "apis/AlterConfigs/v1/index.html", "errors/index.html", "releases/index.html", "apis/Fetch/diff/v12..v13/index.html"} {
			if err := chromedp.Do(fctx, chromedp.Navigate(root+"/"+p), chromedp.WaitReady("footer")); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if pos := eval[string](t, fctx, `getComputedStyle(document.querySelector("a.skip")).position`); pos != "absolute" {
				t.Errorf("%s: the style sheet did not apply (skip link position %q)", p, pos)
			}
			if typ := eval[string](t, fctx, `typeof window.manifesterSiteURL`); typ != "function" {
				t.Errorf("%s: site.js did not run", p)
			}
			urls := eval[[]string](t, fctx, `[...document.querySelectorAll("[href],[src]")].map(e => e.href || e.src)`)
			for _, s := range urls {
				u, err := url.Parse(s)
				if err != nil || u.Scheme != "file" {
					t.Errorf("%s: link %s is not a file", p, s)
					continue
				}
				if st, err := os.Stat(filepath.FromSlash(u.Path)); err != nil || !st.Mode().IsRegular() || !strings.HasPrefix(u.Path, filepath.ToSlash(dir)+"/") {
					t.Errorf("%s: link %s names no file of the export", p, s)
				}
			}
		}
		if err := chromedp.Do(fctx, chromedp.Navigate(root+"/apis/AlterConfigs/index.html"), chromedp.WaitVisible("nav.versions"),
			chromedp.Click(`nav.versions a[href$="v0/index.html"]`), chromedp.WaitVisible(`#request .title`)); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, fctx, `location.pathname`); !strings.HasSuffix(got, "/apis/AlterConfigs/v0/index.html") {
			t.Errorf("from file://, the v0 link led to %s", got)
		}
		// Search loads its index as a script (a file:// page may not
		// fetch), and its results name files.
		if err := chromedp.Do(fctx, chromedp.Navigate(root+"/search/index.html?q=AlterConfigs"), chromedp.WaitVisible("#results li a")); err != nil {
			t.Fatalf("search from file://: %v", err)
		}
		hrefs := eval[[]string](t, fctx, `[...document.querySelectorAll("#results li a")].map(a => a.href)`)
		if len(hrefs) < 5 || hrefs[0] != root+"/apis/AlterConfigs/index.html" {
			t.Errorf("search from file://: results %v, want %s first", hrefs, root+"/apis/AlterConfigs/index.html")
		}
		// The decode page decodes from file:// too: the specs and the
		// decoder load as scripts (specs.js, manifester-wasm.js).
		want, _, _ := goDecode(t, alterConfigsV2())
		if err := chromedp.Do(fctx, chromedp.Navigate(root+"/decode/index.html"), chromedp.WaitVisible("#hex"),
			chromedp.SendKeys("#hex", alterConfigsV2()), chromedp.Click(`#decode-form button[type=submit]`)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(fctx, chromedp.Poll[bool](`!!document.querySelector('#f0 td.b[data-o="16"]')`,
			chromedp.WithPollingTimeout(60*time.Second))); err != nil {
			t.Fatalf("from file://, no decoded frame: %v (page says %q)", err, eval[string](t, fctx, `document.querySelector("#decode-results").textContent`))
		}
		rows := eval[[]string](t, fctx, `[...document.querySelectorAll("#f0 table.tree tbody tr")].map(r => r.querySelector("th").textContent + " | " + r.querySelector("td.val").textContent)`)
		if len(want) < 20 || strings.Join(rows, "\n") != strings.Join(want, "\n") {
			t.Errorf("from file://, the browser's tree:\n%s\nthe Go codec's:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
		}
	})
}

// alterConfigsV2 is the AlterConfigs v2 request of `manifester vectors`.
// (Asked for when first needed: commands register in init.)
var alterConfigsV2 = sync.OnceValue(vectorHex)

func vectorHex() string {
	var out bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	if Main(env, []string{"vectors", "--spec", spec43}) != ExitOK {
		return ""
	}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	re := regexp.MustCompile(`"name":"AlterConfigs","version":2,"kind":"request".*"hex":"([0-9a-f]+)"`)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			return m[1]
		}
	}
	return ""
}

// goDecoder is the server's decoder of 4.3, as `serve` runs it.
func goDecoder(t *testing.T) *server.Decoder {
	t.Helper()
	reg, err := schema.Load(spec43)
	if err != nil {
		t.Fatal(err)
	}
	c := codec.New(reg)
	c.Decompress = compress.Decompressor()
	r, err := htmlr.New()
	if err != nil {
		t.Fatal(err)
	}
	return &server.Decoder{Codec: c, Renderer: r}
}

// goDecode decodes hex with the Go codec and returns the tree rows
// ("name | value") of its markup and the body JSON.
func goDecode(t *testing.T, hex string) ([]string, string, *report.Frame) {
	t.Helper()
	if hex == "" {
		t.Fatal("no AlterConfigs v2 request among the vectors")
	}
	a := goDecoder(t).DecodeAnswer(server.DecodeRequest{Hex: hex})
	if a.Error != "" || len(a.Frames) != 1 {
		t.Fatalf("Go decode: %q, %d frames", a.Error, len(a.Frames))
	}
	doc, err := html.Parse(strings.NewReader(a.Frames[0].HTML))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	var walk func(n *html.Node, inTree bool)
	walk = func(n *html.Node, inTree bool) {
		if n.Type == html.ElementNode && n.Data == "table" && hasClass(n, "tree") {
			inTree = true
		}
		if inTree && n.Type == html.ElementNode && n.Data == "tr" && n.Parent != nil && n.Parent.Data == "tbody" {
			var th, val string
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && c.Data == "th" && th == "" {
					th = textOf(c)
				}
				if c.Type == html.ElementNode && c.Data == "td" && hasClass(c, "val") {
					val = textOf(c)
				}
			}
			rows = append(rows, th+" | "+val)
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inTree)
		}
	}
	walk(doc, false)
	return rows, bodyText(t, a.Frames[0].HTML), a.Frames[0].Frame
}

// bodyText is the body JSON the decode markup puts in its encode form.
func bodyText(t *testing.T, markup string) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(markup))
	if err != nil {
		t.Fatal(err)
	}
	var out string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "textarea" {
			out = textOf(n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if out == "" {
		t.Fatal("the decode markup has no body")
	}
	return out
}

// goEncode encodes a request body with the Go codec, in the header of the
// decoded frame f.
func goEncode(t *testing.T, f *report.Frame, body string) string {
	t.Helper()
	a := goDecoder(t).EncodeAnswer(server.EncodeRequest{Kind: f.Kind, API: f.API, Version: int(f.Version),
		CorrelationID: f.CorrelationID, ClientID: f.ClientID, Body: json.RawMessage(body)})
	if a.Error != "" || len(a.Frames) != 1 {
		t.Fatalf("Go encode: %q", a.Error)
	}
	return a.Frames[0].Hex
}

func hasClass(n *html.Node, c string) bool {
	for _, a := range n.Attr {
		if a.Key == "class" && strings.Contains(" "+a.Val+" ", " "+c+" ") {
			return true
		}
	}
	return false
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
