package term

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func pagerOut(t *testing.T, rows int, command, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPager(f, rows, command)
	for _, l := range strings.SplitAfter(text, "\n") {
		if _, err := p.Write([]byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPager: output shorter than the screen is written as it is; taller
// output goes through the pager; a pager that cannot start is skipped.
func TestPager(t *testing.T) {
	if _, err := exec.LookPath("sed"); err != nil {
		t.Skip("no sed to stand in for a pager")
	}
	short, tall := "a\nb\n", "1\n2\n3\n4\n5\n"
	if got := pagerOut(t, 4, "sed s/^/P:/", short); got != short {
		t.Errorf("short output: %q", got)
	}
	if got, want := pagerOut(t, 4, "sed s/^/P:/", tall), "P:1\nP:2\nP:3\nP:4\nP:5\n"; got != want {
		t.Errorf("tall output: %q, want %q", got, want)
	}
	if got := pagerOut(t, 4, "no-such-pager-here", tall); got != tall {
		t.Errorf("missing pager: %q", got)
	}
	if got := pagerOut(t, 4, "", tall); got != tall {
		t.Errorf("no pager: %q", got)
	}
	// A pager that quits at once: the rest is dropped, no error.
	if got := pagerOut(t, 2, "true", strings.Repeat("x\n", 100000)); got != "" {
		t.Errorf("quitting pager: %d bytes written around it", len(got))
	}
}

func TestPagerCommand(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{nil, DefaultPager},
		{map[string]string{"PAGER": "more"}, "more"},
		{map[string]string{"PAGER": "more", "MANIFESTER_PAGER": "less -R"}, "less -R"},
		{map[string]string{"PAGER": "cat"}, ""},
	} {
		if got := PagerCommand(env(c.env)); got != c.want {
			t.Errorf("%v: %q, want %q", c.env, got, c.want)
		}
	}
}

func TestColorMode(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	f, err := os.CreateTemp(t.TempDir(), "notatty")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if UseColor(ColorAuto, f, nil) || !UseColor(ColorAlways, f, env(map[string]string{"NO_COLOR": "1"})) || UseColor(ColorNever, f, nil) {
		t.Error("auto colours a file, or always/never are not obeyed")
	}
	for _, s := range []string{"auto", "always", "never", ""} {
		if _, err := ParseColorMode(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseColorMode("sometimes"); err == nil {
		t.Error("sometimes accepted")
	}
	if Width("注文") != 4 || Width("abc") != 3 {
		t.Errorf("widths %d, %d", Width("注文"), Width("abc"))
	}
}
