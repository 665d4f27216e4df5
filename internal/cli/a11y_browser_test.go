package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// axeScript is axe-core, installed by .ci/run (npm ci --prefix tools/axe).
const axeScript = "../../tools/axe/node_modules/axe-core/axe.min.js"

// a11yPages are the kinds of page the accessibility and phone checks
// visit: the index, an API page, Produce (records), an old version, a
// version diff, the releases page, decode, the errors page and search.
var a11yPages = []string{
	"/", "/apis/AlterConfigs/", "/apis/Produce/", "/apis/Fetch/v4/", "/apis/Fetch/diff/v12..v13/",
	"/releases/", "/decode/", "/errors/", "/search/?q=fetch", "/types/", "/headers/",
}

type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any  `json:"target"`
		HTML   string `json:"html"`
		Fail   string `json:"failureSummary"`
	} `json:"nodes"`
}

// TestBrowserAccessibility runs axe-core (rules of WCAG 2.2 A and AA) on
// every kind of page, in the light and the dark colour scheme, and wants
// no violation.
func TestBrowserAccessibility(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	axe, err := os.ReadFile(axeScript)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("axe-core is missing (CI=true; .ci/run installs it): %v", err)
		}
		t.Skipf("axe-core is not installed (npm ci --prefix tools/axe): %v", err)
	}
	base := serveWith(t, "--spec", "4.2="+diffSpecs+"4.2", "--spec", "4.3="+spec43)
	for _, scheme := range []string{"light", "dark"} {
		t.Run(scheme, func(t *testing.T) { axePages(t, base, scheme, string(axe)) })
	}
}

// axePages runs axe on every page of a11yPages in one colour scheme, in a
// browser of its own.
func axePages(t *testing.T, base, scheme, axe string) {
	ctx := browser(t)
	watch(t, ctx, base)
	{
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
			t.Fatal(err)
		}
		for _, p := range a11yPages {
			if err := chromedp.Do(ctx, chromedp.Navigate(base+p), chromedp.WaitReady("footer")); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if strings.HasPrefix(p, "/search/") {
				waitJS(t, ctx, `document.querySelectorAll("#results li").length > 0`)
			}
			// The script goes in through the DevTools protocol, which the
			// page's Content-Security-Policy does not govern.
			eval[chromedp.Void](t, ctx, axe+"; undefined")
			out, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]}, resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations))`, chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatalf("%s: axe: %v", p, err)
			}
			var vs []axeViolation
			if err := json.Unmarshal([]byte(out), &vs); err != nil {
				t.Fatalf("%s: axe answered %q: %v", p, out, err)
			}
			for _, v := range vs {
				msg := fmt.Sprintf("%s (%s): %s, %s: %d nodes", p, scheme, v.ID, v.Help, len(v.Nodes))
				for i, n := range v.Nodes {
					if i == 3 {
						break
					}
					msg += fmt.Sprintf("\n    %v %.160s\n      %.300s", n.Target, n.HTML, n.Fail)
				}
				t.Error(msg)
			}
		}
	}
}

// TestBrowserPhoneWidth loads every kind of page at 390 CSS pixels and
// wants none wider than the screen: wide tables scroll in their own
// containers.
func TestBrowserPhoneWidth(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	ctx := browser(t)
	base := serveWith(t, "--spec", "4.2="+diffSpecs+"4.2", "--spec", "4.3="+spec43)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3))); err != nil {
		t.Fatal(err)
	}
	for _, p := range append(a11yPages, "/apis/StreamsGroupHeartbeat/") {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+p), chromedp.WaitReady("footer")); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		w := eval[[]int](t, ctx, `[document.documentElement.scrollWidth, window.innerWidth]`)
		if w[0] > w[1] {
			wide := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("main *")).filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest(".tablewrap, .gridwrap, .treewrap, pre, .scroll")).slice(0, 5).map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right))`)
			t.Errorf("%s is %d px wide at a %d px screen: %v", p, w[0], w[1], wide)
		}
		if p == "/apis/AlterConfigs/" {
			screenshot(t, ctx, "phone-api.png")
		}
	}
}
