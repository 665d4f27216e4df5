package spec

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// src is a small spec with the shapes Kafka's files use: a comment header,
// comments between keys, a bare-string listener, scalar defaults written
// bare and quoted, and a nested struct.
const src = `// A header comment, as Kafka's licence header is.
// Second line.

{
  "apiKey": 7,
  "type": "request",
  "listeners": "broker", // a bare scalar counts as a list
  "name": "ThingRequest",
  /* a block comment */
  "validVersions": "0-3",
  "flexibleVersions": "2+",
  "headerVersions": { "0-1": 1, "2+": 2 },
  "fields": [
    { "name": "A", "type": "int32", "versions": "0+", "default": -1 },
    { "name": "B", "type": "bool", "versions": "0+", "default": false, "ignorable": "true" },
    { "name": "C", "type": "string", "versions": "0+", "nullableVersions": "0+", "default": null },
    { "name": "Items", "type": "[]Item", "versions": "1+", "fields": [
      { "name": "D", "type": "int8", "versions": "1+" }
    ]}
  ]
}
`

func TestParse(t *testing.T) {
	f, err := Parse("ThingRequest.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m := f.Message
	if m.Pos.String() != "ThingRequest.json:4:1" {
		t.Errorf("message at %s, want ThingRequest.json:4:1", m.Pos)
	}
	if m.APIKey.N != 7 || m.APIKey.Pos.String() != "ThingRequest.json:5:13" {
		t.Errorf("apiKey = %d at %s", m.APIKey.N, m.APIKey.Pos)
	}
	if len(m.Listeners) != 1 || m.Listeners[0].S != "broker" {
		t.Errorf("listeners = %+v", m.Listeners)
	}
	if m.ValidVersions.S != "0-3" || m.ValidVersions.Pos.Line != 10 {
		t.Errorf("validVersions = %+v", m.ValidVersions)
	}
	if len(m.HeaderVersions) != 2 || m.HeaderVersions[0].Versions.S != "0-1" || m.HeaderVersions[0].Header.N != 1 ||
		m.HeaderVersions[1].Versions.S != "2+" || m.HeaderVersions[1].Header.N != 2 {
		t.Errorf("headerVersions = %+v", m.HeaderVersions)
	}
	if len(m.Fields) != 4 {
		t.Fatalf("%d fields", len(m.Fields))
	}
	a, b, c, items := m.Fields[0], m.Fields[1], m.Fields[2], m.Fields[3]
	if a.Default.S != "-1" || a.Default.Pos.String() != "ThingRequest.json:14:66" {
		t.Errorf("A default = %q at %s", a.Default.S, a.Default.Pos)
	}
	if b.Default.S != "false" || !b.Ignorable.B {
		t.Errorf("B = default %q, ignorable %v", b.Default.S, b.Ignorable.B)
	}
	if !c.Default.Null || !c.Default.Set {
		t.Errorf("C default = %+v, want null", c.Default)
	}
	if !items.HasFields || len(items.Fields) != 1 || items.Fields[0].Name.S != "D" || items.Fields[0].Pos.String() != "ThingRequest.json:18:7" {
		t.Errorf("Items = %+v", items)
	}
	if string(f.Source) != src {
		t.Errorf("Source is not the file as read")
	}
}

func TestHeaderVersionsInteger(t *testing.T) {
	f, err := Parse("X.json", []byte(`{"name": "XResponse", "type": "response", "headerVersions": 0}`))
	if err != nil {
		t.Fatal(err)
	}
	hv := f.Message.HeaderVersions
	if len(hv) != 1 || hv[0].Versions.S != "0+" || hv[0].Header.N != 0 || !hv[0].Header.Set {
		t.Errorf("headerVersions = %+v, want one 0+ -> 0", hv)
	}
}

// TestParseErrors: each mistake is reported at its token with its path
// and sentinel.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		name string
		src  string
		pos  string
		path string
		is   error
	}{
		{"top level not an object", `["x"]`, "t.json:1:1", "", ErrKeyType},
		{"trailing content", "{\"name\": \"A\", \"type\": \"data\"}\n}", "t.json:2:1", "", ErrSyntax},
		{"missing colon", `{"name" "A"}`, "t.json:1:9", "", ErrSyntax},
		// hujson reports an unterminated string where the input ends
		{"unterminated string", "{\n  \"name\": \"A\n}", "t.json:3:2", "", ErrSyntax},
		{"unknown top-level key", "{\n  \"name\": \"A\", \"type\": \"data\",\n  \"fieldz\": []\n}", "t.json:3:3", "", ErrUnknownKey},
		{"unknown common struct key", `{"name": "A", "type": "data", "commonStructs": [{"name": "S", "versions": "0+", "x": 1}]}`, "t.json:1:81", "commonStructs", ErrUnknownKey},
		{"missing name", `{"type": "data"}`, "t.json:1:1", "", ErrMissing},
		{"missing field type", "{\"name\": \"A\", \"type\": \"data\", \"fields\": [\n  {\"name\": \"F\", \"versions\": \"0+\"}]}", "t.json:2:3", "F", ErrMissing},
		{"apiKey not an integer", `{"name": "A", "type": "data", "apiKey": "x"}`, "t.json:1:41", "", ErrKeyType},
		{"apiKey a float", `{"name": "A", "type": "data", "apiKey": 1.5}`, "t.json:1:41", "", ErrKeyType},
		{"tag not an integer", `{"name": "A", "type": "data", "fields": [{"name": "F", "type": "int8", "tag": true}]}`, "t.json:1:79", "F", ErrKeyType},
		{"bad boolean", `{"name": "A", "type": "data", "fields": [{"name": "F", "type": "int8", "ignorable": "yes"}]}`, "t.json:1:85", "F", ErrKeyType},
		{"fields not an array", `{"name": "A", "type": "data", "fields": {}}`, "t.json:1:41", "", ErrKeyType},
		{"field not an object", `{"name": "A", "type": "data", "fields": [1]}`, "t.json:1:42", "", ErrKeyType},
		{"nested field path", `{"name": "A", "type": "data", "fields": [{"name": "S", "type": "[]S", "fields": [{"name": "G", "type": "int8", "bad": 1}]}]}`, "t.json:1:112", "S.G", ErrUnknownKey},
		{"headerVersions an array", `{"name": "A", "type": "data", "headerVersions": [1]}`, "t.json:1:49", "", ErrKeyType},
		{"key repeated with another value", "{\"name\": \"A\", \"type\": \"data\",\n \"type\": \"header\"}", "t.json:2:2", "", ErrDuplicate},
		{"string with a non-string value", `{"name": "A", "type": "data", "fields": [{"name": "F", "type": ["int8"]}]}`, "t.json:1:64", "F", ErrKeyType},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("t.json", []byte(c.src))
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("err = %v, want an ErrorList", err)
			}
			e := list[0]
			if e.Pos.String() != c.pos || e.Path != c.path {
				t.Errorf("error at %s %q, want %s %q: %v", e.Pos, e.Path, c.pos, c.path, err)
			}
			if !errors.Is(err, c.is) {
				t.Errorf("errors.Is(%v, %v) is false", err, c.is)
			}
		})
	}
}

