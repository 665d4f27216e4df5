package cli

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/testdeadline"
	"github.com/manifester/manifester/internal/testshared"
)

var spec43 = testshared.SpecPath("4.3")

// artifacts is where screenshots go (gitignored).
const artifacts = "../../testdata/artifacts"

// startServe runs `manifester serve` in-process on a random 127.0.0.1 port
// and returns its base URL ("http://127.0.0.1:N"). The server stops when
// the test ends.
func startServe(t *testing.T) string {
	t.Helper()
	return serveWith(t, "--spec", spec43)
}

// browser starts headless Chromium with the flags the project prescribes
// and a fresh profile. It skips when Chromium is missing, except in CI.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := "/usr/bin/chromium"
	if _, err := os.Stat(path); err != nil {
		p, lerr := exec.LookPath("chromium")
		if lerr != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("chromium is missing (CI=true): %v", err)
			}
			t.Skip("chromium is not installed")
		}
		path = p
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	// Every browser step may take until shortly before the test binary's
	// deadline: a loaded machine is slow, never wrong.
	tctx, tcancel := testdeadline.From(t, ctx)
	t.Cleanup(func() { tcancel(); cancel(); acancel() })
	if err := chromedp.Do(tctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return tctx
}

// watcher records console errors, exceptions and requests to other origins.
type watcher struct {
	mu       sync.Mutex
	origin   string
	requests int
	problems []string
}

