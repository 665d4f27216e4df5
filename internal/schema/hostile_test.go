package schema

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/spec"
)

// allocated returns the bytes f allocates on the heap, from the runtime's
// cumulative counter rather than a clock, so the bound holds at any load.
func allocated(f func()) uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	f()
	metrics.Read(s)
	return s[0].Value.Uint64() - before
}

// TestHostileFixturesBounded: loading each hostile fixture fails with its
// one error using little memory (the positions and messages are checked
// by TestBadSpecs).
func TestHostileFixturesBounded(t *testing.T) {
	for _, c := range []struct {
		dir string
		is  error
	}{
		{"recursive_self", ErrRecursive},
		{"recursive_twice", ErrRecursive},
		{"recursive_cycle", ErrRecursive},
		{"recursive_array", ErrRecursive},
		{"too_deep", spec.ErrTooDeep},
		{"doubling_structs", ErrTooLarge},
		{"deep_structs", ErrTooLarge},
	} {
		t.Run(c.dir, func(t *testing.T) {
			var err error
			n := allocated(func() { _, err = Load(filepath.Join(badSpecs, c.dir)) })
			if !errors.Is(err, c.is) {
				t.Fatalf("err = %v, want %v", err, c.is)
			}
			if n > 2<<20 {
				t.Errorf("loading allocated %d bytes, want <= 2 MiB", n)
			}
		})
	}
}

// doublingSpec is a message whose struct holds the next struct twice, for
// levels levels: 2^levels fields in the smallest instance.
func doublingSpec(levels int) *spec.File {
	var cs []string
	for i := 0; i < levels; i++ {
		cs = append(cs, fmt.Sprintf(`{"name": "L%d", "versions": "0+", "fields": [
			{"name": "A", "type": "L%d", "versions": "0+"}, {"name": "B", "type": "L%d", "versions": "0+"}]}`, i, i+1, i+1))
	}
	cs = append(cs, fmt.Sprintf(`{"name": "L%d", "versions": "0+", "fields": [{"name": "X", "type": "int8", "versions": "0+"}]}`, levels))
	src := `{"type": "data", "name": "Thing", "validVersions": "0", "flexibleVersions": "none",
		"fields": [{"name": "Top", "type": "L0", "versions": "0+"}], "commonStructs": [` + strings.Join(cs, ",\n") + `]}`
	f, err := spec.Parse("Thing.json", []byte(src))
	if err != nil {
		panic(err)
	}
	return f
}

// TestStructTwicePerLevel: 60 levels of a struct holding the next twice
// (2^60 fields if built) are rejected while checking, in memory linear in
// the spec: the graph walk visits each struct once.
func TestStructTwicePerLevel(t *testing.T) {
	f := doublingSpec(60)
	var err error
	n := allocated(func() { _, err = Build([]*spec.File{f}) })
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than 1104 fields") {
		t.Fatalf("err = %v", err)
	}
	if n > 1<<20 {
		t.Errorf("checking allocated %d bytes", n)
	}
	// 5 levels (62 fields) are within the limit and build.
	if _, err := Build([]*spec.File{doublingSpec(5)}); err != nil {
		t.Errorf("5 levels: %v", err)
	}
}

// TestInstanceProportional: the smallest instance is bounded in
// proportion to the fields the spec declares. 12 levels of a struct
// holding the next twice (2 KB of spec, 8190 fields in the smallest
// instance, under MaxInstanceFields) at validVersions "0-63" made
// `manifester build` write 1.8 GB (7.5 GB of memory): every version's
// page shows the instance.
func TestInstanceProportional(t *testing.T) {
	_, err := Build([]*spec.File{doublingSpec(12)})
	// 24 fields in L0-L11, one in L12, one in the body: 128 + 8*26.
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than 336 fields") {
		t.Errorf("12 levels: err = %v", err)
	}
	// A common struct of 10 fields used in 30 places (330 fields from 40
	// declared, more than Kafka's 2.25 per field) builds.
	var uses []string
	for i := range 30 {
		uses = append(uses, fmt.Sprintf(`{"name": "U%d", "type": "S", "versions": "0+"}`, i))
	}
	var sf []string
	for i := range 10 {
		sf = append(sf, fmt.Sprintf(`{"name": "F%d", "type": "int32", "versions": "0+"}`, i))
	}
	src := `{"type": "data", "name": "Wide", "validVersions": "0", "flexibleVersions": "none", "fields": [` + strings.Join(uses, ",") +
		`], "commonStructs": [{"name": "S", "versions": "0+", "fields": [` + strings.Join(sf, ",") + `]}]}`
	f, err := spec.Parse("Wide.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build([]*spec.File{f}); err != nil {
		t.Errorf("a struct used 30 times: %v", err)
	}
}

