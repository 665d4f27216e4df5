package schema

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxVersion is the upper bound of an open-ended range ("N+").
const MaxVersion = 32767

// MaxValidVersions bounds the number of versions in a message's
// validVersions. Kafka's widest range has 19 versions; the site builds a
// page per version, each listing every version, and a diff page per pair
// of versions, so a crafted "0-32766" would make gigabytes of pages.
const MaxValidVersions = 64

// Versions is an inclusive range of message versions. The empty range
// ("none") has Lo > Hi.
type Versions struct {
	Lo, Hi int16
}

// None is the empty version range.
var None = Versions{Lo: 1, Hi: 0}

// All is the range "0+".
var All = Versions{Lo: 0, Hi: MaxVersion}

// ParseVersions parses "N", "A-B", "N+" or "none". Blank text is an error;
// callers apply the key's default before parsing. A reversed range (A > B)
// is rejected, where Kafka's Java code silently treats it as empty.
func ParseVersions(s string) (Versions, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return None, fmt.Errorf("empty version range")
	case s == "none":
		return None, nil
	case strings.HasSuffix(s, "+"):
		lo, err := parseVersion(s[:len(s)-1])
		if err != nil {
			return None, fmt.Errorf("bad version range %q: %w", s, err)
		}
		return Versions{Lo: lo, Hi: MaxVersion}, nil
	case strings.Contains(s, "-"):
		a, b, _ := strings.Cut(s, "-")
		lo, err := parseVersion(a)
		if err != nil {
			return None, fmt.Errorf("bad version range %q: %w", s, err)
		}
		hi, err := parseVersion(b)
		if err != nil {
			return None, fmt.Errorf("bad version range %q: %w", s, err)
		}
		if lo > hi {
			return None, fmt.Errorf("reversed version range %q: %d > %d", s, lo, hi)
		}
		return Versions{Lo: lo, Hi: hi}, nil
	default:
		v, err := parseVersion(s)
		if err != nil {
			return None, fmt.Errorf("bad version range %q: %w", s, err)
		}
		return Versions{Lo: v, Hi: v}, nil
	}
}

func parseVersion(s string) (int16, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a non-negative integer", s)
	}
	n, err := strconv.ParseInt(s, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return int16(n), nil
}

// Empty reports whether the range holds no version.
func (v Versions) Empty() bool { return v.Lo > v.Hi }

// Contains reports whether x is in the range.
func (v Versions) Contains(x int16) bool { return x >= v.Lo && x <= v.Hi }

// Open reports whether the range is open-ended ("N+").
func (v Versions) Open() bool { return !v.Empty() && v.Hi == MaxVersion }

// Intersect returns the versions in both ranges.
func (v Versions) Intersect(o Versions) Versions {
	r := Versions{Lo: max(v.Lo, o.Lo), Hi: min(v.Hi, o.Hi)}
	if r.Empty() {
		return None
	}
	return r
}

// Covers reports whether every version of o is in v.
func (v Versions) Covers(o Versions) bool {
	return o.Empty() || (!v.Empty() && v.Lo <= o.Lo && o.Hi <= v.Hi)
}

// String formats the range the way spec files write it.
func (v Versions) String() string {
	switch {
	case v.Empty():
		return "none"
	case v.Hi == MaxVersion:
		return fmt.Sprintf("%d+", v.Lo)
	case v.Lo == v.Hi:
		return strconv.Itoa(int(v.Lo))
	default:
		return fmt.Sprintf("%d-%d", v.Lo, v.Hi)
	}
}
