package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEncodeJSONLines: the JSON lines decode --format json prints encode
// back into the frames, one per line, in order; the input may also come
// on stdin without "-".
func TestEncodeJSONLines(t *testing.T) {
	frames := [][]byte{decCreateTopics(7), decCreateTopics(5)}
	var lines, want strings.Builder
	for _, f := range frames {
		code, out, errs := decRun(t, f, "decode", "--spec", decSpec, "-", "--format", "json")
		if code != ExitOK {
			t.Fatalf("decode: exit %d: %s", code, errs)
		}
		lines.WriteString(out)
		code, hexOut, errs := decRun(t, []byte(out), "encode", "--spec", decSpec, "-")
		if code != ExitOK {
			t.Fatalf("encode one line: exit %d: %s", code, errs)
		}
		want.WriteString(hexOut)
	}
	for _, args := range [][]string{{"encode", "--spec", decSpec, "-"}, {"encode", "--spec", decSpec}} {
		code, out, errs := decRun(t, []byte(lines.String()), args...)
		if code != ExitOK || out != want.String() || strings.Count(out, "\n") != 2 {
			t.Errorf("%q: exit %d, output %q, want %q: %s", args, code, out, want.String(), errs)
		}
	}
	// A broken second line names its place.
	code, _, errs := decRun(t, []byte(strings.SplitAfter(lines.String(), "\n")[0]+"{\"api_key\": 19, \"version\": 7, \"body\": {\"Topics\": 7}}\n"), "encode", "--spec", decSpec, "-")
	if code != ExitFailure || !strings.Contains(errs, "JSON value 2 of 2") {
		t.Errorf("bad second line: exit %d: %s", code, errs)
	}
}

// TestAPIsJSON: apis --format json lists every API with its versions as
// data.
func TestAPIsJSON(t *testing.T) {
	code, out, errs := decRun(t, nil, "apis", "--spec", decSpec, "-f", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var apis []apiJSON
	if err := json.Unmarshal([]byte(out), &apis); err != nil {
		t.Fatal(err)
	}
	_, table, _ := decRun(t, nil, "apis", "--spec", decSpec)
	if len(apis) != strings.Count(table, "\n")-1 {
		t.Errorf("%d APIs in JSON, %d rows in the table", len(apis), strings.Count(table, "\n")-1)
	}
	found := false
	for _, a := range apis {
		if a.Name == "AlterConfigs" {
			found = a.Key == 33 && a.MinVersion != nil && *a.MinVersion == 0 && *a.MaxVersion == 2 && a.RequestVersions == "0-2"
		}
		if a.Reserved && a.MinVersion != nil {
			t.Errorf("%s is reserved but has versions", a.Name)
		}
	}
	if !found {
		t.Errorf("AlterConfigs not listed as key 33, v0-2")
	}
}