// TestRecursionThroughVersionsAndTags: a cycle is rejected however its
// fields are versioned or tagged (manifester does not build recursive
// types at all, so no walk of the struct graph can loop).
func TestRecursionThroughVersionsAndTags(t *testing.T) {
	src := `{"type": "data", "name": "Thing", "validVersions": "0-3", "flexibleVersions": "2+",
		"fields": [{"name": "N", "type": "Node", "versions": "0+", "fields": [
			{"name": "Next", "type": "Node", "versions": "3+", "taggedVersions": "3+", "tag": 0}]}]}`
	f, err := spec.Parse("Thing.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build([]*spec.File{f})
	if !errors.Is(err, ErrRecursive) || !strings.HasPrefix(err.Error(), "Thing.json:3:29: N.Next: ") {
		t.Errorf("err = %v", err)
	}
}

// TestMessageNames: a message name becomes URLs, file names of the built
// site and terminal text, so it is letters and digits only.
func TestMessageNames(t *testing.T) {
	for _, name := range []string{`Evil\u001b[31mRequest`, "../../etcRequest", "A BRequest", ""} {
		src := `{"apiKey": 90, "type": "request", "name": "` + name + `", "validVersions": "0", "flexibleVersions": "none", "fields": []}`
		f, err := spec.Parse("X.json", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Build([]*spec.File{f})
		if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), "invalid message name") {
			t.Errorf("name %q: err = %v", name, err)
		}
		if strings.ContainsRune(err.Error(), 0x1b) {
			t.Errorf("error carries a raw ESC: %q", err)
		}
	}
}

