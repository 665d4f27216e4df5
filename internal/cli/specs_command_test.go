package cli

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/fakemaven"
	"github.com/manifester/manifester/internal/specfind"
	"github.com/manifester/manifester/internal/testshared"
)

var (
	sharedSpecRoot    = testshared.Join("kafka-spec") + "/"
	sharedRecordsRoot = testshared.Join("kafka-records") + "/"
)

// machine is a fake machine: a home, a cache folder and the environment
// naming them. Nothing of the real home or system folders is read.
type machine struct {
	root string
	vars map[string]string
	sys  []specfind.System
}

func newMachine(t *testing.T) *machine {
	root := t.TempDir()
	return &machine{root: root, vars: map[string]string{
		"HOME":           filepath.Join(root, "home"),
		"XDG_CACHE_HOME": filepath.Join(root, "cache"),
	}}
}

func (m *machine) run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return m.vars[k] }, SpecPlaces: m.sys}
	code = Main(env, args)
	return code, out.String(), errb.String()
}

// mavenRepo serves a Maven-layout folder with release 4.3.0 built from
// ../shared over loopback HTTP.
func mavenRepo(t *testing.T) (url string, jars map[string]string) {
	t.Helper()
	dir := t.TempDir()
	jars = fakemaven.Repo(t, dir, "4.3.0", sharedSpecRoot+"4.3", sharedRecordsRoot+"4.3")
	fakemaven.WriteMetadata(t, dir, "4.3.0")
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv.URL, jars
}