// TestRepeatedKeySameValue: Kafka's own 3.9 DescribeTopicPartitions spec
// repeats a key with the same value; that is accepted.
func TestRepeatedKeySameValue(t *testing.T) {
	if _, err := Parse("t.json", []byte(`{"name": "A", "type": "data", "type": "data"}`)); err != nil {
		t.Errorf("err = %v", err)
	}
}

func TestErrorText(t *testing.T) {
	e := &Error{Pos: Pos{File: "F.json", Line: 3, Col: 9}, Path: "Topics.Name", Err: ErrUnknownKey}
	if got := e.Error(); got != "F.json:3:9: Topics.Name: unknown key" {
		t.Errorf("Error() = %q", got)
	}
	list := ErrorList{
		{Pos: Pos{File: "B.json", Line: 1, Col: 1}, Err: ErrSyntax},
		{Pos: Pos{File: "A.json", Line: 9, Col: 1}, Err: ErrMissing},
		{Pos: Pos{File: "A.json", Line: 2, Col: 5}, Err: ErrKeyType},
	}
	list.Sort()
	if got := list.Error(); got != "A.json:2:5: wrong JSON type\nA.json:9:1: missing required key\nB.json:1:1: malformed JSON" {
		t.Errorf("sorted list = %q", got)
	}
	if !errors.Is(list, ErrMissing) || errors.Is(list, ErrDuplicate) {
		t.Errorf("errors.Is does not look at every entry")
	}
	if (ErrorList{}).Err() != nil {
		t.Errorf("empty list is an error")
	}
	if got := (Pos{File: "F.json"}).String(); got != "F.json" {
		t.Errorf("position without a line = %q", got)
	}
}

func TestOpenDirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("PROVENANCE", "kafka 9.9 from somewhere\n")
	write("BRequest.json", `{"name": "BRequest", "type": "request"}`)
	write("AData.json", `{"name": "AData", "type": "data"}`)
	write("notes.txt", "not a spec")
	src, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if src.Label != "9.9" {
		t.Errorf("label = %q, want 9.9 from PROVENANCE", src.Label)
	}
	files, err := src.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Name != "AData.json" || files[1].Name != "BRequest.json" {
		t.Errorf("files = %v, want AData.json and BRequest.json in name order", files)
	}

	// All files' errors are collected, each naming its file.
	write("CBad.json", `{"name": `)
	write("DBad.json", `{"name": "D", "type": "data", "oops": 1}`)
	_, err = src.ReadAll()
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 2 || list[0].Pos.File != "CBad.json" || list[1].Pos.File != "DBad.json" {
		t.Errorf("err = %v, want one error in each bad file", err)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("opening a missing path succeeded")
	}
	src, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.ReadAll(); !errors.Is(err, ErrNoSpecs) {
		t.Errorf("empty dir: err = %v, want ErrNoSpecs", err)
	}
	// A file over the size limit is refused before it is parsed.
	dir := t.TempDir()
	big := "{" + strings.Repeat(" ", maxSpecFile) + "}"
	if err := os.WriteFile(filepath.Join(dir, "Big.json"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.ReadAll(); err == nil || !strings.Contains(err.Error(), "Big.json") || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("big file: err = %v", err)
	}
}

// TestParseWindowsText: a spec file checked out on Windows (git's
// core.autocrlf) ends its lines with CRLF, and one saved by Notepad may
// start with a byte order mark; it parses to the same message at the same
// positions, and its Source, which pages show, has LF line ends only.
func TestParseWindowsText(t *testing.T) {
	want, err := Parse("ThingRequest.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]string{
		"CRLF":         strings.ReplaceAll(src, "\n", "\r\n"),
		"BOM and CRLF": "\ufeff" + strings.ReplaceAll(src, "\n", "\r\n"),
	} {
		f, err := Parse("ThingRequest.json", []byte(in))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if string(f.Source) != src {
			t.Errorf("%s: Source is not the LF text: %q", name, f.Source[:40])
		}
		if !reflect.DeepEqual(f.Message, want.Message) {
			t.Errorf("%s: the message differs from the LF file's", name)
		}
	}
}
