package specfetch

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/manifester/manifester/internal/fakemaven"
	"github.com/manifester/manifester/internal/spec"
	"github.com/manifester/manifester/internal/testshared"
)

var (
	sharedSpecs   = testshared.Join("kafka-spec", "4.3")
	sharedRecords = testshared.Join("kafka-records", "4.3")
)

// serve serves a Maven-layout folder over loopback HTTP and records the
// paths asked for.
func serve(t *testing.T, dir string) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	fs := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		fs.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
}

// files lists the files under dir, relative, temporary ones included.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func TestFetch(t *testing.T) {
	repo := t.TempDir()
	fakemaven.Repo(t, repo, "4.3.0", sharedSpecs, sharedRecords)
	// Only .sha1 for one module, as older uploads have.
	mdir := filepath.Join(repo, "org", "apache", "kafka", "kafka-raft", "4.3.0")
	os.Remove(filepath.Join(mdir, "kafka-raft-4.3.0.jar.sha256"))
	os.Remove(filepath.Join(mdir, "kafka-raft-4.3.0.jar.sha512"))
	// The share coordinator is not published for this version.
	os.RemoveAll(filepath.Join(repo, "org", "apache", "kafka", "kafka-share-coordinator"))
	srv, _ := serve(t, repo)
	cache := t.TempDir()
	var reported []string
	f := &Fetcher{Repo: srv.URL + "/", Dir: cache, Verified: func(j Jar) { reported = append(reported, j.Artifact) }}
	res, err := f.Fetch(context.Background(), "4.3.0")
	if err != nil {
		t.Fatal(err)
	}
	if len(reported) != len(res.Jars) || reported[0] != "kafka-clients" {
		t.Errorf("reported %v", reported)
	}
	if res.Dir != filepath.Join(cache, "4.3.0") || len(res.Jars) != 7 || res.Jars[0].Artifact != "kafka-clients" {
		t.Fatalf("result %+v", res)
	}
	if strings.Join(res.Missing, " ") != "kafka-share-coordinator" {
		t.Errorf("missing = %v", res.Missing)
	}
	for _, j := range res.Jars {
		want := "sha1 sha256 sha512"
		if j.Artifact == "kafka-raft" {
			want = "sha1"
		}
		if strings.Join(j.Verified, " ") != want {
			t.Errorf("%s verified %v, want %s", j.Artifact, j.Verified, want)
		}
		st, err := os.Stat(j.Path)
		if err != nil || st.Size() != j.Size {
			t.Errorf("%s: stored %v (%v), size %d", j.Artifact, st, err, j.Size)
		}
	}
	got := files(t, cache)
	want := []string{
		"4.3.0/kafka-clients-4.3.0.jar", "4.3.0/kafka-group-coordinator-4.3.0.jar", "4.3.0/kafka-metadata-4.3.0.jar",
		"4.3.0/kafka-raft-4.3.0.jar", "4.3.0/kafka-storage-4.3.0.jar", "4.3.0/kafka-streams-4.3.0.jar",
		"4.3.0/kafka-transaction-coordinator-4.3.0.jar",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("cache holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The folder opens as one release with its record schemas.
	src, err := spec.Open(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if src.Label != "4.3.0" || len(src.Records) != 6 {
		t.Errorf("opened label %q with %d record modules", src.Label, len(src.Records))
	}
	if _, err := src.ReadAll(); err != nil {
		t.Error(err)
	}
}

// TestFetchChecksumMismatch: a jar that does not match its checksum is
// deleted, nothing is stored, and the error says which checksum failed.
func TestFetchChecksumMismatch(t *testing.T) {
	for _, alg := range []string{"sha1", "sha256", "sha512"} {
		t.Run(alg, func(t *testing.T) {
			repo := t.TempDir()
			jars := fakemaven.Repo(t, repo, "4.3.0", sharedSpecs, sharedRecords)
			// Only this algorithm's published checksum is wrong; the
			// others match the jar.
			p := jars["kafka-metadata"]
			size := map[string]int{"sha1": 20, "sha256": 32, "sha512": 64}[alg]
			os.WriteFile(p+"."+alg, []byte(strings.Repeat("ab", size)+"  kafka-metadata-4.3.0.jar\n"), 0o644)
			srv, _ := serve(t, repo)
			cache := t.TempDir()
			_, err := (&Fetcher{Repo: srv.URL, Dir: cache}).Fetch(context.Background(), "4.3.0")
			if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "kafka-metadata-4.3.0.jar") || !strings.Contains(err.Error(), alg+" is") {
				t.Fatalf("err = %v, want a %s mismatch of kafka-metadata", err, alg)
			}
			if got := files(t, cache); len(got) != 0 {
				t.Errorf("cache holds %v after a failed fetch", got)
			}
		})
	}
}

func TestFetchErrors(t *testing.T) {
	repo := t.TempDir()
	jars := fakemaven.Repo(t, repo, "4.3.0", sharedSpecs, "")
	srv, asked := serve(t, repo)
	cache := t.TempDir()
	f := &Fetcher{Repo: srv.URL, Dir: cache}
	ctx := context.Background()

	// An unknown release, and no folder left for it.
	if _, err := f.Fetch(ctx, "4.4.0"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "kafka-clients-4.4.0.jar") {
		t.Errorf("unknown release: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cache, "4.4.0")); !os.IsNotExist(err) {
		t.Errorf("a failed fetch left %s: %v", filepath.Join(cache, "4.4.0"), err)
	}
	// Versions that are not versions never reach the network.
	n := len(asked())
	for _, v := range []string{"", "../4.3.0", "4.3.0/../../x", "latest", "4..3"} {
		if _, err := f.Fetch(ctx, v); !errors.Is(err, ErrVersion) {
			t.Errorf("version %q: %v", v, err)
		}
	}
	if len(asked()) != n {
		t.Errorf("bad versions were requested: %v", asked()[n:])
	}
	// No .sha1: refused.
	os.Rename(jars["kafka-clients"]+".sha1", jars["kafka-clients"]+".sha1.away")
	if _, err := f.Fetch(ctx, "4.3.0"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no .sha1") {
		t.Errorf("no sha1: %v", err)
	}
	os.Rename(jars["kafka-clients"]+".sha1.away", jars["kafka-clients"]+".sha1")
	// A checksum file that is not one.
	good, _ := os.ReadFile(jars["kafka-clients"] + ".sha256")
	os.WriteFile(jars["kafka-clients"]+".sha256", []byte("<html>not found</html>"), 0o644)
	if _, err := f.Fetch(ctx, "4.3.0"); err == nil || !strings.Contains(err.Error(), "not a sha256 checksum") {
		t.Errorf("bad checksum file: %v", err)
	}
	os.WriteFile(jars["kafka-clients"]+".sha256", good, 0o644)
	// A jar over the limit.
	small := &Fetcher{Repo: srv.URL, Dir: cache, MaxJar: 1000}
	if _, err := small.Fetch(ctx, "4.3.0"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("large jar: %v", err)
	}
	// A clients jar without message specs.
	fakemaven.WriteJar(t, jars["kafka-clients"], "somewhere/else", sharedSpecs)
	fakemaven.WriteChecksums(t, jars["kafka-clients"])
	if _, err := f.Fetch(ctx, "4.3.0"); !errors.Is(err, ErrNoSpecJar) {
		t.Errorf("jar without specs: %v", err)
	}
	// A repository that is not http(s).
	if _, err := (&Fetcher{Repo: "file:///tmp", Dir: cache}).Fetch(ctx, "4.3.0"); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("file repo: %v", err)
	}
	if got := files(t, cache); len(got) != 0 {
		t.Errorf("cache holds %v after failed fetches", got)
	}
	// A server that answers 500.
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 500) }))
	defer bad.Close()
	if _, err := (&Fetcher{Repo: bad.URL, Dir: cache}).Fetch(ctx, "4.3.0"); err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("HTTP 500: %v", err)
	}
}

