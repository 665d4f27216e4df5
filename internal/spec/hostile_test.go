package spec

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"runtime/metrics"
	"strings"
	"testing"
)

// allocated returns the bytes f allocates on the heap, read from the
// runtime's cumulative allocation counter (not from a clock), so the bound
// holds on a loaded machine.
func allocated(f func()) uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	f()
	metrics.Read(s)
	return s[0].Value.Uint64() - before
}

// oneLineSpec is a valid spec of n fields written on one line, each with
// an about: a few MB with a position for every value.
func oneLineSpec(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"apiKey": 90, "type": "request", "name": "WideRequest", "validVersions": "0", "flexibleVersions": "none", "fields": [`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name": "F%d", "type": "int32", "versions": "0+", "default": "%d", "about": "field number %d of a wide message"}`, i, i, i)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// TestParseOneLineSpecLinear: a 3 MB spec on one line parses with memory
// proportional to its size. Before positions were found by binary search
// over line starts, every position rescanned the file (minutes for this
// input, so the test's own deadline bounds its time).
func TestParseOneLineSpecLinear(t *testing.T) {
	src := oneLineSpec(30000)
	if len(src) < 3<<20 {
		t.Fatalf("spec is %d bytes, want >= 3 MB", len(src))
	}
	var f *File
	var err error
	n := allocated(func() { f, err = Parse("Wide.json", src) })
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Message.Fields) != 30000 {
		t.Fatalf("%d fields", len(f.Message.Fields))
	}
	last := f.Message.Fields[29999]
	if last.About.Pos.Line != 1 || last.About.Pos.Col != bytes.LastIndex(src, []byte(`"field number 29999`))+1 {
		t.Errorf("last about at %s", last.About.Pos)
	}
	if limit := uint64(64 * len(src)); n > limit {
		t.Errorf("parsing %d bytes allocated %d bytes, want <= %d", len(src), n, limit)
	}
	// Half the fields, about half the memory: linear, not worse.
	half := oneLineSpec(15000)
	h := allocated(func() { _, err = Parse("Wide.json", half) })
	if err != nil {
		t.Fatal(err)
	}
	if float64(n) > 2.3*float64(h) {
		t.Errorf("twice the input allocated %.2fx the memory (%d vs %d bytes)", float64(n)/float64(h), n, h)
	}
}

// TestParseErrorsOnOneLine: thousands of errors on one long line (each
// needs a position) stay linear too; the first MaxErrorsPerFile are kept.
func TestParseErrorsOnOneLine(t *testing.T) {
	src := bytes.ReplaceAll(oneLineSpec(20000), []byte(`"default"`), []byte(`"defaultt"`))
	var err error
	n := allocated(func() { _, err = Parse("Wide.json", src) })
	var list ErrorList
	if !errors.As(err, &list) || len(list) != MaxErrorsPerFile+1 || !errors.Is(list[0], ErrUnknownKey) || !errors.Is(list[MaxErrorsPerFile], ErrTooManyErrors) {
		t.Fatalf("want %d unknown-key errors and a count of the rest, got %d: %.200v", MaxErrorsPerFile, len(list), err)
	}
	if got := list[MaxErrorsPerFile-1].Pos.Col; got != bytes.Index(src, []byte(`"defaultt": "99"`))+1 {
		t.Errorf("the last error kept is at column %d, not the 100th field's", got)
	}
	if limit := uint64(60 * len(src)); n > limit {
		t.Errorf("parsing %d bytes allocated %d bytes, want <= %d", len(src), n, limit)
	}
}

// TestPosMatchesRescan checks the binary search against the definition
// (count the newlines before the offset) at random offsets.
func TestPosMatchesRescan(t *testing.T) {
	src := []byte("{\n\r\n  \"a\": 1,\n\n\n  \"b\": [\n]}\nx")
	p := &parser{file: "f", src: src}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		off := rng.Intn(len(src) + 3)
		o := min(off, len(src))
		line := 1 + bytes.Count(src[:o], []byte("\n"))
		col := 1 + o - (bytes.LastIndexByte(src[:o], '\n') + 1)
		if got := p.pos(off); got.Line != line || got.Col != col {
			t.Fatalf("pos(%d) = %d:%d, want %d:%d", off, got.Line, got.Col, line, col)
		}
	}
	if len(p.lines) != 1+bytes.Count(src, []byte("\n")) {
		t.Errorf("line index has %d starts", len(p.lines))
	}
}

