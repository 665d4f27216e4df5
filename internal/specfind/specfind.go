// Package specfind finds Kafka's message specs on a machine when none are
// given: in a Kafka installation, in the Maven and Gradle caches that Java
// builds fill with kafka-clients jars, and in manifester's own cache (where
// `manifester specs fetch` stores them).
//
// The places are searched in the order of [Places]; [Newest] picks the
// newest release among everything found. Every path the package returns is
// one that spec.Open accepts: a libs/ folder, a cache folder of jars, or the
// comma-separated jars of one release.
package specfind

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/manifester/manifester/internal/spec"
)

// Found is one spec source found on the machine.
type Found struct {
	Version string // the release, from the kafka-clients jar's name: "4.3.0"
	Path    string // what to give spec.Open
	Where   string // the place it was found in, e.g. "the Maven cache"
	Records int    // how many module jars with record schemas sit beside it
}

// Display is the path to show for f: its folder or its kafka-clients jar.
func (f Found) Display() string {
	p, _, _ := strings.Cut(f.Path, ",")
	return p
}

// Places describes the search order, one line per place, for help texts.
var Places = []string{
	"$KAFKA_HOME/libs",
	"the Maven cache (~/.m2/repository/org/apache/kafka/kafka-clients/VERSION/)",
	"the Gradle cache (~/.gradle/caches/modules-2/files-2.1/org.apache.kafka/kafka-clients/)",
	"/opt/kafka/libs",
	"Homebrew's Kafka (/opt/homebrew/opt/kafka/libexec/libs, /usr/local/opt/kafka/libexec/libs)",
	"manifester's cache (USER_CACHE_DIR/manifester/kafka/VERSION/: $XDG_CACHE_HOME or ~/.cache, ~/Library/Caches on macOS, %LocalAppData% on Windows; filled by `manifester specs fetch VERSION`)",
}

// DefaultSystem are the fixed folders of Kafka installations searched after
// the Gradle cache.
var DefaultSystem = []System{
	{"/opt/kafka/libs", "/opt/kafka/libs"},
	{"Homebrew's Kafka", "/opt/homebrew/opt/kafka/libexec/libs"},
	{"Homebrew's Kafka", "/usr/local/opt/kafka/libexec/libs"},
}

// System is one fixed folder of a Kafka installation.
type System struct {
	Where string
	Dir   string
}

// Finder searches the places of one environment.
type Finder struct {
	// Getenv reads the environment (HOME, KAFKA_HOME, GRADLE_USER_HOME,
	// XDG_CACHE_HOME, ...); tests give a fake one.
	Getenv func(string) string
	// GOOS decides where the home and cache folders are; runtime.GOOS when
	// empty.
	GOOS string
	// System are the fixed installation folders, searched between the
	// Gradle cache and manifester's cache.
	System []System
}

// New returns a Finder for the environment getenv with the default fixed
// folders.
func New(getenv func(string) string) *Finder {
	return &Finder{Getenv: getenv, System: DefaultSystem}
}

func (f *Finder) goos() string {
	if f.GOOS != "" {
		return f.GOOS
	}
	return runtime.GOOS
}

// Home is the user's home folder, from the environment.
func (f *Finder) Home() (string, error) {
	var h string
	switch f.goos() {
	case "windows":
		h = f.Getenv("USERPROFILE")
	case "plan9":
		h = f.Getenv("home")
	default:
		h = f.Getenv("HOME")
	}
	if h == "" {
		return "", errors.New("specfind: the home folder is not set ($HOME)")
	}
	return h, nil
}

// ExpandHome returns p with a leading "~" (alone, or before a path
// separator) replaced by the home folder, when p names nothing as it
// is: a shell expands "~" only at the start of a word, so --spec=~/x and
// a quoted "~/x" in $MANIFESTER_SPEC reach the program as they were typed.
// "~user" forms, and every other path, are returned unchanged.
func (f *Finder) ExpandHome(p string) string {
	rest, ok := strings.CutPrefix(p, "~")
	if !ok || rest != "" && rest[0] != '/' && !os.IsPathSeparator(rest[0]) {
		return p
	}
	if _, err := os.Lstat(p); err == nil {
		return p
	}
	h, err := f.Home()
	if err != nil {
		return p
	}
	return filepath.Join(h, rest)
}

