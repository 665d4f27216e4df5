// Package specfetch downloads the jars that carry Kafka's message specs and
// record schemas (kafka-clients and the module jars) from a Maven
// repository, verifies each against the repository's published checksums
// and stores them in manifester's cache, one folder per release.
//
// Nothing is stored unless every jar downloaded was verified: the jars are
// written to temporary files in the release folder and renamed into place
// only at the end; on any failure the temporary files are deleted.
package specfetch

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// DefaultRepo is Maven Central.
const DefaultRepo = "https://repo.maven.apache.org/maven2"

// Limits of one download.
const (
	DefaultMaxJar   = 64 << 20 // the largest jar fetched (kafka-streams) is a few MiB
	maxChecksumFile = 4 << 10
	maxMetadataFile = 1 << 20
)

// ClientsArtifact holds the message specs; the fetch fails without it.
const ClientsArtifact = "kafka-clients"

// ModuleArtifacts hold record schemas; a release that lacks one (older
// releases have no share coordinator) is fetched without it, and the
// result says so.
var ModuleArtifacts = []string{
	"kafka-group-coordinator", "kafka-share-coordinator", "kafka-transaction-coordinator",
	"kafka-metadata", "kafka-raft", "kafka-streams", "kafka-storage",
}

// Sentinel errors, for errors.Is.
var (
	ErrChecksum  = errors.New("checksum mismatch")
	ErrNotFound  = errors.New("not in the repository")
	ErrTooLarge  = errors.New("download larger than the limit")
	ErrVersion   = errors.New("bad version")
	ErrNoSpecJar = errors.New("no message specs in the jar")
	ErrRepo      = errors.New("not an http(s) URL")
	// ErrInsecureRedirect is the cause when a repository reached over
	// https redirects to plain http.
	ErrInsecureRedirect = errors.New("redirect from https to plain http refused")
)

// Fetcher downloads releases from one repository into one cache folder.
type Fetcher struct {
	Repo   string       // the repository's base URL; DefaultRepo when empty
	Dir    string       // manifester's cache: release V goes to Dir/V/
	Client *http.Client // nil: a client with the timeouts below
	MaxJar int64        // the largest jar accepted; DefaultMaxJar when 0
	// Timeout bounds each download (connection, headers and body); 5
	// minutes when 0.
	Timeout time.Duration
	// Verified, when set, is called after each jar was downloaded and
	// verified, before anything is stored (a later failure still stores
	// nothing).
	Verified func(Jar)
}

// Jar is one verified, stored jar.
type Jar struct {
	Artifact string   // "kafka-clients"
	Path     string   // where it is stored
	Size     int64    // bytes
	Verified []string // the checksums compared: "sha1", "sha256", "sha512"
}

// Result is what one fetch stored.
type Result struct {
	Version string
	Dir     string   // Dir/VERSION
	Jars    []Jar    // kafka-clients first, then the module jars found
	Missing []string // module artifacts the repository has no jar of for this version
}

var versionRE = regexp.MustCompile(`^[0-9][0-9A-Za-z._+-]{0,63}$`)

// CheckVersion refuses version strings that could not be a Kafka release or
// that would escape the cache folder.
func CheckVersion(v string) error {
	if !versionRE.MatchString(v) || strings.Contains(v, "..") {
		return fmt.Errorf("%w %q: want a release number such as 4.3.0", ErrVersion, v)
	}
	return nil
}

func (f *Fetcher) repo() (string, error) {
	r := f.Repo
	if r == "" {
		r = DefaultRepo
	}
	u, err := url.Parse(r)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("specfetch: repository %q is %w", r, ErrRepo)
	}
	return strings.TrimRight(r, "/"), nil
}

func (f *Fetcher) client() *http.Client {
	if f.Client != nil {
		return f.Client
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = 30 * time.Second
	t.ResponseHeaderTimeout = time.Minute
	return &http.Client{Transport: t}
}

// httpClient is f.client() with the redirect policy of [checkRedirect]
// (which replaces any the client has).
func (f *Fetcher) httpClient() *http.Client {
	c := *f.client()
	c.CheckRedirect = checkRedirect
	return &c
}

// maxRedirects is how many redirects one download follows, as many as
// net/http's own policy.
const maxRedirects = 10

// checkRedirect follows at most maxRedirects redirects, and none from a
// request made over https to plain http: the jar and its checksums would
// then travel unprotected, where whoever is on the way could replace
// both.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
		return fmt.Errorf("%w: %s redirects to %s", ErrInsecureRedirect, via[len(via)-1].URL.Redacted(), req.URL.Redacted())
	}
	return nil
}

