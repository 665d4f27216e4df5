package html

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/tailscale/hujson"
	"golang.org/x/net/html"

	"github.com/manifester/manifester/internal/testshared"
)

// jsonTokens lists the value tokens of a JSON-with-comments text as
// encoding/json sees them once hujson has blanked the comments: "k" for
// object keys, "s" strings, "n" numbers, "l" true/false/null, each with its
// text.
func jsonTokens(t *testing.T, src []byte) []string {
	t.Helper()
	std, err := hujson.Standardize(bytes.Clone(src))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.UseNumber()
	type frame struct {
		object bool
		n      int
	}
	var stack []frame
	var out []string
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		key := false
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			if _, isDelim := tok.(json.Delim); !isDelim || tok == json.Delim('{') || tok == json.Delim('[') {
				key = top.object && top.n%2 == 0
				top.n++
			}
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				stack = append(stack, frame{object: v == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			b, _ := json.Marshal(v)
			if key {
				out = append(out, "k"+string(b))
			} else {
				out = append(out, "s"+string(b))
			}
		case json.Number:
			out = append(out, "n"+v.String())
		default:
			b, _ := json.Marshal(v)
			out = append(out, "l"+string(b))
		}
	}
	return out
}

// ourTokens lists the same from Highlight's tokenizer.
func ourTokens(src string) []string {
	var out []string
	for _, tk := range tokenize(src) {
		text := src[tk.start:tk.end]
		var kind string
		switch tk.class {
		case "nt":
			kind = "k"
		case "s2":
			kind = "s"
		case "mi", "mf":
			kind = "n"
		case "kc":
			kind = "l"
		default:
			continue
		}
		if kind == "k" || kind == "s" {
			var s string
			if err := json.Unmarshal([]byte(text), &s); err != nil {
				return append(out, "bad string "+text)
			}
			b, _ := json.Marshal(s)
			text = string(b)
		}
		out = append(out, kind+text)
	}
	return out
}

// TestTokenizerAgreesWithEncodingJSON: on every spec file of every release
// in ../shared (read in place), the highlighter's keys, strings, numbers
// and literals are exactly encoding/json's, and no token is an error.
func TestTokenizerAgreesWithEncodingJSON(t *testing.T) {
	root := testshared.Path(t, "kafka-spec")
	files, _ := filepath.Glob(filepath.Join(root, "*", "*.json"))
	recs, _ := filepath.Glob(filepath.Join(testshared.Path(t, "kafka-records"), "*", "*", "*.json"))
	files = append(files, recs...)
	if len(files) < 500 {
		t.Fatalf("only %d spec files under %s", len(files), root)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range tokenize(string(src)) {
			if tk.class == "err" {
				t.Errorf("%s: error token %q at %d", f, src[tk.start:tk.end], tk.start)
			}
		}
		want, got := jsonTokens(t, src), ourTokens(string(src))
		if strings.Join(want, "\n") != strings.Join(got, "\n") {
			t.Errorf("%s: %d tokens, encoding/json has %d", f, len(got), len(want))
		}
	}
}

// TestHighlightKeepsAnyText: for any input (stray bytes, unclosed strings
// and comments, invalid UTF-8) the text of the result is the input.
func TestHighlightKeepsAnyText(t *testing.T) {
	for _, src := range []string{
		"", "{", `"unclosed`, "/* unclosed", "// no newline", "-", "--1", "1e", "1.", "1.5e+",
		"\xff\xfe{\"a\"\xc3: 1}", "{\"a\\\"b\": [tru, nul, 1x]}", "<script>&amp;</script>", "ü\u202e\x00\x1b",
	} {
		checkHighlight(t, src)
	}
}

func checkHighlight(t *testing.T, src string) {
	t.Helper()
	h := string(Highlight(src))
	doc, err := html.Parse(strings.NewReader("<body>" + h))
	if err != nil {
		t.Fatal(err)
	}
	// The HTML parser (as a browser) turns NUL into U+FFFD and CR or CRLF
	// into LF.
	want := strings.ToValidUTF8(src, "\uFFFD")
	want = strings.NewReplacer("\x00", "\uFFFD", "\r\n", "\n", "\r", "\n").Replace(want)
	if textOf(doc) != want {
		t.Errorf("Highlight(%q): text %q", src, textOf(doc))
	}
	if strings.Contains(h, "<script") {
		t.Errorf("Highlight(%q) = %s", src, h)
	}
}

func FuzzHighlight(f *testing.F) {
	f.Add(`{"a": [1, -2.5e3, true, null, "s\""]} // c`)
	f.Add("/* x */ \xff")
	f.Fuzz(func(t *testing.T, src string) { checkHighlight(t, src) })
}

// TestHighlightDeterministic: the same text gives the same bytes from
// many goroutines at once, at GOMAXPROCS 1 and at the machine's count.
func TestHighlightDeterministic(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(testshared.Spec(t, "4.3"), "FetchResponse.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := Highlight(string(src))
	for _, procs := range []int{1, max(2, runtime.NumCPU())} {
		old := runtime.GOMAXPROCS(procs)
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if got := Highlight(string(src)); got != want {
					t.Errorf("GOMAXPROCS %d: output differs", procs)
				}
			}()
		}
		wg.Wait()
		runtime.GOMAXPROCS(old)
	}
}
