package specfind

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/spec"
)

// jar writes a small synthetic jar (not Kafka's files) at p.
func jar(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(out)
	dir := "common/message"
	if art, _, _ := spec.ParseJarName(filepath.Base(p)); art == "metadata" {
		dir = "common/metadata"
	}
	w, _ := zw.Create(dir + "/ThingRecord.json")
	w.Write([]byte(`{"name": "ThingRecord", "type": "metadata", "apiKey": 0, "validVersions": "0", "flexibleVersions": "0+", "fields": []}`))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	out.Close()
}

// env is a fake environment; nothing of the real home is read.
type env map[string]string

func (e env) get(k string) string { return e[k] }

func layout(t *testing.T) (root string, e env, f *Finder) {
	root = t.TempDir()
	home := filepath.Join(root, "home")
	e = env{"HOME": home, "KAFKA_HOME": filepath.Join(root, "kafka_2.13-4.1.0"), "XDG_CACHE_HOME": filepath.Join(root, "xdg")}
	jar(t, filepath.Join(root, "kafka_2.13-4.1.0", "libs", "kafka-clients-4.1.0.jar"))
	jar(t, filepath.Join(root, "kafka_2.13-4.1.0", "libs", "kafka-metadata-4.1.0.jar"))
	m2 := filepath.Join(home, ".m2", "repository", "org", "apache", "kafka")
	for _, v := range []string{"3.9.0", "4.10.0", "4.9.1"} {
		jar(t, filepath.Join(m2, "kafka-clients", v, "kafka-clients-"+v+".jar"))
	}
	jar(t, filepath.Join(m2, "kafka-group-coordinator", "4.10.0", "kafka-group-coordinator-4.10.0.jar"))
	jar(t, filepath.Join(m2, "kafka-metadata", "4.9.0", "kafka-metadata-4.9.0.jar")) // no clients jar of 4.9.0: not paired
	os.MkdirAll(filepath.Join(m2, "kafka-clients", "5.0.0"), 0o755)                  // a .pom only, no jar
	gr := filepath.Join(home, ".gradle", "caches", "modules-2", "files-2.1", "org.apache.kafka")
	jar(t, filepath.Join(gr, "kafka-clients", "4.2.0", "0123abcd", "kafka-clients-4.2.0.jar"))
	jar(t, filepath.Join(gr, "kafka-raft", "4.2.0", "4567ef", "kafka-raft-4.2.0.jar"))
	jar(t, filepath.Join(root, "opt", "libs", "kafka-clients-4.0.0.jar"))
	jar(t, filepath.Join(root, "xdg", "manifester", "kafka", "4.3.0", "kafka-clients-4.3.0.jar"))
	f = &Finder{Getenv: e.get, GOOS: "linux", System: []System{{"/opt/kafka/libs", filepath.Join(root, "opt", "libs")}, {"Homebrew's Kafka", filepath.Join(root, "brew", "libs")}}}
	return root, e, f
}