func (f *Fetcher) timeout() time.Duration {
	if f.Timeout > 0 {
		return f.Timeout
	}
	return 5 * time.Minute
}

func (f *Fetcher) maxJar() int64 {
	if f.MaxJar > 0 {
		return f.MaxJar
	}
	return DefaultMaxJar
}

// Latest reads the repository's maven-metadata.xml of kafka-clients and
// returns its release version.
func (f *Fetcher) Latest(ctx context.Context) (string, error) {
	repo, err := f.repo()
	if err != nil {
		return "", err
	}
	u := repo + "/org/apache/kafka/" + ClientsArtifact + "/maven-metadata.xml"
	b, err := f.small(ctx, u, maxMetadataFile)
	if err != nil {
		return "", fmt.Errorf("specfetch: reading the latest release: %w", err)
	}
	v, err := parseMetadata(b)
	if err != nil {
		return "", fmt.Errorf("specfetch: %s: %w", u, err)
	}
	return v, nil
}

// parseMetadata returns the release (else the latest version) that a
// maven-metadata.xml names, checked by [CheckVersion].
func parseMetadata(b []byte) (string, error) {
	var md struct {
		Release string `xml:"versioning>release"`
		Latest  string `xml:"versioning>latest"`
	}
	if err := xml.Unmarshal(b, &md); err != nil {
		return "", err
	}
	v := md.Release
	if v == "" {
		v = md.Latest
	}
	if err := CheckVersion(v); err != nil {
		return "", err
	}
	return v, nil
}

// pending is a verified download not yet renamed into place.
type pending struct {
	tmp string
	jar Jar
}

// Fetch downloads kafka-clients-VERSION.jar and the module jars of
// [ModuleArtifacts] that the repository has, verifies each against its
// .sha1 (required) and .sha256 and .sha512 (when published), checks that the
// clients jar holds message specs, and stores them in Dir/VERSION/.
func (f *Fetcher) Fetch(ctx context.Context, version string) (*Result, error) {
	if err := CheckVersion(version); err != nil {
		return nil, err
	}
	repo, err := f.repo()
	if err != nil {
		return nil, err
	}
	if f.Dir == "" {
		return nil, errors.New("specfetch: no cache folder")
	}
	dir := filepath.Join(f.Dir, version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("specfetch: %w", err)
	}
	res := &Result{Version: version, Dir: dir}
	var done []pending
	cleanup := func() {
		for _, p := range done {
			os.Remove(p.tmp)
		}
		os.Remove(dir) // only when empty: a failed first fetch leaves no folder
	}
	for _, art := range append([]string{ClientsArtifact}, ModuleArtifacts...) {
		p, err := f.fetchJar(ctx, repo, dir, art, version)
		if errors.Is(err, ErrNotFound) && art != ClientsArtifact {
			res.Missing = append(res.Missing, art)
			continue
		}
		if err != nil {
			cleanup()
			return nil, err
		}
		done = append(done, p)
		if art == ClientsArtifact {
			if err := checkSpecJar(p.tmp); err != nil {
				cleanup()
				return nil, fmt.Errorf("specfetch: %s-%s.jar: %w", art, version, err)
			}
		}
		if f.Verified != nil {
			f.Verified(p.jar)
		}
	}
	for i, p := range done {
		if err := os.Rename(p.tmp, p.jar.Path); err != nil {
			for _, q := range done[i:] {
				os.Remove(q.tmp)
			}
			return nil, fmt.Errorf("specfetch: %w", err)
		}
		res.Jars = append(res.Jars, p.jar)
	}
	return res, nil
}

