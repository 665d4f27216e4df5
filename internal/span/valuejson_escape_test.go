package span

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// escapeSamples are strings of the shapes the escaper meets: names, log
// lines (the text values of compressed captures), text with escapes every
// few bytes, and text that is mostly multi-byte UTF-8.
var escapeSamples = []struct{ name, s string }{
	{"name", "bench-client"},
	{"log", strings.Repeat("2026-01-02T03:04:05.678Z INFO [consumer-7] committed offset 12345 for orders-3; ", 12)},
	{"escapes", strings.Repeat(`say "hi"\n<b>&`+"\t", 40)},
	{"utf8", strings.Repeat("日本語のテキスト、é and ü. ", 30)},
}

// TestAppendJSONStringBodyWords: the word-at-a-time scan writes what
// encoding/json writes, for every awkward byte at every position of a
// word, and NeedsJSONEscape agrees with it.
func TestAppendJSONStringBodyWords(t *testing.T) {
	awkward := []string{"\x00", "\x1f", "\x20", "\"", "&", "'", "<", "=", ">", "\\", "\x7f", "\x80", "\xff", "é", "\u2028", "\u2029", "\xe2\x80", "日"}
	for _, a := range awkward {
		for pos := 0; pos < 20; pos++ {
			for _, tail := range []int{0, 1, 7, 8, 9} {
				s := strings.Repeat("a", pos) + a + strings.Repeat("b", tail)
				checkEscape(t, s)
			}
		}
	}
	for _, c := range escapeSamples {
		checkEscape(t, c.s)
	}
}

func checkEscape(t *testing.T, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want = want[1 : len(want)-1]
	if got := AppendJSONStringBody(nil, []byte(s)); string(got) != string(want) {
		t.Errorf("%q ([]byte): %s, want %s", s, got, want)
	}
	if got := AppendJSONStringBody(nil, s); string(got) != string(want) {
		t.Errorf("%q (string): %s, want %s", s, got, want)
	}
	// NeedsJSONEscape is exact on ASCII and true for anything else.
	w := string(want) != s || strings.ContainsFunc(s, func(r rune) bool { return r >= utf8.RuneSelf })
	if got := NeedsJSONEscape(s); got != w {
		t.Errorf("NeedsJSONEscape(%q) = %v, want %v", s, got, w)
	}
	if got := NeedsJSONEscape([]byte(s)); got != w {
		t.Errorf("NeedsJSONEscape([]byte %q) = %v, want %v", s, got, w)
	}
}

// FuzzAppendJSONStringBody holds the escaper to encoding/json on any
// bytes, and NeedsJSONEscape to the escaper.
func FuzzAppendJSONStringBody(f *testing.F) {
	for _, c := range escapeSamples {
		f.Add(c.s)
	}
	f.Add("bad\xffutf8\xc3")
	f.Fuzz(func(t *testing.T, s string) {
		checkEscape(t, s)
		if !utf8.ValidString(string(AppendJSONStringBody(nil, s))) {
			t.Errorf("%q: escaped form is not valid UTF-8", s)
		}
	})
}

func BenchmarkAppendJSONStringBody(b *testing.B) {
	for _, c := range escapeSamples {
		src := []byte(c.s)
		dst := make([]byte, 0, 8*len(src))
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				dst = AppendJSONStringBody(dst[:0], src)
			}
		})
	}
}