// UserCacheDir is os.UserCacheDir read through f.Getenv: $XDG_CACHE_HOME or
// ~/.cache on Unix, ~/Library/Caches on macOS, %LocalAppData% on Windows.
func (f *Finder) UserCacheDir() (string, error) {
	switch f.goos() {
	case "windows":
		if d := f.Getenv("LocalAppData"); d != "" {
			return d, nil
		}
		return "", errors.New("specfind: %LocalAppData% is not set")
	case "darwin", "ios":
		h, err := f.Home()
		if err != nil {
			return "", err
		}
		return filepath.Join(h, "Library", "Caches"), nil
	case "plan9":
		h, err := f.Home()
		if err != nil {
			return "", err
		}
		return filepath.Join(h, "lib", "cache"), nil
	}
	if d := f.Getenv("XDG_CACHE_HOME"); d != "" {
		if !filepath.IsAbs(d) {
			return "", errors.New("specfind: $XDG_CACHE_HOME is a relative path")
		}
		return d, nil
	}
	h, err := f.Home()
	if err != nil {
		return "", err
	}
	return filepath.Join(h, ".cache"), nil
}

// CacheDir is manifester's cache of Kafka jars: UserCacheDir/manifester/kafka.
// Release VERSION is stored in CacheDir/VERSION/.
func (f *Finder) CacheDir() (string, error) {
	d, err := f.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "manifester", "kafka"), nil
}

// All returns every spec source found, in the order of [Places]; within a
// place, newest release first.
func (f *Finder) All() []Found {
	var out []Found
	if kh := f.Getenv("KAFKA_HOME"); kh != "" {
		out = append(out, libsDir(filepath.Join(kh, "libs"), "$KAFKA_HOME/libs")...)
	}
	if h, err := f.Home(); err == nil {
		out = append(out, f.maven(filepath.Join(h, ".m2", "repository"))...)
	}
	gradle := f.Getenv("GRADLE_USER_HOME")
	if gradle == "" {
		if h, err := f.Home(); err == nil {
			gradle = filepath.Join(h, ".gradle")
		}
	}
	if gradle != "" {
		out = append(out, f.gradle(filepath.Join(gradle, "caches", "modules-2", "files-2.1", "org.apache.kafka"))...)
	}
	for _, s := range f.System {
		out = append(out, libsDir(s.Dir, s.Where)...)
	}
	if c, err := f.CacheDir(); err == nil {
		out = append(out, cache(c)...)
	}
	return out
}

// Newest picks the newest release of found; among equal releases the one
// found first. ok is false when found is empty.
func Newest(found []Found) (best Found, ok bool) {
	for i, f := range found {
		if i == 0 || CompareVersions(f.Version, best.Version) > 0 {
			best = f
		}
	}
	return best, len(found) > 0
}

// Version finds release v: a source whose release is exactly v, else the
// newest whose release starts with v and a dot ("4.3" finds 4.3.1).
func (f *Finder) Version(v string) (Found, bool) {
	all := f.All()
	for _, fd := range all {
		if fd.Version == v {
			return fd, true
		}
	}
	var prefixed []Found
	for _, fd := range all {
		if strings.HasPrefix(fd.Version, v+".") {
			prefixed = append(prefixed, fd)
		}
	}
	return Newest(prefixed)
}

// libsDir finds the kafka-clients jar of a libs/ folder.
func libsDir(dir, where string) []Found {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Found
	records := map[string]int{}
	for _, e := range entries {
		art, v, ok := spec.ParseJarName(e.Name())
		if !ok || e.IsDir() {
			continue
		}
		if art == "clients" {
			out = append(out, Found{Version: v, Path: dir, Where: where})
		} else if isRecordModule(art) {
			records[v]++
		}
	}
	if len(out) > 1 {
		// spec.Open refuses an ambiguous folder; name each jar instead.
		for i := range out {
			out[i].Path = filepath.Join(dir, "kafka-clients-"+out[i].Version+".jar")
		}
	}
	for i := range out {
		out[i].Records = records[out[i].Version]
	}
	sortNewestFirst(out)
	return out
}

