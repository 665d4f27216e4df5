//go:build linux

package cli

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/manifester/manifester/internal/term"
)

var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// ptyRun runs the command line with stdout and stderr on a pseudo-terminal
// of cols x rows and returns the exit code and what the terminal showed
// (CRs from the terminal's line discipline removed).
func ptyRun(t *testing.T, cols, rows int, env map[string]string, args ...string) (int, string) {
	t.Helper()
	m, s := openPty(t)
	defer m.Close()
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)}); err != nil {
		s.Close()
		t.Skipf("setting the window size: %v", err)
	}
	read := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(m) // ends with EIO once the terminal side is closed
		read <- b
	}()
	e := &Env{Stdin: bytes.NewReader(nil), Stdout: s, Stderr: s, Getenv: func(k string) string { return env[k] }}
	code := Main(e, args)
	s.Close()
	out := <-read
	return code, strings.ReplaceAll(string(out), "\r\n", "\n")
}

// gridRow matches the rows and column heads of a byte grid, which stay 16
// bytes wide on any terminal.
var gridRow = regexp.MustCompile(`^([0-9a-f]{4,}  | +0  1  2)`)

// TestShowOnTerminal: on a terminal, show colours by category, fits every
// line but the grid's to the width, and pages output taller than the
// screen through $PAGER; --no-pager, --color=never and NO_COLOR turn the
// parts off; output that fits the screen is not paged.
func TestShowOnTerminal(t *testing.T) {
	pager := map[string]string{"PAGER": "sed s/^/PAGED:/"}
	show := []string{"show", "--spec", decSpec, "AlterConfigs"}

	code, out := ptyRun(t, 60, 24, pager, show...)
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if !strings.HasPrefix(out, "PAGED:") || strings.Count(out, "PAGED:") != strings.Count(out, "\n") {
		t.Errorf("a page taller than the terminal is not paged through $PAGER:\n%s", out)
	}
	if !strings.Contains(out, "\x1b[38;5;33m") {
		t.Errorf("no colour (rpc header blue) on a terminal:\n%q", out[:min(len(out), 400)])
	}
	plain := ansiEscape.ReplaceAllString(strings.ReplaceAll(out, "PAGED:", ""), "")
	for _, l := range strings.Split(plain, "\n") {
		if w := term.Width(l); w > 60 && !gridRow.MatchString(l) {
			t.Errorf("a %d-cell line on a 60-column terminal: %q", w, l)
		}
	}
	var words []string
	for _, f := range strings.Fields(plain) {
		if f != "|" && f != "+--" {
			words = append(words, f)
		}
	}
	if !strings.Contains(strings.Join(words, " "), "number of bytes that follow, patched after encoding") {
		t.Errorf("a description is missing:\n%s", plain)
	}

	code, out = ptyRun(t, 60, 24, pager, append(show, "--no-pager")...)
	if code != ExitOK || strings.Contains(out, "PAGED:") || !strings.Contains(out, "\x1b[") {
		t.Errorf("--no-pager: exit %d, paged %v, coloured %v", code, strings.Contains(out, "PAGED:"), strings.Contains(out, "\x1b["))
	}
	for name, run := range map[string][]string{"--color=never": append(show, "--no-pager", "--color=never"), "NO_COLOR": append(show, "--no-pager")} {
		env := map[string]string{}
		if name == "NO_COLOR" {
			env["NO_COLOR"] = "1"
		}
		if _, out := ptyRun(t, 60, 24, env, run...); strings.Contains(out, "\x1b[") {
			t.Errorf("%s: coloured output", name)
		}
	}
	// The whole page fits a tall terminal: written directly, not paged.
	if _, out := ptyRun(t, 300, 400, pager, show...); strings.Contains(out, "PAGED:") {
		t.Errorf("a page that fits the terminal was paged")
	}
	// --wide: one line per row even on a narrow terminal.
	_, wide := ptyRun(t, 60, 24, nil, append(show, "--no-pager", "--wide", "--color=never")...)
	if !strings.Contains(wide, "[0x0000, 4B]   number of bytes that follow") {
		t.Errorf("--wide did not keep rows on one line:\n%s", wide)
	}
}

// TestErrorRedOnTerminal: an error is red on a terminal, plain in a pipe.
func TestErrorRedOnTerminal(t *testing.T) {
	_, out := ptyRun(t, 80, 24, nil, "show", "--spec", decSpec, "NoSuchAPI")
	if !strings.Contains(out, "\x1b[1;31mmanifester show: ") {
		t.Errorf("error not red on a terminal: %q", out)
	}
	code, _, errs := decRun(t, nil, "show", "--spec", decSpec, "NoSuchAPI")
	if code != ExitUsage || strings.Contains(errs, "\x1b[") {
		t.Errorf("error in a pipe: exit %d, %q", code, errs)
	}
}

// TestDecodeOnTerminal: decode fits a 50-column terminal, and piped
// output with --color=always is the pipe's text with colours added.
func TestDecodeOnTerminal(t *testing.T) {
	frame := decCreateTopics(7)
	path := t.TempDir() + "/ct.bin"
	if err := os.WriteFile(path, frame, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := ptyRun(t, 50, 500, nil, "decode", "--spec", decSpec, path)
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, l := range strings.Split(ansiEscape.ReplaceAllString(out, ""), "\n") {
		if w := term.Width(l); w > 50 && !gridRow.MatchString(l) {
			t.Errorf("a %d-cell line on a 50-column terminal: %q", w, l)
		}
	}
	_, ref, _ := decRun(t, frame, "decode", "--spec", decSpec)
	_, col, _ := decRun(t, frame, "decode", "--spec", decSpec, "--color=always")
	if !strings.Contains(col, "\x1b[") || ansiEscape.ReplaceAllString(col, "") != ref {
		t.Errorf("--color=always into a pipe: coloured %v, same text %v", strings.Contains(col, "\x1b["), ansiEscape.ReplaceAllString(col, "") == ref)
	}
}

// TestDecodeStdinTerminal: with no input given and stdin a terminal (the
// user typing), decode says what to give instead of waiting for input.
func TestDecodeStdinTerminal(t *testing.T) {
	m, s := openPty(t)
	defer m.Close()
	defer s.Close()
	var out, errb bytes.Buffer
	e := &Env{Stdin: s, Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	if code := Main(e, []string{"decode", "--spec", decSpec}); code != ExitUsage || !strings.Contains(errb.String(), "nothing to decode: give --hex HEX, a FILE, - for stdin") {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}