// fetchJar downloads one jar to a temporary file in dir and verifies it.
func (f *Fetcher) fetchJar(ctx context.Context, repo, dir, art, version string) (pending, error) {
	name := art + "-" + version + ".jar"
	u := repo + "/org/apache/kafka/" + art + "/" + version + "/" + name
	tmp, err := os.CreateTemp(dir, "."+name+".part-*")
	if err != nil {
		return pending{}, fmt.Errorf("specfetch: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	sums := map[string]hash.Hash{"sha1": sha1.New(), "sha256": sha256.New(), "sha512": sha512.New()}
	w := io.MultiWriter(tmp, sums["sha1"], sums["sha256"], sums["sha512"])
	n, err := f.download(ctx, u, w, f.maxJar())
	if err != nil {
		return pending{}, fmt.Errorf("specfetch: %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return pending{}, fmt.Errorf("specfetch: %w", err)
	}
	jar := Jar{Artifact: art, Path: filepath.Join(dir, name), Size: n}
	for _, alg := range []string{"sha1", "sha256", "sha512"} {
		want, err := f.checksum(ctx, u+"."+alg, alg)
		if errors.Is(err, ErrNotFound) && alg != "sha1" {
			continue // only .sha1 is published for every artifact
		}
		if errors.Is(err, ErrNotFound) {
			return pending{}, fmt.Errorf("specfetch: %s: the repository publishes no .sha1; refusing an unverified jar: %w", name, err)
		}
		if err != nil {
			return pending{}, fmt.Errorf("specfetch: %s.%s: %w", name, alg, err)
		}
		got := hex.EncodeToString(sums[alg].Sum(nil))
		if got != want {
			return pending{}, fmt.Errorf("specfetch: %s: %w: %s is %s, the repository says %s; the download was deleted", name, ErrChecksum, alg, got, want)
		}
		jar.Verified = append(jar.Verified, alg)
	}
	ok = true
	return pending{tmp: tmp.Name(), jar: jar}, nil
}

// checksum reads a .sha1/.sha256/.sha512 file: hex digits, optionally
// followed by white space and a file name.
func (f *Fetcher) checksum(ctx context.Context, u, alg string) (string, error) {
	b, err := f.small(ctx, u, maxChecksumFile)
	if err != nil {
		return "", err
	}
	return parseChecksum(b, alg)
}

// parseChecksum reads the digest of algorithm alg from the text of a
// checksum file, in lower case.
func parseChecksum(b []byte, alg string) (string, error) {
	fields := strings.Fields(string(b))
	size := map[string]int{"sha1": sha1.Size, "sha256": sha256.Size, "sha512": sha512.Size}[alg]
	if len(fields) == 0 {
		return "", fmt.Errorf("empty checksum file")
	}
	sum := strings.ToLower(fields[0])
	if _, err := hex.DecodeString(sum); err != nil || len(sum) != 2*size {
		return "", fmt.Errorf("not a %s checksum: %q", alg, truncate(fields[0], 80))
	}
	return sum, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// small downloads a small file whole.
func (f *Fetcher) small(ctx context.Context, u string, limit int64) ([]byte, error) {
	var b bytes.Buffer
	if _, err := f.download(ctx, u, &b, limit); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// download GETs u into w, refusing more than limit bytes; a 404 or 410 is
// ErrNotFound.
func (f *Fetcher) download(ctx context.Context, u string, w io.Writer, limit int64) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("User-Agent", "manifester (specs fetch)")
	resp, err := f.httpClient().Do(req)
	if err != nil {
		var ue *url.Error
		if errors.Is(err, ErrInsecureRedirect) && errors.As(err, &ue) {
			// The refusal, not a *url.Error: that is a net.Error, which
			// reads as a repository that could not be reached.
			return 0, ue.Err
		}
		return 0, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return 0, fmt.Errorf("%s: %w (HTTP %d)", u, ErrNotFound, resp.StatusCode)
	case resp.StatusCode != http.StatusOK:
		return 0, fmt.Errorf("%s: HTTP %s", u, resp.Status)
	}
	if resp.ContentLength > limit {
		return 0, fmt.Errorf("%s: %w: %d bytes announced, at most %d accepted", u, ErrTooLarge, resp.ContentLength, limit)
	}
	n, err := io.Copy(w, io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return n, fmt.Errorf("%s: after %d bytes: %w", u, n, err)
	}
	if n > limit {
		return n, fmt.Errorf("%s: %w: more than %d bytes", u, ErrTooLarge, limit)
	}
	return n, nil
}

// checkSpecJar checks that a kafka-clients jar holds the message specs.
func checkSpecJar(p string) error {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return fmt.Errorf("%w: not a jar: %v", ErrNoSpecJar, err)
	}
	defer zr.Close()
	for _, e := range zr.File {
		if e.Name == "common/message/RequestHeader.json" {
			return nil
		}
	}
	return fmt.Errorf("%w (common/message/RequestHeader.json is missing)", ErrNoSpecJar)
}