// maven finds repo/org/apache/kafka/kafka-clients/V/kafka-clients-V.jar and
// the module jars of the same version.
func (f *Finder) maven(repo string) []Found {
	group := filepath.Join(repo, "org", "apache", "kafka")
	var out []Found
	for _, v := range subdirs(filepath.Join(group, "kafka-clients")) {
		jar := filepath.Join(group, "kafka-clients", v, "kafka-clients-"+v+".jar")
		if !isFile(jar) {
			continue
		}
		fd := Found{Version: v, Path: jar, Where: "the Maven cache"}
		for _, m := range spec.RecordModules {
			mj := filepath.Join(group, "kafka-"+m, v, "kafka-"+m+"-"+v+".jar")
			if isFile(mj) {
				fd.Path += "," + mj
				fd.Records++
			}
		}
		out = append(out, fd)
	}
	sortNewestFirst(out)
	return out
}

// gradle finds group/kafka-clients/V/HASH/kafka-clients-V.jar and the module
// jars of the same version.
func (f *Finder) gradle(group string) []Found {
	find := func(artifact, v string) string {
		for _, h := range subdirs(filepath.Join(group, artifact, v)) {
			jar := filepath.Join(group, artifact, v, h, artifact+"-"+v+".jar")
			if isFile(jar) {
				return jar
			}
		}
		return ""
	}
	var out []Found
	for _, v := range subdirs(filepath.Join(group, "kafka-clients")) {
		jar := find("kafka-clients", v)
		if jar == "" {
			continue
		}
		fd := Found{Version: v, Path: jar, Where: "the Gradle cache"}
		for _, m := range spec.RecordModules {
			if mj := find("kafka-"+m, v); mj != "" {
				fd.Path += "," + mj
				fd.Records++
			}
		}
		out = append(out, fd)
	}
	sortNewestFirst(out)
	return out
}

// cache finds dir/V/kafka-clients-V.jar.
func cache(dir string) []Found {
	var out []Found
	for _, v := range subdirs(dir) {
		for _, fd := range libsDir(filepath.Join(dir, v), "manifester's cache") {
			if fd.Version == v {
				out = append(out, fd)
			}
		}
	}
	sortNewestFirst(out)
	return out
}

func isRecordModule(art string) bool {
	for _, m := range spec.RecordModules {
		if m == art {
			return true
		}
	}
	return false
}

func subdirs(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func sortNewestFirst(l []Found) {
	sort.SliceStable(l, func(i, j int) bool { return CompareVersions(l[i].Version, l[j].Version) > 0 })
}

// CompareVersions orders Kafka release numbers: numerically part by part
// ("4.10.0" after "4.9.1"), a release after its pre-releases ("4.3.0" after
// "4.3.0-SNAPSHOT" and "4.3.0-rc1"), and anything that does not start with
// a number before every version. It returns -1, 0 or 1.
func CompareVersions(a, b string) int {
	na, sa, oka := splitVersion(a)
	nb, sb, okb := splitVersion(b)
	switch {
	case !oka && !okb:
		return strings.Compare(a, b)
	case !oka:
		return -1
	case !okb:
		return 1
	}
	for i := 0; i < len(na) || i < len(nb); i++ {
		x, y := at(na, i), at(nb, i)
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	switch {
	case sa == sb:
		return 0
	case sa == "":
		return 1
	case sb == "":
		return -1
	}
	return strings.Compare(sa, sb)
}

// splitVersion splits "4.3.0-SNAPSHOT" into [4 3 0] and "SNAPSHOT".
func splitVersion(s string) ([]int, string, bool) {
	num, suffix, _ := strings.Cut(s, "-")
	var out []int
	for _, p := range strings.Split(num, ".") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, "", false
		}
		out = append(out, n)
	}
	return out, suffix, true
}

func at(v []int, i int) int {
	if i < len(v) {
		return v[i]
	}
	return 0
}
