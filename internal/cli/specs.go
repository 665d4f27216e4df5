package cli

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/release"
	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/specfind"
)

// specFlags collects repeated --spec [LABEL=]PATH flags.
type specFlags []string

func (s *specFlags) String() string     { return strings.Join(*s, ",") }
func (s *specFlags) Set(v string) error { *s = append(*s, v); return nil }

// Release is one loaded spec source: the one release type (package
// release), named here for the commands' files.
type Release = release.Release

// load reads every --spec (or $MANIFESTER_SPEC, or the newest release
// found on the machine) and returns the releases sorted oldest first; the
// last one is the newest.
func (s specFlags) load(env *Env) ([]*Release, error) {
	args := []string(s)
	if len(args) == 0 {
		if p := env.Getenv("MANIFESTER_SPEC"); p != "" {
			args = []string{p}
		} else {
			found, ok := specfind.Newest(finder(env).All())
			if !ok {
				return nil, errNoSpecs
			}
			fmt.Fprintln(env.Stderr, text.Escape(fmt.Sprintf("manifester: no --spec given: using Kafka %s from %s (%s)", found.Version, found.Where, found.Display())))
			args = []string{found.Path}
		}
	}
	var out []*Release
	seen := map[string]bool{}
	for _, a := range args {
		label, path, err := splitSpec(a)
		if err != nil {
			return nil, err
		}
		path, err = resolveVersions(env, path)
		if err != nil {
			return nil, err
		}
		reg, err := schema.Load(path)
		if err != nil {
			return nil, usageError{fmt.Errorf("loading specs from %s:\n%w", path, err)}
		}
		if label == "" {
			label = reg.Label
		}
		reg.Label = label
		if seen[label] {
			return nil, usagef("two --spec flags are labelled %q", label)
		}
		seen[label] = true
		c := codec.New(reg)
		out = append(out, &Release{Label: label, Path: path, Reg: reg, Codec: c})
	}
	sort.SliceStable(out, func(i, j int) bool { return releaseLess(out[i].Label, out[j].Label) })
	return out, nil
}

// splitSpec splits a --spec (or $MANIFESTER_SPEC) into its label and
// path: LABEL=PATH, or PATH alone. A path that holds "=" itself (a folder
// named kafka=4.3) is a path alone when it exists or when a path
// separator comes before its "=". A label without a path is a usage error.
func splitSpec(a string) (label, path string, err error) {
	label, path, ok := strings.Cut(a, "=")
	if !ok || strings.ContainsAny(label, `/\`) {
		return "", a, nil
	}
	if _, err := os.Stat(a); err == nil {
		return "", a, nil
	}
	if path == "" {
		return "", "", usagef("--spec %q: no path after the label", a)
	}
	return label, path, nil
}

// specsInUse says which specs a command run without --spec would use.
func specsInUse(env *Env) string {
	if p := env.Getenv("MANIFESTER_SPEC"); p != "" {
		return "$MANIFESTER_SPEC (" + p + ")"
	}
	found, ok := specfind.Newest(finder(env).All())
	if !ok {
		return "none found"
	}
	return fmt.Sprintf("Kafka %s from %s (%s)", found.Version, found.Where, found.Display())
}

// errNoSpecs says, in three lines, where specs can come from.
var errNoSpecs = usagef("no Kafka specs found: give --spec PATH (a spec folder, Kafka source checkout, Kafka download or jar) or set $MANIFESTER_SPEC;\n" +
	"searched $KAFKA_HOME/libs, the Maven and Gradle caches, /opt/kafka/libs, Homebrew's Kafka and manifester's cache (see manifester --help);\n" +
	"or download the specs of a release once: manifester specs fetch " + suggestedRelease)

// suggestedRelease is the release the hints propose to fetch.
const suggestedRelease = "4.3.0"

// finder searches the places of env for specs.
func finder(env *Env) *specfind.Finder {
	return &specfind.Finder{Getenv: env.Getenv, System: env.SpecPlaces}
}

// releaseNumber matches a bare release number given as --spec (4.3.0, 4.3,
// 4.5.0-SNAPSHOT).
var releaseNumber = regexp.MustCompile(`^[0-9]+(\.[0-9]+)+(-[0-9A-Za-z.]+)?$`)

// resolveVersions replaces each comma-separated part of p that is a release
// number and not an existing path by the spec source of that release found
// on the machine, and a leading "~" no shell expanded by the home folder.
func resolveVersions(env *Env, p string) (string, error) {
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	parts := strings.Split(p, ",")
	for i, q := range parts {
		if e := finder(env).ExpandHome(q); e != q {
			parts[i] = e
			continue
		}
		if !releaseNumber.MatchString(q) {
			continue
		}
		if _, err := os.Stat(q); err == nil {
			continue
		}
		found, ok := finder(env).Version(q)
		if !ok {
			return "", usagef("release %s was not found in %s;\ndownload it once with: manifester specs fetch %s", q, strings.Join(shortPlaces, ", "), q)
		}
		parts[i] = found.Path
	}
	return strings.Join(parts, ","), nil
}

// expandHome replaces a leading "~" that no shell expanded in each
// comma-separated part of p by the home folder (specfind.ExpandHome).
func expandHome(env *Env, p string) string {
	parts := strings.Split(p, ",")
	for i, q := range parts {
		parts[i] = finder(env).ExpandHome(q)
	}
	return strings.Join(parts, ",")
}

// shortPlaces names the places searched, briefly.
var shortPlaces = []string{"$KAFKA_HOME/libs", "the Maven and Gradle caches", "/opt/kafka/libs", "Homebrew's Kafka", "manifester's cache"}

// newest loads the specs and returns the newest release.
func (s specFlags) newest(env *Env) (*Release, []*Release, error) {
	rels, err := s.load(env)
	if err != nil {
		return nil, nil, err
	}
	return rels[len(rels)-1], rels, nil
}

// releaseLess orders labels like "3.9" < "4.0" < "4.10"; labels that are
// not versions sort after versions, by name.
func releaseLess(a, b string) bool {
	va, oka := parseRelease(a)
	vb, okb := parseRelease(b)
	switch {
	case oka && okb:
		for i := 0; i < len(va) || i < len(vb); i++ {
			x, y := at(va, i), at(vb, i)
			if x != y {
				return x < y
			}
		}
		return false
	case oka != okb:
		return oka
	}
	return a < b
}

func parseRelease(s string) ([]int, bool) {
	var out []int
	for _, p := range strings.Split(s, ".") {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

func at(v []int, i int) int {
	if i < len(v) {
		return v[i]
	}
	return 0
}

// lookupAPI resolves an API argument and checks the version, with usage
// errors that say what would be valid.
func lookupAPI(reg *schema.Registry, arg string, version int) (*schema.API, int16, error) {
	api, err := reg.Lookup(arg)
	if err != nil {
		return nil, 0, usageError{err}
	}
	if api.Reserved() {
		return nil, 0, usagef("%s (key %d) is reserved in this spec: it has no valid versions", api.Name, api.Key)
	}
	v := api.Request.Valid.Hi
	if version < -1 { // -1 is the flag's "highest" default
		return nil, 0, usageError{fmt.Errorf("%w: %s has no version %d; valid versions are %s", codec.ErrVersion, api.Name, version, api.Request.Valid)}
	}
	if version >= 0 {
		if version > 32767 || !api.Request.Valid.Contains(int16(version)) {
			return nil, 0, usageError{fmt.Errorf("%w: %s has no version %d; valid versions are %s", codec.ErrVersion, api.Name, version, api.Request.Valid)}
		}
		v = int16(version)
	}
	return api, v, nil
}
