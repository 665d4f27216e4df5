package term

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// TestPagerArgv: $PAGER as git reads it: a path with spaces that names a
// file, shell syntax run by sh, double quotes grouping a Windows path,
// plain words split at spaces.
func TestPagerArgv(t *testing.T) {
	dir := t.TempDir()
	spaced := filepath.Join(dir, "Program Files", "less.exe")
	if err := os.MkdirAll(filepath.Dir(spaced), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spaced, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cmd      string
		viaShell bool
		want     []string
	}{
		{"less -FRX", true, []string{"less", "-FRX"}},
		{"less -FRX", false, []string{"less", "-FRX"}},
		{"  ", true, nil},
		{spaced, false, []string{spaced}},
		{spaced, true, []string{spaced}},
		{`less -R | tee "/tmp/a b"`, true, []string{"sh", "-c", `less -R | tee "/tmp/a b"`}},
		{`"C:\Program Files\Git\usr\bin\less.exe" -R`, false, []string{`C:\Program Files\Git\usr\bin\less.exe`, "-R"}},
		{`"C:\Program Files\Git\usr\bin\less.exe" -R`, true, []string{"sh", "-c", `"C:\Program Files\Git\usr\bin\less.exe" -R`}},
		{`more ""`, false, []string{"more", ""}},
	} {
		got := pagerArgv(c.cmd, c.viaShell, isFile)
		if !slices.Equal(got, c.want) {
			t.Errorf("pagerArgv(%q, shell %v) = %q, want %q", c.cmd, c.viaShell, got, c.want)
		}
	}
}

// TestPagerWithSpacesAndShell: a pager whose command needs the shell (a
// pipe inside it) and one whose path has a space in it both page the
// output.
func TestPagerWithSpacesAndShell(t *testing.T) {
	if !pagerViaShell {
		t.Skip("no sh on this system")
	}
	if _, err := exec.LookPath("sed"); err != nil {
		t.Skip("no sed to stand in for a pager")
	}
	tall := "1\n2\n3\n"
	if got, want := pagerOut(t, 2, "sed s/^/P:/ | sed s/^/Q:/", tall), "Q:P:1\nQ:P:2\nQ:P:3\n"; got != want {
		t.Errorf("pager through sh: %q, want %q", got, want)
	}
	script := filepath.Join(t.TempDir(), "my pager")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsed s/^/S:/\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := pagerOut(t, 2, script, tall), "S:1\nS:2\nS:3\n"; got != want {
		t.Errorf("pager path with a space: %q, want %q", got, want)
	}
}