func TestAllInSearchOrder(t *testing.T) {
	root, _, f := layout(t)
	var got []string
	for _, fd := range f.All() {
		got = append(got, fd.Where+" "+fd.Version+" "+strings.TrimPrefix(fd.Display(), root))
	}
	want := []string{
		"$KAFKA_HOME/libs 4.1.0 /kafka_2.13-4.1.0/libs",
		"the Maven cache 4.10.0 /home/.m2/repository/org/apache/kafka/kafka-clients/4.10.0/kafka-clients-4.10.0.jar",
		"the Maven cache 4.9.1 /home/.m2/repository/org/apache/kafka/kafka-clients/4.9.1/kafka-clients-4.9.1.jar",
		"the Maven cache 3.9.0 /home/.m2/repository/org/apache/kafka/kafka-clients/3.9.0/kafka-clients-3.9.0.jar",
		"the Gradle cache 4.2.0 /home/.gradle/caches/modules-2/files-2.1/org.apache.kafka/kafka-clients/4.2.0/0123abcd/kafka-clients-4.2.0.jar",
		"/opt/kafka/libs 4.0.0 /opt/libs",
		"manifester's cache 4.3.0 /xdg/manifester/kafka/4.3.0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	all := f.All()
	if all[0].Records != 1 || all[1].Records != 1 || all[2].Records != 0 || all[4].Records != 1 {
		t.Errorf("record jars: %+v", all)
	}
	// Every path opens, with its module jars.
	for _, fd := range all {
		src, err := spec.Open(fd.Path)
		if err != nil {
			t.Errorf("%s: %v", fd.Path, err)
			continue
		}
		if src.Label != fd.Version || len(src.Records) != fd.Records {
			t.Errorf("%s: label %q, %d record modules; found %s with %d", fd.Path, src.Label, len(src.Records), fd.Version, fd.Records)
		}
		src.Close()
	}
	best, ok := Newest(all)
	if !ok || best.Version != "4.10.0" || best.Where != "the Maven cache" {
		t.Errorf("newest = %+v", best)
	}
	if fd, ok := f.Version("4.3.0"); !ok || fd.Where != "manifester's cache" {
		t.Errorf("Version(4.3.0) = %+v, %v", fd, ok)
	}
	if fd, ok := f.Version("4.9"); !ok || fd.Version != "4.9.1" {
		t.Errorf("Version(4.9) = %+v, %v", fd, ok)
	}
	if _, ok := f.Version("4.4.0"); ok {
		t.Error("Version(4.4.0) found something")
	}
}

// TestNewestPrefersFirstPlace: the same release in two places is taken from
// the place searched first.
func TestNewestPrefersFirstPlace(t *testing.T) {
	root, e, f := layout(t)
	jar(t, filepath.Join(root, "brew", "libs", "kafka-clients-4.10.0.jar"))
	best, _ := Newest(f.All())
	if best.Where != "the Maven cache" {
		t.Errorf("newest from %s, want the Maven cache (searched before Homebrew)", best.Where)
	}
	delete(e, "HOME")
	best, _ = Newest(f.All())
	if best.Where != "Homebrew's Kafka" || best.Version != "4.10.0" {
		t.Errorf("without HOME: newest = %+v", best)
	}
}

func TestGradleUserHomeAndEmpty(t *testing.T) {
	root := t.TempDir()
	e := env{"HOME": filepath.Join(root, "home"), "GRADLE_USER_HOME": filepath.Join(root, "g")}
	f := &Finder{Getenv: e.get, GOOS: "linux"}
	if got := f.All(); len(got) != 0 {
		t.Errorf("empty machine: found %+v", got)
	}
	if _, ok := Newest(nil); ok {
		t.Error("Newest(nil) ok")
	}
	jar(t, filepath.Join(root, "g", "caches", "modules-2", "files-2.1", "org.apache.kafka", "kafka-clients", "4.2.0", "aa", "kafka-clients-4.2.0.jar"))
	if got := f.All(); len(got) != 1 || got[0].Where != "the Gradle cache" {
		t.Errorf("found %+v", got)
	}
}

func TestUserCacheDir(t *testing.T) {
	for _, c := range []struct {
		goos string
		env  env
		want string
	}{
		{"linux", env{"HOME": "/h", "XDG_CACHE_HOME": "/x"}, "/x"},
		{"linux", env{"HOME": "/h"}, "/h/.cache"},
		{"darwin", env{"HOME": "/h", "XDG_CACHE_HOME": "/x"}, "/h/Library/Caches"},
		{"windows", env{"LocalAppData": `C:\Users\u\AppData\Local`}, `C:\Users\u\AppData\Local`},
		{"linux", env{"XDG_CACHE_HOME": "rel"}, ""},
		{"linux", env{}, ""},
	} {
		f := &Finder{Getenv: c.env.get, GOOS: c.goos}
		got, err := f.UserCacheDir()
		if c.want == "" {
			if err == nil {
				t.Errorf("%s %v: %q, want an error", c.goos, c.env, got)
			}
			continue
		}
		if err != nil || filepath.ToSlash(got) != filepath.ToSlash(c.want) {
			t.Errorf("%s %v: %q, %v; want %q", c.goos, c.env, got, err, c.want)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	order := []string{"trunk-ish", "3.9.0", "4.3.0-SNAPSHOT", "4.3.0-rc1", "4.3.0", "4.3.1", "4.9.1", "4.10.0", "10.0"}
	for i := range order {
		for j := range order {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := CompareVersions(order[i], order[j]); got != want {
				t.Errorf("CompareVersions(%q, %q) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
	if CompareVersions("4.3", "4.3.0") != 0 {
		t.Error("4.3 != 4.3.0")
	}
}

// ExpandHome replaces a "~" no shell expanded, and nothing else.
func TestExpandHome(t *testing.T) {
	home := t.TempDir()
	f := &Finder{Getenv: env{"HOME": home}.get, GOOS: "linux"}
	for in, want := range map[string]string{
		"~":            home,
		"~/":           home,
		"~/kafka/libs": filepath.Join(home, "kafka", "libs"),
		"~user/kafka":  "~user/kafka",
		"kafka/~/x":    "kafka/~/x",
		"/abs/path":    "/abs/path",
		"4.3.0":        "4.3.0",
	} {
		if got := f.ExpandHome(in); got != want {
			t.Errorf("ExpandHome(%q) = %q, want %q", in, got, want)
		}
	}
	// Without a home, the path is left as it is (its error names it).
	if got := (&Finder{Getenv: env{}.get, GOOS: "linux"}).ExpandHome("~/x"); got != "~/x" {
		t.Errorf("without a home: %q", got)
	}
}

// The help's list of places names the cache folder of every system
// UserCacheDir knows, Windows' included.
func TestPlacesNameEveryCache(t *testing.T) {
	last := Places[len(Places)-1]
	for _, want := range []string{"$XDG_CACHE_HOME", "~/.cache", "~/Library/Caches", "%LocalAppData%"} {
		if !strings.Contains(last, want) {
			t.Errorf("Places does not name %s: %q", want, last)
		}
	}
}