// TestParseDeepNesting: a megabyte of '[' is an error at the first level
// too many, found before the recursive JSON parser runs (no stack
// overflow, little memory).
func TestParseDeepNesting(t *testing.T) {
	for _, c := range []struct {
		name string
		src  []byte
	}{
		{"arrays", append([]byte(`{"name": "X", "type": "data", "fields": `), bytes.Repeat([]byte("["), 1<<20)...)},
		{"objects", []byte(`{"a":` + strings.Repeat(`{"a":`, 1<<18))},
		{"fields", []byte(strings.Repeat(`{"name": "A", "type": "[]A", "versions": "0+", "fields": [`, 60))},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			n := allocated(func() { _, err = Parse("Deep.json", c.src) })
			if !errors.Is(err, ErrTooDeep) {
				t.Fatalf("err = %v, want ErrTooDeep", err)
			}
			if !strings.HasPrefix(err.Error(), "Deep.json:1:") || !strings.Contains(err.Error(), "deeper than 100 levels") {
				t.Errorf("message %q", err)
			}
			if limit := uint64(16*len(c.src)) + 1<<20; n > limit {
				t.Errorf("allocated %d bytes for %d bytes of input, want <= %d", n, len(c.src), limit)
			}
		})
	}
	// Brackets inside strings and comments do not count.
	src := "{\"name\": \"" + strings.Repeat("[", 500) + "\", // " + strings.Repeat("{", 500) + "\n /* " + strings.Repeat("[", 500) + " */ \"type\": \"data\"}"
	if _, err := Parse("Flat.json", []byte(src)); errors.Is(err, ErrTooDeep) {
		t.Errorf("brackets in strings or comments counted: %v", err)
	}
	// Kafka's deepest nesting (9) and the limit itself parse.
	ok := []byte(`{"name": "X", "type": "data", "x": ` + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + "}")
	if _, err := Parse("Max.json", ok); errors.Is(err, ErrTooDeep) {
		t.Errorf("depth %d rejected: %v", MaxDepth, err)
	}
}

// longNameSpec is a spec whose one field has a name of n bytes and holds
// children empty objects, each an error ("name" and "type" missing) under
// that field's path.
func longNameSpec(n, children int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"name": "X", "type": "data", "validVersions": "0", "flexibleVersions": "none", "fields": [{"name": "`)
	b.WriteString(strings.Repeat("A", n))
	b.WriteString(`", "type": "[]S", "versions": "0+", "fields": [`)
	for i := 0; i < children; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("{}")
	}
	b.WriteString("]}]}")
	return b.Bytes()
}

// TestParseLongNamePaths: a field path in an error shows at most
// MaxPathLen bytes of it. A field of a 256 KiB name holding 4096 empty
// objects copied the name into the path of each (1 GiB for a 264 KB
// file; minutes and gigabytes for a 4 MiB one), and each of the 8192
// errors printed it whole.
func TestParseLongNamePaths(t *testing.T) {
	src := longNameSpec(256<<10, 4096)
	var err error
	n := allocated(func() { _, err = Parse("Long.json", src) })
	if limit := uint64(64 * len(src)); n > limit {
		t.Fatalf("parsing %d bytes allocated %d bytes, want <= %d", len(src), n, limit)
	}
	var l ErrorList
	if !errors.As(err, &l) || len(l) != MaxErrorsPerFile+1 {
		t.Fatalf("want %d errors, got %d", MaxErrorsPerFile+1, len(l))
	}
	for _, e := range l {
		if len(e.Path) > MaxPathLen {
			t.Fatalf("a path of %d bytes, want <= %d: %.80s", len(e.Path), MaxPathLen, e.Path)
		}
	}
	if want := "Long.json:1:"; !strings.HasPrefix(l[0].Error(), want) || !strings.Contains(l[0].Path, "AAAA") {
		t.Errorf("first error %.200q", l[0].Error())
	}
}

// TestParseErrorsBounded: a file keeps at most MaxErrorsPerFile errors,
// then one that counts the rest. 200,000 empty objects in a "fields"
// array (600 KB) made 400,000 errors, some 100 MB held and printed; a
// folder of 4 MiB files, gigabytes.
func TestParseErrorsBounded(t *testing.T) {
	src := longNameSpec(8, 200000)
	var err error
	n := allocated(func() { _, err = Parse("Many.json", src) })
	var l ErrorList
	if !errors.As(err, &l) || len(l) != MaxErrorsPerFile+1 {
		t.Fatalf("want %d errors, got %d", MaxErrorsPerFile+1, len(l))
	}
	last := l[len(l)-1]
	// Two errors an object: the first dropped is the 51st object's.
	col := bytes.Index(src, []byte("[{}")) + 1 + 3*(MaxErrorsPerFile/2) + 1
	if !errors.Is(last, ErrTooManyErrors) || last.Error() != fmt.Sprintf("Many.json:1:%d: too many errors: %d more in this file not shown (the first of them is here)", col, 400000-MaxErrorsPerFile) {
		t.Errorf("last error %q", last)
	}
	if !errors.Is(l[0], ErrMissing) || !strings.HasPrefix(l[0].Error(), "Many.json:1:") {
		t.Errorf("first error %q", l[0])
	}
	// The JSON parser's tree costs some 450 bytes for each "{}" (3
	// bytes); the fields and errors built from it no more than that.
	if limit := uint64(200 * len(src)); n > limit {
		t.Errorf("parsing %d bytes allocated %d bytes, want <= %d", len(src), n, limit)
	}
}
