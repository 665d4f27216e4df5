package cli

import (
	"bytes"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/site"
	"github.com/manifester/manifester/internal/testshared"
)

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	testshared.Dir(t)
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code := Main(env, args)
	return out.String(), errb.String(), code
}

// TestBuildEqualsServe writes the site with `manifester build`, serves it
// with `manifester serve`, and checks that every written file is served
// with the same bytes and that nothing is served that was not written.
func TestBuildEqualsServe(t *testing.T) {
	dir := t.TempDir()
	out, errs, code := runCLI(t, "build", "--spec", spec43, "--out", dir)
	if code != ExitOK {
		t.Fatalf("build exited %d: %s", code, errs)
	}
	if !strings.Contains(out, "HTML pages") {
		t.Errorf("build output %q", out)
	}
	base := startServe(t)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func(p string) []byte {
		resp, err := client.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 {
			t.Errorf("GET %s: %d", p, resp.StatusCode)
		}
		return b
	}
	n := 0
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
		if got := get(u); !bytes.Equal(got, want) {
			t.Errorf("%s: served %d bytes differ from the built %s (%d bytes)", u, len(got), rel, len(want))
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 600 {
		t.Errorf("build wrote only %d files", n)
	}
	// Every page the index links is among the written files (and so is
	// served): nothing is served that was not built. The site's own path
	// list is the source of both.
	for _, p := range []string{"/", "/apis/AlterConfigs/", "/apis/AlterConfigs/v0/", "/apis/AlterConfigs/v2.json", "/vectors.jsonl", "/static/site.css", "/static/site.js"} {
		if _, err := os.Stat(filepath.Join(dir, site.FilePath(p))); err != nil {
			t.Errorf("build did not write %s: %v", p, err)
		}
	}
	// /vectors.jsonl is what `manifester vectors` prints.
	vout, verr, code := runCLI(t, "vectors", "--spec", spec43)
	if code != ExitOK {
		t.Fatalf("vectors exited %d: %s", code, verr)
	}
	if got := get("/vectors.jsonl"); string(got) != vout {
		t.Errorf("/vectors.jsonl differs from `manifester vectors`")
	}
	// /apis/<Name>/v<N>.json is what `manifester show --format json` prints.
	sout, serr, code := runCLI(t, "show", "--spec", spec43, "--version", "1", "--format", "json", "AlterConfigs")
	if code != ExitOK {
		t.Fatalf("show exited %d: %s", code, serr)
	}
	if got := get("/apis/AlterConfigs/v1.json"); string(got) != sout {
		t.Errorf("/apis/AlterConfigs/v1.json differs from `manifester show --format json`")
	}
}

func TestBuildUsage(t *testing.T) {
	if _, _, code := runCLI(t, "build", "--spec", spec43); code != ExitUsage {
		t.Errorf("build without --out exited %d, want %d", code, ExitUsage)
	}
	if _, _, code := runCLI(t, "serve", "--spec", spec43, "extra"); code != ExitUsage {
		t.Errorf("serve with an argument exited %d, want %d", code, ExitUsage)
	}
	if _, _, code := runCLI(t, "serve", "--spec", spec43, "--addr", "256.0.0.1:99999"); code != ExitFailure {
		t.Errorf("serve on a bad address exited %d, want %d", code, ExitFailure)
	}
}

func TestBrowseURL(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, "http://127.0.0.1:8080/"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 80}, "http://localhost:80/"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 9}, "http://localhost:9/"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 9}, "http://[::1]:9/"},
	} {
		if got := browseURL(tc.addr); got != tc.want {
			t.Errorf("browseURL(%v) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}
