package cli

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserReference drives the reference layer in Chromium: search as
// you type with the query kept in ?q=, the no-match state, an error-code
// value linking to its entry, and the friendly redirects.
func TestBrowserReference(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	ctx := browser(t)
	base := startServe(t)
	watch(t, ctx, base)

	results := `Array.from(document.querySelectorAll("#results li")).map(li => li.querySelector(".kind").textContent + " " + li.querySelector("a").textContent)`
	t.Run("search", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/search/"), chromedp.WaitVisible("#q")); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, `document.querySelector("#search-count").textContent.includes("entries")`)
		if err := chromedp.Do(ctx, chromedp.SendKeys("#q", "alterconfigs")); err != nil {
			t.Fatal(err)
		}
		got := eval[[]string](t, ctx, results)
		if len(got) < 2 || got[0] != "API AlterConfigs" {
			t.Errorf("alterconfigs: %v, want API AlterConfigs first", got)
		}
		if q := eval[string](t, ctx, `new URL(location.href).searchParams.get("q")`); q != "alterconfigs" {
			t.Errorf("?q is %q", q)
		}
		screenshot(t, ctx, "search.png")
		// A number matches a key or an error code whole, never inside
		// another number.
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector("#q").value = ""; undefined`), chromedp.SendKeys("#q", "33")); err != nil {
			t.Fatal(err)
		}
		got = eval[[]string](t, ctx, results)
		// API key 33 and error code 33, nothing else (no 133, no 330).
		if len(got) != 2 || got[0] != "API AlterConfigs" || !strings.HasPrefix(got[1], "error ") {
			t.Errorf("33: %v, want API AlterConfigs and error code 33", got)
		}
		// Several words narrow the results: every word must match.
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector("#q").value = ""; undefined`), chromedp.SendKeys("#q", "not leader")); err != nil {
			t.Fatal(err)
		}
		got = eval[[]string](t, ctx, results)
		found, formerly := false, false
		for _, r := range got {
			found = found || r == "error NOT_LEADER_OR_FOLLOWER"
			formerly = formerly || r == "error NOT_LEADER_FOR_PARTITION"
			if !strings.Contains(strings.ToLower(r), "not") {
				t.Errorf("not leader: result %q lacks a word", r)
			}
		}
		if !found || !formerly {
			t.Errorf("not leader: %v lacks NOT_LEADER_OR_FOLLOWER (code 6) or its earlier name, kerr's NOT_LEADER_FOR_PARTITION", got)
		}
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector("#q").value = ""; undefined`), chromedp.SendKeys("#q", "zzqqxx")); err != nil {
			t.Fatal(err)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll("#results li").length`); n != 0 {
			t.Errorf("zzqqxx: %d results", n)
		}
		if msg := eval[string](t, ctx, `document.querySelector("#search-count").textContent`); !strings.HasPrefix(msg, "No match") {
			t.Errorf("no-match state says %q", msg)
		}
		// Opening a link with ?q shows its results at once.
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/search/?q=ProducerId")); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, `document.querySelectorAll("#results li").length > 0`)
		if v := eval[string](t, ctx, `document.querySelector("#q").value`); v != "ProducerId" {
			t.Errorf("input after ?q=ProducerId: %q", v)
		}
	})

	t.Run("error link", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/apis/AlterConfigs/"),
			chromedp.Click(`[id="response:AlterConfigsResponse.Responses[0].ErrorCode"] td.val a`),
			chromedp.WaitVisible(`tr#NONE`)); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, ctx, `location.pathname + location.hash`); got != "/errors/#NONE" {
			t.Errorf("error link went to %q", got)
		}
	})

	// visible reports whether the element's box is inside the window and,
	// for a tree row, below the sticky byte pane; for a byte cell, inside
	// the pane's scrolled view.
	const visible = `((sel) => { const e = document.querySelector(sel); if (!e) return "missing " + sel;
		const r = e.getBoundingClientRect(), pane = e.closest("section.msg").querySelector(".bytes-pane").getBoundingClientRect();
		if (r.top < 0 || r.bottom > window.innerHeight) return "outside the window: " + r.top + ".." + r.bottom + " of " + window.innerHeight;
		if (e.matches("td.b")) { const tools = e.closest(".bytes-pane").querySelector(".tools").getBoundingClientRect();
			if (r.top < tools.bottom || r.bottom > pane.bottom) return "outside the pane's view"; }
		else if (r.top < pane.bottom - 1) return "under the byte pane (" + r.top + " < " + pane.bottom + ")";
		return "ok"; })`
	t.Run("large message", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/apis/StreamsGroupHeartbeat/"), chromedp.WaitVisible("#request .tools")); err != nil {
			t.Fatal(err)
		}
		// The deepest leaf of the request, far below its bytes.
		last := eval[string](t, ctx, `(() => { const rows = Array.from(document.querySelectorAll("#request table.tree tr.leaf")); return rows[rows.length - 2].id; })()`)
		sel := `[id="` + last + `"]`
		hover(t, ctx, sel+" th a")
		first := eval[int](t, ctx, `+document.querySelector('`+sel+`').dataset.o`)
		cell := `#request td.b[data-o="` + itoa(first) + `"]`
		if got := eval[string](t, ctx, visible+`('`+cell+`')`); got != "ok" {
			t.Errorf("hovering %s: its first byte is %s", last, got)
		}
		if got := eval[string](t, ctx, `(() => { const o = document.querySelector("#request output.sel"); const r = o.getBoundingClientRect();
			return r.top >= 0 && r.bottom <= window.innerHeight ? o.textContent : "status line off-screen"; })()`); !strings.HasPrefix(got, last[len("request:"):]) {
			t.Errorf("status line while hovering %s: %q", last, got)
		}
		screenshot(t, ctx, "large-hover.png")
		// A fragment link pins the row: row and bytes both in view.
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/releases/"), chromedp.Navigate(base+"/apis/StreamsGroupHeartbeat/#"+last),
			chromedp.WaitVisible("#request .tools")); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, `document.querySelector('`+sel+`').classList.contains("sel")`)
		for _, q := range []string{sel, cell} {
			if got := eval[string](t, ctx, visible+`('`+q+`')`); got != "ok" {
				t.Errorf("after opening #%s: %s is %s", last, q, got)
			}
		}
	})

	t.Run("copy fallback", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/apis/AlterConfigs/"), chromedp.WaitVisible("#request .tools")); err != nil {
			t.Fatal(err)
		}
		eval[chromedp.Void](t, ctx, `Object.defineProperty(navigator, "clipboard", {value: undefined, configurable: true}); undefined`)
		if err := chromedp.Do(ctx, chromedp.Click(`#request button[data-copy=frame]`)); err != nil {
			t.Fatal(err)
		}
		got := eval[[]string](t, ctx, `(() => { const a = document.querySelector("#request textarea.copy-fallback");
			if (!a) return ["no field"]; return [a.value, String(document.activeElement === a), String(a.selectionEnd - a.selectionStart),
			document.querySelector("#request output.sel").textContent]; })()`)
		hex := eval[string](t, ctx, `document.querySelector("#request").dataset.hex`)
		if len(got) != 4 || got[0] != hex || got[1] != "true" || got[2] != itoa(len(hex)) || !strings.Contains(got[3], "selected") {
			t.Errorf("copy without a clipboard: %q, want the frame's hex selected in a focused field and a note", got)
		}
	})

	t.Run("redirects", func(t *testing.T) {
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		for from, to := range map[string]string{"/apis/33/": "/apis/AlterConfigs/", "/apis/alterconfigs/v1/": "/apis/AlterConfigs/v1/",
			"/apis/FETCH/v4/": "/apis/Fetch/v4/"} {
			resp, err := c.Get(base + from)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			switch {
			case resp.StatusCode == http.StatusOK && strings.HasSuffix(from, "/") && !strings.Contains(from[len("/apis/"):len(from)-1], "/"):
				// The export's redirect page, served as a file.
			case resp.StatusCode == http.StatusMovedPermanently && resp.Header.Get("Location") == to:
			default:
				t.Errorf("%s: %d %q, want a redirect to %s", from, resp.StatusCode, resp.Header.Get("Location"), to)
			}
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/apis/33/"), chromedp.WaitVisible("#request .tools")); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, ctx, `location.pathname`); got != "/apis/AlterConfigs/" {
			t.Errorf("/apis/33/ ends at %q", got)
		}
	})
}

func itoa(n int) string { return strconv.Itoa(n) }

// waitJS waits until a script expression is true, for as long as the
// browser context allows (its deadline comes from the test's).
func waitJS(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr)); err != nil {
		t.Fatalf("waiting for %s: %v", expr, err)
	}
}
