package server

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiVersionsV3 is an ApiVersions v3 response (kmsg encodes): error code
// 0 and the ranges of Produce (0) and Fetch (1). Its response header is
// v0 (no tagged fields), Kafka's rule for ApiVersions.
func apiVersionsV3() []byte {
	r := kmsg.NewPtrApiVersionsResponse()
	r.Version = 3
	for _, k := range []int16{0, 1} {
		ak := kmsg.NewApiVersionsResponseApiKey()
		ak.ApiKey, ak.MinVersion, ak.MaxVersion = k, 0, 9
		r.ApiKeys = append(r.ApiKeys, ak)
	}
	b := r.AppendTo([]byte{0, 0, 0, 0, 0, 0, 0, 4})
	n := len(b) - 4
	b[0], b[1], b[2], b[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return b
}

// treeRow is a row of an answer's JSON tree, as published.
type treeRow struct {
	Name     string     `json:"name"`
	Path     string     `json:"path"`
	Text     string     `json:"text"`
	Offset   int        `json:"offset"`
	Size     int        `json:"size"`
	Children []*treeRow `json:"children"`
}

func (r *treeRow) walk(f func(*treeRow)) {
	if r == nil {
		return
	}
	f(r)
	for _, k := range r.Children {
		k.walk(f)
	}
}

// answerTrees posts to /api/decode and returns each frame's tree and
// markup from the answer's JSON.
func answerTrees(t *testing.T, srv *Server, req map[string]any) ([]*treeRow, []string) {
	t.Helper()
	w, a := postJSON(t, srv, "/api/decode", req)
	if w.Code != 200 || a.Error != "" {
		t.Fatalf("decode: %d %q", w.Code, a.Error)
	}
	var raw struct {
		Frames []struct {
			Tree  *treeRow `json:"tree"`
			HTML  string   `json:"html"`
			Error string   `json:"error"`
		} `json:"frames"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	var trees []*treeRow
	var html []string
	for _, f := range raw.Frames {
		if f.Error != "" {
			t.Fatalf("frame did not decode: %s", f.Error)
		}
		trees, html = append(trees, f.Tree), append(html, f.HTML)
	}
	return trees, html
}

// TestDecodeAPINotes: POST /api/decode shows the notes the CLI shows: an
// ApiVersions v3 response's error code is "= 0 (NONE)" and the API key 0
// is "= 0 (Produce)", in the tree and in the markup.
func TestDecodeAPINotes(t *testing.T) {
	srv := decodeServer(t)
	trees, html := answerTrees(t, srv, map[string]any{"hex": hex.EncodeToString(apiVersionsV3()), "kind": "response", "api": "ApiVersions", "version": 3})
	if len(trees) != 1 || trees[0] == nil {
		t.Fatalf("%d trees", len(trees))
	}
	// Rows by name and value (the paths are a renderer's matter).
	rows := map[string]int{}
	trees[0].walk(func(r *treeRow) { rows[r.Name+" "+r.Text]++ })
	for row, n := range map[string]int{"ErrorCode = 0 (NONE)": 1, "ApiKey = 0 (Produce)": 1, "ApiKey = 1 (Fetch)": 1} {
		if rows[row] != n {
			t.Errorf("%d rows %q in the tree, want %d; rows: %v", rows[row], row, n, rows)
		}
	}
	for _, want := range []string{"(NONE)", "(Produce)", "(Fetch)"} {
		if !strings.Contains(html[0], want) {
			t.Errorf("the markup lacks %s", want)
		}
	}
}
