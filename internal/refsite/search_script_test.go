package refsite

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestSearchIndexScript checks the script form of the index holds the
// same entries as the JSON, and that the JSON can be a script as it is.
func TestSearchIndexScript(t *testing.T) {
	_, reg := site43(t)
	idx, err := SearchIndex(reg)
	if err != nil {
		t.Fatal(err)
	}
	s := string(SearchIndexScript(idx))
	const pre = "window.manifesterSearchIndex = "
	if !strings.HasPrefix(s, pre) || !strings.HasSuffix(s, ";\n") {
		t.Fatalf("script starts %.40q, ends %q", s, s[max(0, len(s)-10):])
	}
	var fromScript, fromJSON []Entry
	if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(s, pre), ";\n")), &fromScript); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(idx, &fromJSON); err != nil {
		t.Fatal(err)
	}
	if len(fromScript) != len(fromJSON) || len(fromJSON) < 1000 {
		t.Fatalf("%d entries in the script, %d in the JSON", len(fromScript), len(fromJSON))
	}
	for i := range fromJSON {
		if fromScript[i] != fromJSON[i] {
			t.Fatalf("entry %d: %+v in the script, %+v in the JSON", i, fromScript[i], fromJSON[i])
		}
	}
	// Characters that end a script line or a script element are escaped.
	for _, bad := range []string{"\u2028", "\u2029", "</script"} {
		if bytes.Contains(idx, []byte(bad)) {
			t.Errorf("the index holds %q unescaped", bad)
		}
	}
}
