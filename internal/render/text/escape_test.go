package text_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode"

	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/render/text"
)

func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, line, block string }{
		{"plain text, ünïcödé", "plain text, ünïcödé", "plain text, ünïcödé"},
		{"\x1b[31mred", `\x1b[31mred`, `\x1b[31mred`},
		{"a\rb\nc\td", `a\rb\nc\td`, "a\\rb\nc\td"},
		{"bell\a del\x7f", `bell\a del\x7f`, `bell\a del\x7f`},
		{"bidi \u202eevil", `bidi \u202eevil`, `bidi \u202eevil`},
		{"bad \xff utf8", `bad \xff utf8`, `bad \xff utf8`},
		{`back\slash`, `back\slash`, `back\slash`},
	} {
		if got := text.Escape(c.in); got != c.line {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := text.EscapeBlock(c.in); got != c.block {
			t.Errorf("EscapeBlock(%q) = %q, want %q", c.in, got, c.block)
		}
	}
}

// rawControls lists the control and format characters of s other than
// newline (and tab, allowed in the schema block).
func rawControls(s string) []rune {
	var out []rune
	for _, r := range s {
		if r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.In(r, unicode.Cf)) || r == '\uFFFD' {
			out = append(out, r)
		}
	}
	return out
}

// TestPageEscapesSpecText renders the synthetic spec whose about strings
// and comments carry ESC sequences, a bell, CR and U+202E: the text page
// shows them escaped, never raw.
func TestPageEscapesSpecText(t *testing.T) {
	c := loadCodec(t, "../../../testdata/specs/escapes")
	api, ok := c.Reg.APIByName("Esc")
	if !ok {
		t.Fatal("no Esc API")
	}
	p, err := page.Build(c, api, -1)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := text.Page(&b, p); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if raw := rawControls(out); len(raw) > 0 {
		t.Errorf("page holds raw control characters %q", raw)
	}
	for _, want := range []string{
		`red \x1b[31mtext\x1b[0m, a bell \a, reversed \u202eevil and a tab\there.`, // the tree's about
		`line one\rOVERWRITTEN\nline two`,                                          // the response's about
		`// a comment with a raw escape: \x1b[2J (clear screen) and a carriage return\r before its end`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