func watch(t *testing.T, ctx context.Context, base string) *watcher {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	w := &watcher{origin: u.Scheme + "://" + u.Host}
	err = chromedp.Listen(ctx, func(ev any) {
		w.mu.Lock()
		defer w.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			w.requests++
			ru, err := url.Parse(ev.Request.URL)
			if err != nil || ru.Scheme+"://"+ru.Host != w.origin {
				w.problems = append(w.problems, "request to another origin: "+ev.Request.URL)
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				w.problems = append(w.problems, fmt.Sprintf("console %s", ev.Type))
			}
		case *runtime.EventExceptionThrown:
			w.problems = append(w.problems, "exception: "+ev.ExceptionDetails.Text)
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError || ev.Entry.Level == cdplog.EntryLevelWarning {
				w.problems = append(w.problems, fmt.Sprintf("log %s (%s): %s %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.requests == 0 {
			t.Errorf("no network request was seen: the watcher is not working")
		}
		for _, p := range w.problems {
			t.Error(p)
		}
	})
	return w
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(artifacts, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

// hover moves the mouse to the centre of the first element matching sel.
func hover(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	xy := eval[[]float64](t, ctx, fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.scrollIntoView({block: "center"});
		const r = e.getBoundingClientRect(); return [r.left + r.width/2, r.top + r.height/2]; })()`, sel))
	if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, xy[0], xy[1])); err != nil {
		t.Fatal(err)
	}
}

func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	ctx := browser(t)
	base := startServe(t)
	watch(t, ctx, base)

	t.Run("index filter", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/"), chromedp.WaitVisible("#filter")); err != nil {
			t.Fatal(err)
		}
		const visible = `Array.from(document.querySelectorAll("#apis tbody tr")).filter(r => r.offsetParent !== null).map(r => r.children[1].textContent.trim().split(" ")[0])`
		all := eval[[]string](t, ctx, visible)
		if len(all) < 80 {
			t.Fatalf("index shows %d rows before filtering, want every API key of 4.3", len(all))
		}
		screenshot(t, ctx, "index.png")
		if err := chromedp.Do(ctx, chromedp.SendKeys("#filter", "alterconfigs")); err != nil {
			t.Fatal(err)
		}
		got := eval[[]string](t, ctx, visible)
		if strings.Join(got, ",") != "AlterConfigs,IncrementalAlterConfigs" {
			t.Errorf("filter %q shows %v, want AlterConfigs and IncrementalAlterConfigs", "alterconfigs", got)
		}
		out := eval[string](t, ctx, `document.querySelector("#filter-count").textContent`)
		if want := fmt.Sprintf("2 of %d API keys", len(all)); out != want {
			t.Errorf("filter count says %q, want %q", out, want)
		}
		// By key: "33" is AlterConfigs only (exact key match or substring of
		// the "key name" text).
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector("#filter").value = ""; undefined`), chromedp.SendKeys("#filter", "33")); err != nil {
			t.Fatal(err)
		}
		if got := eval[[]string](t, ctx, visible); strings.Join(got, ",") != "AlterConfigs" {
			t.Errorf("filter 33 shows %v, want AlterConfigs", got)
		}
	})

	t.Run("byte hover highlights field", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/apis/AlterConfigs/"), chromedp.WaitVisible("#request .tools")); err != nil {
			t.Fatal(err)
		}
		hover(t, ctx, `#request td.b[data-o="16"]`)
		grpRows := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#request table.tree tr.grp th a")).map(a => a.textContent)`)
		if strings.Join(grpRows, ",") != "AlterConfigsResource[0]" {
			t.Errorf("hovering byte 0x0010: highlighted group rows %v, want [AlterConfigsResource[0]]", grpRows)
		}
		grpBytes := eval[[]float64](t, ctx, `Array.from(document.querySelectorAll("#request td.b.grp")).map(c => +c.dataset.o)`)
		if fmt.Sprint(grpBytes) != "[16 17 18 19 20 21 22]" {
			t.Errorf("hovering byte 0x0010: highlighted bytes %v, want the 7 bytes 0x10..0x16", grpBytes)
		}
		selRows := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#request table.tree tr.sel th a")).map(a => a.textContent)`)
		if strings.Join(selRows, ",") != "ResourceType" {
			t.Errorf("hovering byte 0x0010: selected row %v, want ResourceType (the leaf)", selRows)
		}
		screenshot(t, ctx, "alterconfigs.png")

		// Hovering a tree row highlights its bytes.
		hover(t, ctx, `[id="request:AlterConfigsRequest.ValidateOnly"] th a`)
		sel := eval[[]float64](t, ctx, `Array.from(document.querySelectorAll("#request td.b.sel")).map(c => +c.dataset.o)`)
		if fmt.Sprint(sel) != "[23]" {
			t.Errorf("hovering the ValidateOnly row selects bytes %v, want [23]", sel)
		}

		// Click pins the selection and puts it in the fragment.
		if err := chromedp.Do(ctx, chromedp.Click(`#request td.b[data-o="19"]`)); err != nil {
			t.Fatal(err)
		}

		hash := eval[string](t, ctx, `decodeURIComponent(location.hash)`)
		if !strings.HasSuffix(hash, ".Name") || !strings.HasPrefix(hash, "#request:") {
			t.Errorf("after clicking byte 0x13 the fragment is %q, want the Name field's row", hash)
		}
		hover(t, ctx, `#response td.b[data-o="4"]`)
		if got := eval[string](t, ctx, `decodeURIComponent("#" + document.querySelector("#request tr.sel").id)`); got != hash {
			t.Errorf("pinned selection moved to %q on hover elsewhere, want %q", got, hash)
		}

		// "copy field hex" copies the pinned field's bytes, "copy hex" the
		// frame. The clipboard is replaced by a recorder (headless Chromium
		// has no clipboard to read back).
		eval[chromedp.Void](t, ctx, `window.__copied = []; navigator.clipboard.writeText = t => { window.__copied.push(t); return Promise.resolve(); }; undefined`)
		if err := chromedp.Do(ctx, chromedp.Click(`[id="request:AlterConfigsRequest.Resources[0]"] th a`),
			chromedp.Click(`#request button[data-copy=field]`), chromedp.Click(`#request button[data-copy=frame]`)); err != nil {
			t.Fatal(err)
		}
		copied := eval[[]string](t, ctx, `window.__copied`)
		if want := []string{"00010201010000", "00000015002100020000000000000002000102010100000000"}; fmt.Sprint(copied) != fmt.Sprint(want) {
			t.Errorf("copied %q, want the 7 bytes of AlterConfigsResource[0] then the frame %q", copied, want)
		}

		// The fragment selects the field on load.
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/apis/AlterConfigs/v1/#response:AlterConfigsResponse.ThrottleTimeMs"),
			chromedp.WaitVisible("#response .tools")); err != nil {
			t.Fatal(err)
		}
		sel = eval[[]float64](t, ctx, `Array.from(document.querySelectorAll("#response td.b.sel")).map(c => +c.dataset.o)`)
		if fmt.Sprint(sel) != "[8 9 10 11]" {
			t.Errorf("fragment ThrottleTimeMs on v1 selects bytes %v, want [8 9 10 11]", sel)
		}
	})

	t.Run("keyboard", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/apis/AlterConfigs/"), chromedp.WaitVisible("#request .tools"),
			chromedp.Focus(`#request td.b[data-o="0"]`)); err != nil {
			t.Fatal(err)
		}
		// Down moves 16 bytes: 0x0010, ResourceType.
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kbDown)); err != nil {
			t.Fatal(err)
		}
		focused := eval[float64](t, ctx, `+document.activeElement.dataset.o`)
		if focused != 16 {
			t.Errorf("ArrowDown from byte 0 focused byte %v, want 16", focused)
		}
		if got := eval[string](t, ctx, `document.querySelector("#request table.tree tr.sel th a").textContent`); got != "ResourceType" {
			t.Errorf("keyboard focus on byte 0x10 selects %q, want ResourceType", got)
		}
	})

	t.Run("dark mode and print", func(t *testing.T) {
		media := func(m, scheme string) {
			t.Helper()
			p := emulation.SetEmulatedMediaParams{Media: m}
			if scheme != "" {
				p.Features = []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}
			}
			if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, p); err != nil {
				t.Fatal(err)
			}
		}
		media("", "dark")
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/apis/Produce/"), chromedp.WaitVisible("#request .tools")); err != nil {
			t.Fatal(err)
		}
		if bg := eval[string](t, ctx, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(13, 17, 23)" {
			t.Errorf("dark mode body background %s", bg)
		}
		// Produce carries a RecordBatch: its bytes have their own colour.
		if n := eval[float64](t, ctx, `document.querySelectorAll("#request td.b.c-batch").length`); n < 61 {
			t.Errorf("Produce request shows %v RecordBatch bytes, want at least 61", n)
		}
		screenshot(t, ctx, "produce-dark.png")
		media("print", "light")
		if d := eval[string](t, ctx, `getComputedStyle(document.querySelector("#request .tools")).display`); d != "none" {
			t.Errorf("print: tools display %s, want none", d)
		}
		media("", "")
	})

	t.Run("decode", func(t *testing.T) {
		const frame = "00000015002100020000000000000002000102010100000000" // AlterConfigs v2, the page's request
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/decode/"), chromedp.WaitVisible("#hex"),
			chromedp.SendKeys("#hex", frame), chromedp.Click(`#decode-form button[type=submit]`),
			chromedp.WaitVisible(`#f0 td.b[data-o="16"]`)); err != nil {
			t.Fatal(err)
		}
		if n := eval[float64](t, ctx, `document.querySelectorAll("#f0 td.b").length`); n != 25 {
			t.Errorf("decoded frame shows %v cells, want 25", n)
		}
		hover(t, ctx, `#f0 td.b[data-o="16"]`)
		if got := eval[string](t, ctx, `document.querySelector("#f0 table.tree tr.grp th a").textContent`); got != "AlterConfigsResource[0]" {
			t.Errorf("hover on the decoded frame's byte 0x10 highlights %q", got)
		}
		screenshot(t, ctx, "decode.png")
		// Edit the body and encode again: ValidateOnly is byte 0x17.
		if err := chromedp.Do(ctx,
			chromedp.Evaluate[chromedp.Void](`(() => { const b = document.querySelector("#f0-body"); b.value = b.value.replace('"ValidateOnly": false', '"ValidateOnly": true'); })()`),
			chromedp.Click(`#f0 form.encode button`)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector("#hex").value.endsWith("0100")`,
			chromedp.WithPollingTimeout(testdeadline.Remaining(t)))); err != nil {
			t.Fatalf("the re-encoded hex did not arrive: %v", err)
		}
		if got := eval[string](t, ctx, `document.querySelector("#f0 td.b[data-o='23']").textContent`); got != "01" {
			t.Errorf("after re-encoding, byte 0x17 is %q, want 01", got)
		}
	})

	t.Run("decode secrets", func(t *testing.T) {
		// A SaslHandshake (PLAIN) and its SaslAuthenticate, by kmsg: the
		// script's answer hides the password unless the box is ticked.
		const password = "s3cret-in-the-browser"
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Version, hs.Mechanism = 1, "PLAIN"
		auth := kmsg.NewPtrSASLAuthenticateRequest()
		auth.Version, auth.SASLAuthBytes = 2, []byte("\x00eve\x00"+password)
		f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("b"))
		frames := hex.EncodeToString(append(f.AppendRequest(nil, hs, 1), f.AppendRequest(nil, auth, 2)...))
		hexPass := hex.EncodeToString([]byte(password))
		shown := func(tick bool) bool {
			t.Helper()
			if err := chromedp.Do(ctx, chromedp.Navigate(base+"/decode/"), chromedp.WaitVisible("#hex"),
				chromedp.SendKeys("#hex", frames)); err != nil {
				t.Fatal(err)
			}
			if tick {
				if err := chromedp.Do(ctx, chromedp.Click("#show-secrets")); err != nil {
					t.Fatal(err)
				}
			}
			if err := chromedp.Do(ctx, chromedp.Click(`#decode-form button[type=submit]`), chromedp.WaitVisible(`#f1 td.b`)); err != nil {
				t.Fatal(err)
			}
			return strings.Contains(eval[string](t, ctx, `document.querySelector("#decode-results").innerHTML`), hexPass)
		}
		if shown(false) {
			t.Errorf("unticked: the results show the password's bytes")
		}
		if !shown(true) {
			t.Errorf("ticked: the results do not show the password's bytes as sent")
		}
	})

	t.Run("version switcher", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/apis/AlterConfigs/"), chromedp.WaitVisible("nav.versions"),
			chromedp.Click(`nav.versions a[href="v0/"]`), chromedp.WaitVisible(`#request .title`)); err != nil {
			t.Fatal(err)
		}
		loc := eval[string](t, ctx, `location.pathname`)
		if loc != "/apis/AlterConfigs/v0/" {
			t.Errorf("after clicking v0 the page is %s", loc)
		}
		title := eval[string](t, ctx, `document.querySelector("#request .title").textContent`)
		if !strings.HasPrefix(title, "AlterConfigsRequest v0, request header v1,") {
			t.Errorf("v0 request title %q", title)
		}
		cur := eval[string](t, ctx, `document.querySelector('nav.versions a[aria-current="page"]').textContent`)
		if cur != "v0" {
			t.Errorf("current version in switcher %q, want v0", cur)
		}
	})
}

// kbDown is the ArrowDown key for chromedp.KeyEvent.
const kbDown = "\u0301"