// TestValidVersionsBounded: a few hundred bytes of spec claiming
// validVersions "0-32766" made `manifester build` write a page per
// version and a diff page per pair of versions, each page listing every
// version (out of memory at 2.3 GB; "0-300" wrote 1 GB). The number of
// versions is bounded, with an error at validVersions.
func TestValidVersionsBounded(t *testing.T) {
	mk := func(valid string) *spec.File {
		src := `{"apiKey": 90, "type": "request", "name": "WideRequest",
  "validVersions": "` + valid + `", "flexibleVersions": "none",
  "fields": [{"name": "A", "type": "int8", "versions": "0+"}]}`
		f, err := spec.Parse("WideRequest.json", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, valid := range []string{"0-32766", "100-300", "0-64"} {
		_, err := Build([]*spec.File{mk(valid)})
		var list spec.ErrorList
		errors.As(err, &list)
		var got *spec.Error
		for _, e := range list {
			if errors.Is(e, ErrVersions) {
				got = e
			}
		}
		if got == nil || got.Pos.String() != "WideRequest.json:2:20" || !strings.Contains(got.Error(), "versions, more than 64") {
			t.Errorf("validVersions %q: err = %v", valid, err)
		}
	}
	// 64 versions, wherever they start, are accepted (Kafka's widest
	// range has 19); the response's absence is the only error.
	for _, valid := range []string{"0-63", "32703-32766"} {
		_, err := Build([]*spec.File{mk(valid)})
		if err == nil || strings.Contains(err.Error(), "versions") {
			t.Errorf("validVersions %q: err = %v", valid, err)
		}
	}
}

// TestAPINamesDifferInCase: two APIs whose names differ only in letter
// case (XssRequest at key 1000, XSSRequest at key 1001) shared one entry
// of the case-insensitive lookup, so `show xss` named one of them, and
// their pages /apis/Xss/ and /apis/XSS/ are one folder on macOS's and
// Windows' file systems, written by concurrent workers. They are refused.
func TestAPINamesDifferInCase(t *testing.T) {
	var files []*spec.File
	for i, name := range []string{"Xss", "XSS"} {
		for _, kind := range []string{"Request", "Response"} {
			src := fmt.Sprintf(`{"apiKey": %d, "type": "%s", "name": "%s%s", "validVersions": "0", "flexibleVersions": "none", "fields": []}`,
				1000+i, strings.ToLower(kind), name, kind)
			f, err := spec.Parse(name+kind+".json", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	_, err := Build(files)
	if !errors.Is(err, ErrDuplicate) || !strings.Contains(err.Error(), "XSSRequest.json:1:") || !strings.Contains(err.Error(), "differs from Xss (key 1000) only in letter case") {
		t.Errorf("err = %v", err)
	}
}

// TestResponseCoversRequest: a response whose validVersions leave out
// versions of its request (request "0-4", response "0") loaded, and then
// show, vectors, build, serve and diff failed on the first such version
// with "encode XssResponse: version outside the spec's range", naming no
// file. The load fails at the response's validVersions.
func TestResponseCoversRequest(t *testing.T) {
	var files []*spec.File
	for name, src := range map[string]string{
		"XRequest.json": `{"apiKey": 1000, "type": "request", "name": "XRequest", "validVersions": "0-4", "flexibleVersions": "none", "fields": []}`,
		"XResponse.json": `{"apiKey": 1000, "type": "response", "name": "XResponse",
  "validVersions": "0", "flexibleVersions": "none", "fields": []}`,
	} {
		f, err := spec.Parse(name, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	_, err := Build(files)
	if !errors.Is(err, ErrVersions) || !strings.HasPrefix(err.Error(), "XResponse.json:2:20: ") || !strings.Contains(err.Error(), "request XRequest has 0-4") {
		t.Errorf("err = %v", err)
	}
}

// TestCommonStructNames: a common struct's name is a type name, shown in
// the tagged-field tables of the site; "S\u001b[2J<b>x</b>" was accepted
// when no field used it (a field naming it is refused as a type that
// does not parse) and reached the pages with its escape character.
func TestCommonStructNames(t *testing.T) {
	src := `{"type": "data", "name": "Thing", "validVersions": "0-1", "flexibleVersions": "1+", "fields": [],
  "commonStructs": [{"name": "S\u001b[2J<b>x</b>", "versions": "0+", "fields": [{"name": "Q", "type": "int8", "versions": "1+", "taggedVersions": "1+", "tag": 0}]}]}`
	f, err := spec.Parse("Thing.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build([]*spec.File{f})
	if !errors.Is(err, ErrType) || !strings.HasPrefix(err.Error(), "Thing.json:2:30: ") || strings.ContainsRune(err.Error(), 0x1b) {
		t.Errorf("err = %q", err)
	}
}

// TestBuildLongNamePaths: the builder's field paths are bounded as the
// parser's are (spec.JoinPath). A field of a 256 KiB name holding 4096
// fields without versions copied the name into each field's path (1 GiB
// for a 330 KB spec) and printed it in each of the 4096 errors.
func TestBuildLongNamePaths(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"name": "X", "type": "data", "validVersions": "0", "flexibleVersions": "none", "fields": [{"name": "`)
	b.WriteString(strings.Repeat("A", 256<<10))
	b.WriteString(`", "type": "[]S", "versions": "0+", "fields": [`)
	for i := 0; i < 4096; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name": "B%d", "type": "int32"}`, i)
	}
	b.WriteString("]}]}")
	src := []byte(b.String())
	f, err := spec.Parse("Long.json", src)
	if err != nil {
		t.Fatal(err)
	}
	n := allocated(func() { _, err = Build([]*spec.File{f}) })
	if limit := uint64(64 * len(src)); n > limit {
		t.Fatalf("building %d bytes allocated %d bytes, want <= %d", len(src), n, limit)
	}
	var l spec.ErrorList
	if !errors.As(err, &l) || len(l) != spec.MaxErrorsPerFile+1 || !errors.Is(l[0], ErrVersions) {
		t.Fatalf("want %d version errors and a count of the rest, got %d: %.200v", spec.MaxErrorsPerFile, len(l), err)
	}
	for _, e := range l {
		if len(e.Path) > spec.MaxPathLen {
			t.Fatalf("a path of %d bytes, want <= %d: %.80s", len(e.Path), spec.MaxPathLen, e.Path)
		}
	}
}

// TestBuildErrorsBounded: the builder keeps at most
// spec.MaxErrorsPerFile errors of a file, then one that counts the rest.
// 100,000 fields without versions made 100,000 errors.
func TestBuildErrorsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"name": "X", "type": "data", "validVersions": "0", "flexibleVersions": "none", "fields": [`)
	for i := 0; i < 100000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name": "B%d", "type": "int8"}`, i)
	}
	b.WriteString("]}")
	f, err := spec.Parse("Many.json", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build([]*spec.File{f})
	var l spec.ErrorList
	if !errors.As(err, &l) || len(l) != spec.MaxErrorsPerFile+1 {
		t.Fatalf("want %d errors, got %d", spec.MaxErrorsPerFile+1, len(l))
	}
	if !errors.Is(l[0], ErrVersions) || !strings.HasPrefix(l[0].Error(), "Many.json:1:") {
		t.Errorf("first error %q", l[0])
	}
	col := strings.Index(b.String(), `{"name": "B100"`) + 1
	if last := l[len(l)-1].Error(); last != fmt.Sprintf("Many.json:1:%d: too many errors: 99900 more in this file not shown (the first of them is here)", col) {
		t.Errorf("last error %q", last)
	}
}