func TestLatest(t *testing.T) {
	repo := t.TempDir()
	md := filepath.Join(repo, "org", "apache", "kafka", "kafka-clients", "maven-metadata.xml")
	os.MkdirAll(filepath.Dir(md), 0o755)
	os.WriteFile(md, []byte(`<?xml version="1.0" encoding="UTF-8"?>
<metadata><groupId>org.apache.kafka</groupId><artifactId>kafka-clients</artifactId>
<versioning><latest>4.3.0</latest><release>4.3.0</release><versions><version>4.2.0</version><version>4.3.0</version></versions></versioning></metadata>`), 0o644)
	srv, _ := serve(t, repo)
	v, err := (&Fetcher{Repo: srv.URL}).Latest(context.Background())
	if err != nil || v != "4.3.0" {
		t.Errorf("Latest = %q, %v", v, err)
	}
	os.WriteFile(md, []byte(`<metadata><versioning><release>../../etc</release></versioning></metadata>`), 0o644)
	if _, err := (&Fetcher{Repo: srv.URL}).Latest(context.Background()); !errors.Is(err, ErrVersion) {
		t.Errorf("bad release in metadata: %v", err)
	}
}

// TestFetchRefusesDowngrade: a repository reached over https that
// redirects to plain http is refused, before anything is asked over
// http: the jar and its checksums would travel unprotected, where whoever
// is on the way could replace both. A redirect that stays on https is
// followed.
func TestFetchRefusesDowngrade(t *testing.T) {
	repo := t.TempDir()
	fakemaven.Repo(t, repo, "4.3.0", sharedSpecs, "")
	plain, asked := serve(t, repo)
	files0 := http.FileServer(http.Dir(repo))
	secure := httptest.NewTLSServer(files0)
	defer secure.Close()
	redirect := func(to string) *httptest.Server {
		s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, to+r.URL.Path, http.StatusFound)
		}))
		t.Cleanup(s.Close)
		return s
	}
	cache := t.TempDir()
	down := redirect(plain.URL)
	_, err := (&Fetcher{Repo: down.URL, Dir: cache, Client: down.Client()}).Fetch(context.Background(), "4.3.0")
	if !errors.Is(err, ErrInsecureRedirect) || !strings.Contains(err.Error(), plain.URL) {
		t.Errorf("https to http: %v", err)
	}
	var ne net.Error
	if errors.As(err, &ne) {
		t.Errorf("the refusal is a net.Error (read as an unreachable repository): %v", err)
	}
	if got := asked(); len(got) != 0 {
		t.Errorf("asked over plain http: %v", got)
	}
	if got := files(t, cache); len(got) != 0 {
		t.Errorf("cache holds %v", got)
	}
	up := redirect(secure.URL)
	res, err := (&Fetcher{Repo: up.URL, Dir: cache, Client: up.Client()}).Fetch(context.Background(), "4.3.0")
	if err != nil || len(res.Jars) == 0 {
		t.Errorf("https to https: %v", err)
	}
}
