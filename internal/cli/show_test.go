package cli_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/cli"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/spec"
	"github.com/manifester/manifester/internal/testshared"
)

// Paths from this package to the specs and fixtures; specs are read in
// place, never copied.
var specDir43 = testshared.SpecPath("4.3")

const (
	badSpecDir   = "../../testdata/specs/bad"
	everyTypeDir = "../../testdata/specs/everytype"
)

// mainRun runs the command line in-process and returns the exit status,
// stdout and stderr.
func mainRun(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	testshared.Dir(t)
	var out, errb bytes.Buffer
	e := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }}
	code := cli.Main(e, args)
	return code, out.String(), errb.String()
}

func TestShowByNameAndKey(t *testing.T) {
	code, want, errs := mainRun(t, nil, "show", "--spec", specDir43, "AlterConfigs")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.HasPrefix(want, "AlterConfigs\n") || !strings.Contains(want, "Request size       25 bytes") || !strings.Contains(want, "Response size      21 bytes") {
		t.Errorf("unexpected page:\n%s", want)
	}
	for _, args := range [][]string{
		{"show", "--spec", specDir43, "alterconfigs"},
		{"show", "--spec", specDir43, "ALTERCONFIGS"},
		{"show", "--spec", specDir43, "33"},
		{"show", "--spec", specDir43, "AlterConfigsRequest"},
		{"show", "33", "--spec", specDir43}, // flags may follow the API
		{"show", "--spec", specDir43, "--version", "2", "33"},
		{"show", "--spec=4.3=" + specDir43, "33"},
	} {
		code, got, errs := mainRun(t, nil, args...)
		if code != cli.ExitOK || got != want {
			t.Errorf("%q: exit %d, same page %t; %s", args, code, got == want, errs)
		}
	}
	// $MANIFESTER_SPEC stands in for --spec.
	if code, got, _ := mainRun(t, map[string]string{"MANIFESTER_SPEC": specDir43}, "show", "33"); code != cli.ExitOK || got != want {
		t.Errorf("with MANIFESTER_SPEC: exit %d", code)
	}
}

func TestShowVersion(t *testing.T) {
	code, out, errs := mainRun(t, nil, "show", "--spec", specDir43, "--version", "0", "AlterConfigs")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"Encoded at         v0",
		"Headers            req v1, resp v0",
		"Version 0 is not a flexible version",
		"AlterConfigsRequest v0, request header v1,",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("v0 page lacks %q", want)
		}
	}
	for _, re := range []string{
		`ResourceName +string += "" \(int16 len=0\) +\[0x0013, 2B\]`, // classic string
		`length +int32 += 1 +\[0x000e, 4B\]`,                         // classic array count
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("v0 page does not match %s", re)
		}
	}
	if strings.Contains(out, "tagged_fields") {
		t.Errorf("a v0 page has tagged fields")
	}
}

