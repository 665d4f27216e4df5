package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/manifester/manifester/internal/site"
	"github.com/manifester/manifester/internal/testdeadline"
	"github.com/manifester/manifester/internal/testshared"
)

// allSpecFlags loads the six releases in ../shared/kafka-spec, trunk the
// newest.
func allSpecFlags() []string {
	var out []string
	for _, l := range []string{"3.9", "4.0", "4.1", "4.2", "4.3", "trunk"} {
		out = append(out, "--spec", l+"="+diffSpecs+l)
	}
	return out
}

// serveWith runs `manifester serve` with args on a free 127.0.0.1 port and
// returns its base URL; the server stops when the test ends.
func serveWith(t *testing.T, args ...string) string {
	t.Helper()
	testshared.Dir(t)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		env := &Env{Stdin: strings.NewReader(""), Stdout: pw, Stderr: io.Discard, Getenv: func(string) string { return "" }, Stop: ctx}
		done <- Main(env, append(append([]string{"serve"}, args...), "--addr", "127.0.0.1:0"))
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr)
	if err != nil {
		cancel()
		t.Fatalf("serve printed no URL: %v (exit %d)", err, <-done)
	}
	i := strings.Index(line, "http://")
	if i < 0 {
		cancel()
		t.Fatalf("serve printed %q", line)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != ExitOK {
				t.Errorf("serve exited %d", code)
			}
		case <-time.After(testdeadline.Remaining(t)):
			t.Errorf("serve did not shut down")
		}
	})
	return strings.TrimSuffix(strings.TrimSpace(line[i:]), "/")
}

// TestBuildEqualsServeWithHistory builds and serves the site of six
// releases: every written file (diff pages, /releases/, removed APIs'
// pages, per-release vectors included) is served with the same bytes;
// /vectors/4.1.jsonl is what `manifester vectors --spec 4.1=...` prints;
// pairs from newer to older are served but not written.
func TestBuildEqualsServeWithHistory(t *testing.T) {
	dir := t.TempDir()
	specs := allSpecFlags()
	out, errs, code := runCLI(t, append(append([]string{"build"}, specs...), "--out", dir)...)
	if code != ExitOK {
		t.Fatalf("build exited %d: %s", code, errs)
	}
	if !strings.Contains(out, "for Kafka trunk") {
		t.Errorf("build output %q", out)
	}
	base := serveWith(t, specs...)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func(p string) (int, []byte) {
		resp, err := client.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}
	kinds := map[string]int{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		want, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		u := site.URLPath(rel)
		code, got := get(u)
		if code != 200 || !bytes.Equal(got, want) {
			t.Errorf("%s: served %d, %d bytes; built %d bytes", u, code, len(got), len(want))
		}
		switch {
		case strings.Contains(u, "/diff/"):
			kinds["diff"]++
		case strings.HasPrefix(u, "/vectors/"):
			kinds["vectors"]++
		case strings.HasPrefix(u, "/apis/LeaderAndIsr/"):
			kinds["LeaderAndIsr"]++
		case u == "/releases/":
			kinds["releases"]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Every pair A < B of every API's versions in trunk, the four removed
	// APIs' pairs from 3.9, and one pair index per API.
	if kinds["diff"] < 800 || kinds["vectors"] != 6 || kinds["releases"] != 1 || kinds["LeaderAndIsr"] < 17 {
		t.Errorf("written files by kind: %v", kinds)
	}
	vout, verr, code := runCLI(t, "vectors", "--spec", "4.1="+diffSpecs+"4.1")
	if code != ExitOK {
		t.Fatalf("vectors exited %d: %s", code, verr)
	}
	if _, got := get("/vectors/4.1.jsonl"); string(got) != vout {
		t.Errorf("/vectors/4.1.jsonl (%d bytes) differs from `manifester vectors --spec 4.1=...` (%d bytes)", len(got), len(vout))
	}
	// The reverse view exists only under serve.
	if _, err := os.Stat(filepath.Join(dir, site.FilePath("/apis/Fetch/diff/v13..v12/"))); err == nil {
		t.Error("build wrote a reversed pair")
	}
	if code, body := get("/apis/Fetch/diff/v13..v12/"); code != 200 || !bytes.Contains(body, []byte("Fetch v13 → v12")) {
		t.Errorf("serve: reversed pair %d", code)
	}
	if code, _ := get("/apis/Fetch/diff/v13..v3/"); code != 404 {
		t.Errorf("serve: a pair with a version no release has: %d, want 404", code)
	}
}

// TestBrowserHistory drives the "compare versions" form in headless
// Chromium against `manifester serve` with six releases: the script goes
// straight to the diff page (older version first), with no console error
// and no request to another origin.
func TestBrowserHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test")
	}
	ctx := browser(t)
	base := serveWith(t, allSpecFlags()...)
	watch(t, ctx, base)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/apis/Fetch/v13/"), chromedp.WaitVisible("#changes form.diffpick")); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "history-fetch-v13.png")
	for _, tc := range []struct{ from, to, want string }{
		{"4", "18", "/apis/Fetch/diff/v4..v18/"},
		{"15", "7", "/apis/Fetch/diff/v7..v15/"},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/apis/Fetch/v13/"), chromedp.WaitVisible("#diff-from"),
			chromedp.SetValue("#diff-from", tc.from), chromedp.SetValue("#diff-to", tc.to),
			chromedp.Click(`#changes form.diffpick button`), chromedp.WaitVisible("h1")); err != nil {
			t.Fatal(err)
		}
		var path string
		deadline := testdeadline.Deadline(t)
		for time.Now().Before(deadline) {
			path = eval[string](t, ctx, `location.pathname`)
			if path == tc.want {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if path != tc.want {
			t.Errorf("compare v%s with v%s went to %s, want %s", tc.from, tc.to, path, tc.want)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/releases/"), chromedp.WaitVisible("#r3\\.9-4\\.0")); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "history-releases.png")
}