// TestSpecsFetchThenShow is the fresh-machine path: fetch a release, then
// show an API with no --spec at all.
func TestSpecsFetchThenShow(t *testing.T) {
	url, _ := mavenRepo(t)
	m := newMachine(t)
	code, out, errs := m.run(t, "specs", "fetch", "--repo", url, "4.3.0")
	if code != ExitOK {
		t.Fatalf("fetch: exit %d: %s", code, errs)
	}
	cache := filepath.Join(m.root, "cache", "manifester", "kafka", "4.3.0")
	for _, want := range []string{"kafka-clients-4.3.0.jar", "kafka-metadata-4.3.0.jar", "sha1, sha256, sha512 verified", "stored in " + cache} {
		if !strings.Contains(out, want) {
			t.Errorf("fetch output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(cache, "kafka-group-coordinator-4.3.0.jar")); err != nil {
		t.Error(err)
	}

	if _, help, _ := m.run(t, "--help"); !strings.Contains(help, "Used now without --spec: Kafka 4.3.0 from manifester's cache ("+cache+").\n") {
		t.Errorf("--help does not say which specs are used:\n%s", help)
	}
	code, got, errs := m.run(t, "show", "AlterConfigs")
	if code != ExitOK {
		t.Fatalf("show without --spec: exit %d: %s", code, errs)
	}
	if want := "manifester: no --spec given: using Kafka 4.3.0 from manifester's cache (" + cache + ")\n"; errs != want {
		t.Errorf("stderr %q, want %q", errs, want)
	}
	code, want, _ := m.run(t, "show", "--spec", sharedSpecRoot+"4.3", "AlterConfigs")
	if code != ExitOK || got != want {
		t.Errorf("the fetched release shows AlterConfigs differently from ../shared/kafka-spec/4.3")
	}
	// A bare release number finds the cache too, with no note.
	code, got, errs = m.run(t, "show", "--spec", "4.3.0", "AlterConfigs")
	if code != ExitOK || got != want || errs != "" {
		t.Errorf("--spec 4.3.0: exit %d, same page %v, stderr %q", code, got == want, errs)
	}
	code, _, errs = m.run(t, "show", "--spec", "4.4.0", "AlterConfigs")
	if code != ExitUsage || !strings.Contains(errs, "release 4.4.0 was not found") || !strings.Contains(errs, "manifester specs fetch 4.4.0") {
		t.Errorf("--spec 4.4.0: exit %d, %s", code, errs)
	}

	// The listing shows it, with its record schemas, marked as the default.
	code, out, errs = m.run(t, "specs")
	if code != ExitOK {
		t.Fatalf("specs: exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "* ") || !strings.Contains(lines[1], "4.3.0") ||
		!strings.Contains(lines[1], " files, 7 modules") ||
		!strings.Contains(lines[1], "manifester's cache") || !strings.Contains(lines[1], cache) {
		t.Errorf("specs listing:\n%s", out)
	}
	code, want, _ = m.run(t, "apis", "--spec", sharedSpecRoot+"4.3")
	if n := strings.Count(strings.TrimSpace(want), "\n"); code != ExitOK || n < 80 {
		t.Fatalf("apis: exit %d, %d lines", code, n)
	}
}

// TestSpecsFetchMirrorFromEnv: $MANIFESTER_MAVEN_REPO names the mirror.
func TestSpecsFetchMirrorFromEnv(t *testing.T) {
	url, _ := mavenRepo(t)
	m := newMachine(t)
	m.vars["MANIFESTER_MAVEN_REPO"] = url
	if code, _, errs := m.run(t, "specs", "fetch", "4.3.0"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// Without VERSION, the repository's latest release.
	if code, out, errs := m.run(t, "specs", "fetch"); code != ExitOK || !strings.HasPrefix(out, "latest release: 4.3.0\n") {
		t.Errorf("fetch without VERSION: exit %d: %s%s", code, out, errs)
	}
	// No such release in the mirror: exit 1.
	if code, _, errs := m.run(t, "specs", "fetch", "4.2.0"); code != ExitFailure || !strings.Contains(errs, "kafka-clients-4.2.0.jar") {
		t.Errorf("missing release: exit %d: %s", code, errs)
	}
	// Not a version: exit 2, and nothing asked.
	if code, _, errs := m.run(t, "specs", "fetch", "../../x"); code != ExitUsage || !strings.Contains(errs, "bad version") {
		t.Errorf("bad version: exit %d: %s", code, errs)
	}
}

// TestSpecsFetchUnreachable: a repository that cannot be reached (a
// closed port here; offline or a firewall in the field) is an error that
// says what to do instead; a release the repository does not have is not.
func TestSpecsFetchUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	m := newMachine(t)
	for _, args := range [][]string{{"4.3.0"}, {}} {
		code, _, errs := m.run(t, append([]string{"specs", "fetch", "--repo", closed}, args...)...)
		if code != ExitFailure || !strings.Contains(errs, "could not be reached (offline, or behind a firewall?)") || !strings.Contains(errs, "HTTPS_PROXY") ||
			len(args) > 0 && !strings.Contains(errs, "--spec PATH/TO/kafka-clients-4.3.0.jar") {
			t.Errorf("%v: exit %d: %s", args, code, errs)
		}
	}
	url, _ := mavenRepo(t)
	if code, _, errs := m.run(t, "specs", "fetch", "--repo", url, "4.2.0"); code != ExitFailure || strings.Contains(errs, "could not be reached") {
		t.Errorf("missing release: exit %d: %s", code, errs)
	}
}

// TestSpecsFetchChecksumMismatch: exit 1, and nothing is left in the cache.
func TestSpecsFetchChecksumMismatch(t *testing.T) {
	url, jars := mavenRepo(t)
	os.WriteFile(jars["kafka-streams"]+".sha1", []byte(strings.Repeat("1", 40)+"\n"), 0o644)
	m := newMachine(t)
	code, _, errs := m.run(t, "specs", "fetch", "--repo", url, "4.3.0")
	if code != ExitFailure || !strings.Contains(errs, "checksum mismatch") || !strings.Contains(errs, "kafka-streams-4.3.0.jar") {
		t.Errorf("exit %d: %s", code, errs)
	}
	entries, _ := os.ReadDir(filepath.Join(m.root, "cache", "manifester", "kafka", "4.3.0"))
	if len(entries) != 0 {
		t.Errorf("the cache holds %d files after a mismatch", len(entries))
	}
	// And with nothing stored, nothing is found.
	if code, _, _ := m.run(t, "show", "AlterConfigs"); code != ExitUsage {
		t.Errorf("show after a failed fetch: exit %d", code)
	}
}

func TestNoSpecsFound(t *testing.T) {
	m := newMachine(t)
	code, out, errs := m.run(t, "show", "AlterConfigs")
	if code != ExitUsage || out != "" {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	if n := strings.Count(errs, "\n"); n != 3 {
		t.Errorf("the error has %d lines, want 3:\n%s", n, errs)
	}
	for _, w := range []string{"--spec PATH", "$MANIFESTER_SPEC", "Maven and Gradle caches", "manifester specs fetch 4.3.0"} {
		if !strings.Contains(errs, w) {
			t.Errorf("the error lacks %q:\n%s", w, errs)
		}
	}
	if _, help, _ := m.run(t, "--help"); !strings.Contains(help, "Used now without --spec: none found.\n") {
		t.Errorf("--help on an empty machine:\n%s", help)
	}
	code, out, _ = m.run(t, "specs")
	if code != ExitOK || !strings.HasPrefix(out, "No spec sources found.\n") || !strings.Contains(out, "specs fetch") {
		t.Errorf("specs on an empty machine: exit %d:\n%s", code, out)
	}
}

// TestDiscoveryOrderAndNewest lays out several places: the newest release
// wins whatever its place, and a tie goes to the place searched first.
func TestDiscoveryOrderAndNewest(t *testing.T) {
	m := newMachine(t)
	kh := filepath.Join(m.root, "kafka_2.13-4.2.0")
	m.vars["KAFKA_HOME"] = kh
	fakemaven.WriteJar(t, filepath.Join(kh, "libs", "kafka-clients-4.2.0.jar"), "common/message", sharedSpecRoot+"4.2")
	m2 := filepath.Join(m.vars["HOME"], ".m2", "repository")
	fakemaven.Repo(t, m2, "3.9.0", sharedSpecRoot+"3.9", "")
	gr := filepath.Join(m.vars["HOME"], ".gradle", "caches", "modules-2", "files-2.1", "org.apache.kafka", "kafka-clients", "4.3.0", "5d5c")
	fakemaven.WriteJar(t, filepath.Join(gr, "kafka-clients-4.3.0.jar"), "common/message", sharedSpecRoot+"4.3")
	opt := filepath.Join(m.root, "opt", "kafka", "libs")
	fakemaven.WriteJar(t, filepath.Join(opt, "kafka-clients-4.3.0.jar"), "common/message", sharedSpecRoot+"4.3")
	m.sys = []specfind.System{{Where: "/opt/kafka/libs", Dir: opt}}

	code, _, errs := m.run(t, "apis")
	if code != ExitOK || !strings.Contains(errs, "using Kafka 4.3.0 from the Gradle cache") {
		t.Errorf("exit %d, stderr %q; want 4.3.0 from the Gradle cache (before /opt/kafka/libs)", code, errs)
	}
	code, out, errs := m.run(t, "specs")
	if code != ExitOK {
		t.Fatalf("specs: exit %d: %s", code, errs)
	}
	var order []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:5] {
		f := strings.Fields(strings.TrimPrefix(l, "*"))
		order = append(order, f[0])
	}
	if strings.Join(order, " ") != "4.2.0 3.9.0 4.3.0 4.3.0" || strings.Count(out, "\n*   ") != 1 {
		t.Errorf("listing order %v:\n%s", order, out)
	}
	// $MANIFESTER_SPEC comes before discovery.
	m.vars["MANIFESTER_SPEC"] = sharedSpecRoot + "4.1"
	if code, _, errs := m.run(t, "apis"); code != ExitOK || errs != "" {
		t.Errorf("with MANIFESTER_SPEC: exit %d, stderr %q", code, errs)
	}
}

// TestDiffReleaseBetweenJars: two jars are labelled by their file names,
// so --release compares them.
func TestDiffReleaseBetweenJars(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "kafka-clients-3.9.0.jar")
	b := filepath.Join(dir, "kafka-clients-4.0.0.jar")
	fakemaven.WriteJar(t, a, "common/message", sharedSpecRoot+"3.9")
	fakemaven.WriteJar(t, b, "common/message", sharedSpecRoot+"4.0")
	m := newMachine(t)
	code, out, errs := m.run(t, "diff", "--spec", a, "--spec", b, "--release", "3.9.0", "4.0.0")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	code, want, _ := m.run(t, "diff", "--spec", "3.9.0="+sharedSpecRoot+"3.9", "--spec", "4.0.0="+sharedSpecRoot+"4.0", "--release", "3.9.0", "4.0.0")
	if code != ExitOK || out != want || out == "" {
		t.Errorf("jar diff differs from the folder diff:\n%s\nwant\n%s", out, want)
	}
}

// TestSpecDistributionWithRecords: a distribution folder and the
// comma-separated folders of ../shared load with their record schemas.
func TestSpecDistributionWithRecords(t *testing.T) {
	dist := filepath.Join(t.TempDir(), "kafka_2.13-4.3.0")
	jars := fakemaven.Repo(t, t.TempDir(), "4.3.0", sharedSpecRoot+"4.3", sharedRecordsRoot+"4.3")
	os.MkdirAll(filepath.Join(dist, "libs"), 0o755)
	for art, p := range jars {
		b, _ := os.ReadFile(p)
		os.WriteFile(filepath.Join(dist, "libs", art+"-4.3.0.jar"), b, 0o644)
	}
	m := newMachine(t)
	code, out, errs := m.run(t, "specs", "--spec", dist, "--spec", sharedSpecRoot+"4.3,"+sharedRecordsRoot+"4.3")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "4.3.0") || !strings.Contains(lines[2], "4.3 ") {
		t.Fatalf("listing:\n%s", out)
	}
	for _, l := range lines[1:] {
		if !strings.Contains(l, " files, 7 modules") {
			t.Errorf("no record schemas listed: %s", l)
		}
	}
	if code, _, errs := m.run(t, "show", "--spec", dist, "Produce"); code != ExitOK {
		t.Errorf("show --spec DIST: exit %d: %s", code, errs)
	}
}

// TestSpecTildePath: a --spec whose "~" no shell expanded (--spec=~/x, a
// quoted $MANIFESTER_SPEC in a profile) is read from the home folder, as
// the user meant, rather than refused as a missing file named "~".
func TestSpecTildePath(t *testing.T) {
	m := newMachine(t)
	fakemaven.WriteJar(t, filepath.Join(m.vars["HOME"], "kafka", "kafka-clients-4.3.0.jar"), "common/message", sharedSpecRoot+"4.3")
	const p = "~/kafka/kafka-clients-4.3.0.jar"
	for _, args := range [][]string{
		{"apis", "--spec=" + p},
		{"apis", "--spec", "mine=" + p},
		{"diff", "--spec", "A=" + p, "--spec", "B=" + sharedSpecRoot + "4.2", "--release", "B", "A"},
		{"specs", "--spec", p},
	} {
		if code, _, errs := m.run(t, args...); code != ExitOK {
			t.Errorf("%q: exit %d: %s", args, code, errs)
		}
	}
	m.vars["MANIFESTER_SPEC"] = p
	if code, _, errs := m.run(t, "apis"); code != ExitOK {
		t.Errorf("MANIFESTER_SPEC=%s: exit %d: %s", p, code, errs)
	}
}

// TestSpecPathWithEquals: a folder whose name holds "=" is a path, not
// LABEL=PATH; a label with no path after it is a usage error naming the
// flag, not "stat : no such file or directory".
func TestSpecPathWithEquals(t *testing.T) {
	m := newMachine(t)
	dir := filepath.Join(m.root, "kafka=4.3")
	if err := os.Symlink(filepath.Clean(sharedSpecRoot+"4.3"), dir); err != nil {
		t.Skip(err)
	}
	for _, args := range [][]string{{"apis", "--spec", dir}, {"specs", "--spec", dir}, {"apis", "--spec", "mine=" + dir}} {
		if code, _, errs := m.run(t, args...); code != ExitOK {
			t.Errorf("%q: exit %d: %s", args, code, errs)
		}
	}
	for _, cmd := range []string{"apis", "specs"} {
		code, _, errs := m.run(t, cmd, "--spec", "mine=")
		if code != ExitUsage || !strings.Contains(errs, `--spec "mine=": no path after the label`) {
			t.Errorf("%s --spec mine=: exit %d: %s", cmd, code, errs)
		}
	}
}

// TestSpecsFetchBadRepo: a --repo (or $MANIFESTER_MAVEN_REPO) that is not
// an http(s) URL is bad usage, exit 2, as a bad VERSION is; nothing is
// fetched and no cache folder is made.
func TestSpecsFetchBadRepo(t *testing.T) {
	m := newMachine(t)
	for _, args := range [][]string{{"--repo", "repo.maven.apache.org/maven2", "4.3.0"}, {"--repo", "ftp://mirror/maven2"}} {
		code, _, errs := m.run(t, append([]string{"specs", "fetch"}, args...)...)
		if code != ExitUsage || !strings.Contains(errs, "not an http(s) URL") {
			t.Errorf("%q: exit %d: %s", args, code, errs)
		}
	}
	m.vars["MANIFESTER_MAVEN_REPO"] = "/srv/maven"
	if code, _, errs := m.run(t, "specs", "fetch", "4.3.0"); code != ExitUsage || !strings.Contains(errs, `"/srv/maven"`) {
		t.Errorf("MANIFESTER_MAVEN_REPO=/srv/maven: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(m.root, "cache", "manifester")); err == nil {
		t.Errorf("a cache folder was made")
	}
}

// TestRecordsTildePath: --records=~/x, where no shell expands the "~",
// reads from the home folder, as --spec=~/x does.
func TestRecordsTildePath(t *testing.T) {
	m := newMachine(t)
	if err := os.MkdirAll(m.vars["HOME"], 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Clean(sharedRecordsRoot+"4.3"), filepath.Join(m.vars["HOME"], "records")); err != nil {
		t.Skip(err)
	}
	code, out, errs := m.run(t, "show", "--spec", sharedSpecRoot+"4.3", "--records=~/records", "TopicRecord")
	if code != ExitOK || !strings.HasPrefix(out, "TopicRecord\n") {
		t.Errorf("exit %d: %s", code, errs)
	}
	m.vars["MANIFESTER_RECORDS"] = "~/records"
	if code, _, errs := m.run(t, "show", "--spec", sharedSpecRoot+"4.3", "TopicRecord"); code != ExitOK {
		t.Errorf("MANIFESTER_RECORDS=~/records: exit %d: %s", code, errs)
	}
}