func TestShowJSON(t *testing.T) {
	code, out, errs := mainRun(t, nil, "show", "--spec", specDir43, "--format", "json", "DescribeAcls")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	type node struct {
		Name     string  `json:"name"`
		Path     string  `json:"path"`
		Type     string  `json:"type"`
		Value    string  `json:"text"`
		Typed    any     `json:"value"`
		Offset   int     `json:"offset"`
		Size     int     `json:"size"`
		Category string  `json:"category"`
		Children []*node `json:"children"`
	}
	var doc struct {
		API     string `json:"api"`
		APIKey  int    `json:"api_key"`
		Version int    `json:"version"`
		Summary []struct {
			Label string `json:"label"`
			Value string `json:"value"`
		} `json:"summary"`
		Request, Response struct {
			Size int    `json:"size"`
			Hex  string `json:"hex"`
			Tree *node  `json:"tree"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.API != "DescribeAcls" || doc.APIKey != 29 || doc.Version != 3 || len(doc.Summary) != 8 {
		t.Errorf("doc = %+v", doc)
	}
	if doc.Summary[0].Label != "API key" || doc.Summary[0].Value != "29" {
		t.Errorf("summary[0] = %+v", doc.Summary[0])
	}
	for _, s := range []struct {
		name string
		size int
		hex  string
		tree *node
	}{{"request", 23, doc.Request.Hex, doc.Request.Tree}, {"response", 28, doc.Response.Hex, doc.Response.Tree}} {
		b, err := hex.DecodeString(s.hex)
		if err != nil || len(b) != s.size {
			t.Errorf("%s hex %q: %d bytes, want %d (%v)", s.name, s.hex, len(b), s.size, err)
			continue
		}
		if s.tree == nil || s.tree.Size != s.size || len(s.tree.Children) != 3 {
			t.Errorf("%s tree = %+v", s.name, s.tree)
			continue
		}
		// Every leaf's offset and size lie in the frame, and the frame size
		// node holds the size prefix.
		var walk func(n *node)
		walk = func(n *node) {
			if n.Offset < 0 || n.Offset+n.Size > s.size {
				t.Errorf("%s node %s at [%d,+%d] outside the frame", s.name, n.Path, n.Offset, n.Size)
			}
			for _, k := range n.Children {
				walk(k)
			}
		}
		walk(s.tree)
		size := s.tree.Children[0].Children[0]
		if size.Path != "Frame.size" || size.Value != "= "+strconv.Itoa(s.size-4) || size.Typed != float64(s.size-4) || size.Category != "frame" {
			t.Errorf("%s size node = %+v", s.name, size)
		}
	}
}

func TestShowErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want []string // in stderr
	}{
		{"unknown name suggests close ones", []string{"show", "--spec", specDir43, "AlterConfig"}, []string{"unknown API", "did you mean", "AlterConfigs"}},
		{"misspelled name", []string{"show", "--spec", specDir43, "DescribeAcl"}, []string{"did you mean", "DescribeAcls"}},
		{"unknown key", []string{"show", "--spec", specDir43, "999"}, []string{"unknown API", "999"}},
		{"version above the range", []string{"show", "--spec", specDir43, "--version", "3", "AlterConfigs"}, []string{"no version 3", "valid versions are 0-2"}},
		{"version below the range", []string{"show", "--spec", specDir43, "--version", "0", "DescribeAcls"}, []string{"no version 0", "valid versions are 1-3"}},
		{"negative version", []string{"show", "--spec", specDir43, "--version", "-5", "AlterConfigs"}, []string{"no version -5", "valid versions are 0-2"}},
		{"reserved key", []string{"show", "--spec", specDir43, "4"}, []string{"LeaderAndIsr", "reserved"}},
		{"bad format", []string{"show", "--spec", specDir43, "--format", "xml", "33"}, []string{"--format"}},
		{"no API", []string{"show", "--spec", specDir43}, []string{"one API"}},
		{"two APIs", []string{"show", "--spec", specDir43, "33", "29"}, []string{"one API"}},
		{"no spec", []string{"show", "33"}, []string{"MANIFESTER_SPEC"}},
		{"missing spec path", []string{"show", "--spec", filepath.Join(t.TempDir(), "nothing"), "33"}, []string{"nothing"}},
		{"bad flag", []string{"show", "--spec", specDir43, "--bogus", "33"}, []string{"bogus"}},
		{"unknown command", []string{"shwo"}, []string{"unknown command"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := mainRun(t, nil, c.args...)
			if code != cli.ExitUsage {
				t.Errorf("exit %d, want %d", code, cli.ExitUsage)
			}
			if out != "" {
				t.Errorf("wrote to stdout: %q", out)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
		})
	}
}

// TestShowBadSpecs: every bad fixture makes show exit 2 with the spec
// error (file:line:col, path) on stderr, never a panic.
func TestShowBadSpecs(t *testing.T) {
	entries, err := os.ReadDir(badSpecDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		dir := filepath.Join(badSpecDir, e.Name())
		t.Run(e.Name(), func(t *testing.T) {
			_, loadErr := schema.Load(dir)
			var list spec.ErrorList
			if !errors.As(loadErr, &list) || len(list) == 0 {
				t.Fatalf("fixture loads: %v", loadErr)
			}
			code, out, errs := mainRun(t, nil, "show", "--spec", dir, "Thing")
			if code != cli.ExitUsage {
				t.Errorf("exit %d, want 2", code)
			}
			if out != "" {
				t.Errorf("stdout: %q", out)
			}
			if !strings.Contains(errs, list[0].Error()) {
				t.Errorf("stderr lacks %q:\n%s", list[0].Error(), errs)
			}
			if !regexp.MustCompile(`\.json:\d+:\d+: `).MatchString(errs) {
				t.Errorf("stderr names no file:line:col:\n%s", errs)
			}
		})
	}
	if n < 18 {
		t.Errorf("only %d bad fixtures", n)
	}
}

// TestShowSyntheticSpecs: show works on any spec set, here the synthetic
// one whose request header version is explicit.
func TestShowSyntheticSpecs(t *testing.T) {
	code, out, errs := mainRun(t, nil, "show", "--spec", everyTypeDir, "--version", "1", "everytype")
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, w := range []string{"Headers            req v2 (from headerVersions), resp v1 (from headerVersions)", "EveryTypeRequest v1, request header v2 (from headerVersions),", "1000 (EveryType)"} {
		if !strings.Contains(out, w) {
			t.Errorf("page lacks %q", w)
		}
	}
}

func TestAPIs(t *testing.T) {
	code, out, errs := mainRun(t, nil, "apis", "--spec", specDir43)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	reg, err := schema.Load(specDir43)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if h := strings.Fields(lines[0]); strings.Join(h, " ") != "KEY NAME VERSIONS FLEXIBLE LISTENERS NOTES" {
		t.Errorf("header = %q", lines[0])
	}
	rows := lines[1:]
	if len(rows) != len(reg.APIs) {
		t.Fatalf("%d rows, %d APIs", len(rows), len(reg.APIs))
	}
	reserved := 0
	for i, a := range reg.APIs {
		f := strings.Fields(rows[i])
		if len(f) < 5 || f[0] != strconv.Itoa(int(a.Key)) || f[1] != a.Name {
			t.Errorf("row %d = %q, want key %d %s", i, rows[i], a.Key, a.Name)
			continue
		}
		isReserved := strings.Contains(rows[i], "reserved")
		if isReserved != a.Reserved() {
			t.Errorf("%s: reserved marked %t, is %t", a.Name, isReserved, a.Reserved())
		}
		if isReserved {
			reserved++
			continue
		}
		if f[2] != a.Request.Valid.String() || f[3] != a.Request.Flexible.String() || f[4] != strings.Join(a.Request.Listeners, ",") {
			t.Errorf("%s row %q", a.Name, rows[i])
		}
	}
	// 4.3 retired LeaderAndIsr, StopReplica, UpdateMetadata and
	// ControlledShutdown (keys 4-7) but keeps the keys reserved.
	if reserved != 4 {
		t.Errorf("%d reserved keys, want 4", reserved)
	}
	// InitProducerId's top version (6) is unstable in 4.3.
	for _, r := range rows {
		if f := strings.Fields(r); f[1] == "InitProducerId" && !strings.HasSuffix(r, "v6 unstable") {
			t.Errorf("InitProducerId row %q does not mark v6 unstable", r)
		}
	}
	if code, _, _ := mainRun(t, nil, "apis", "--spec", specDir43, "extra"); code != cli.ExitUsage {
		t.Errorf("apis with an argument: exit %d", code)
	}
}

// vectorFields is the published order of a vector's JSON fields.
var vectorFields = []string{"api_key", "name", "version", "kind", "header_version", "size", "hex"}

func TestVectors(t *testing.T) {
	code, out, errs := mainRun(t, nil, "vectors", "--spec", specDir43)
	if code != cli.ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 604 {
		t.Errorf("%d vectors for 4.3, want 604", len(lines))
	}
	type vec struct {
		APIKey        int    `json:"api_key"`
		Name          string `json:"name"`
		Version       int    `json:"version"`
		Kind          string `json:"kind"`
		HeaderVersion int    `json:"header_version"`
		Size          int    `json:"size"`
		Hex           string `json:"hex"`
	}
	var prev *vec
	for i, l := range lines {
		// Field names and order, exactly.
		dec := json.NewDecoder(strings.NewReader(l))
		var keys []string
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			t.Fatalf("line %d is not an object: %s", i+1, l)
		}
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, k.(string))
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
		}
		if strings.Join(keys, ",") != strings.Join(vectorFields, ",") {
			t.Fatalf("line %d fields %v, want %v", i+1, keys, vectorFields)
		}
		var v vec
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatal(err)
		}
		b, err := hex.DecodeString(v.Hex)
		if err != nil || len(b) != v.Size {
			t.Errorf("line %d: hex of %d bytes, size %d (%v)", i+1, len(b), v.Size, err)
		} else if got := int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3]); got != v.Size-4 {
			t.Errorf("line %d: size prefix %d, size %d", i+1, got, v.Size)
		}
		if v.Kind == "request" && len(b) >= 8 {
			if key, ver := int(b[4])<<8|int(b[5]), int(b[6])<<8|int(b[7]); key != v.APIKey || ver != v.Version {
				t.Errorf("line %d: request header says key %d v%d", i+1, key, ver)
			}
		}
		if v.Kind != "request" && v.Kind != "response" {
			t.Errorf("line %d: kind %q", i+1, v.Kind)
		}
		if prev != nil {
			less := prev.APIKey < v.APIKey ||
				prev.APIKey == v.APIKey && (prev.Version < v.Version || prev.Version == v.Version && prev.Kind == "request" && v.Kind == "response")
			if !less {
				t.Errorf("line %d (%d v%d %s) does not sort after line %d (%d v%d %s)", i+1, v.APIKey, v.Version, v.Kind, i, prev.APIKey, prev.Version, prev.Kind)
			}
		}
		prev = &v
	}
	// The example line, exactly.
	const ex = `{"api_key":33,"name":"AlterConfigs","version":2,"kind":"request","header_version":2,"size":25,"hex":"0000001500210002`
	found := false
	for _, l := range lines {
		if strings.HasPrefix(l, ex) {
			found = true
		}
	}
	if !found {
		t.Errorf("no line starts with %s", ex)
	}

	// --out writes the same lines to a file and nothing to stdout.
	path := filepath.Join(t.TempDir(), "vectors.jsonl")
	code, stdout, errs := mainRun(t, nil, "vectors", "--spec", specDir43, "--out", path)
	if code != cli.ExitOK || stdout != "" {
		t.Fatalf("--out: exit %d, stdout %q, stderr %s", code, stdout, errs)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != out {
		t.Errorf("--out file differs from stdout")
	}
	// An unwritable --out is a failure (exit 1), an argument a usage error.
	if code, _, _ := mainRun(t, nil, "vectors", "--spec", specDir43, "--out", filepath.Join(t.TempDir(), "no", "such", "dir", "v.jsonl")); code != cli.ExitFailure {
		t.Errorf("unwritable --out: exit %d, want 1", code)
	}
	if code, _, _ := mainRun(t, nil, "vectors", "--spec", specDir43, "extra"); code != cli.ExitUsage {
		t.Errorf("vectors with an argument: exit %d, want 2", code)
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := mainRun(t, nil, "--help")
	if code != cli.ExitOK {
		t.Errorf("--help: exit %d", code)
	}
	for _, w := range []string{"Exit status: 0", "1 input that did not decode", "2 bad usage", "show", "apis", "vectors", "--spec", "MANIFESTER_SPEC"} {
		if !strings.Contains(out, w) {
			t.Errorf("--help lacks %q", w)
		}
	}
	// No arguments is a usage error: the same help, on stderr.
	if code, out2, errs := mainRun(t, nil); code != cli.ExitUsage || out2 != "" || errs != out {
		t.Errorf("no arguments: exit %d (want 2), stdout %q, and not the same help on stderr", code, out2)
	}
	code, showHelp, errs := mainRun(t, nil, "show", "--help")
	if code != cli.ExitOK || errs != "" || !strings.Contains(showHelp, "--version") || !strings.Contains(showHelp, "--format") {
		t.Errorf("show --help: exit %d, stdout %q, stderr %q", code, showHelp, errs)
	}
}
