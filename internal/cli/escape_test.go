package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode"

	"github.com/manifester/manifester/internal/cli"
)

// escSpec is a synthetic spec whose about strings and comments carry ESC
// sequences, a bell, CR and U+202E.
const escSpec = "../../testdata/specs/escapes"

// escRecords is a synthetic record schema folder whose schema carries the
// same.
const escRecords = "../../testdata/records/escapes"

// rawControl returns the first character of s that a terminal would act
// on (a control character other than newline and tab, or a format
// character such as U+202E), if any.
func rawControl(s string) (rune, bool) {
	for _, r := range s {
		if r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.In(r, unicode.Cf)) {
			return r, true
		}
	}
	return 0, false
}

// TestSpecTextEscapedOnTerminal: show (an API's page and a record type's)
// and decode print the spec's texts escaped (\x1b, \r, \u202e), never raw.
func TestSpecTextEscapedOnTerminal(t *testing.T) {
	for _, args := range [][]string{
		{"show", "--spec", escSpec, "Esc"},
		{"show", "--spec", escSpec, "--version", "0", "Esc"},
		{"decode", "--spec", escSpec, "--hex", "0000000b03ea000000000000000000"},
		{"show", "--spec", escSpec, "--records", escRecords, "EscKey"},
	} {
		var out, errb bytes.Buffer
		env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
		if code := cli.Main(env, args); code != cli.ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		if r, ok := rawControl(out.String() + errb.String()); ok {
			t.Errorf("%v: raw %q in the output", args, r)
		}
		if !strings.Contains(out.String(), `red \x1b[31mtext\x1b[0m`) {
			t.Errorf("%v: the escaped about is missing:\n%s", args, out.String())
		}
	}
}

// TestDiffEscapesSpecText: diff prints a field's default (which a string
// field's may hold any character of) escaped, never raw, in its text for
// two versions and for two releases.
func TestDiffEscapesSpecText(t *testing.T) {
	const two = "../../testdata/specs/escapes-diff"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", "--spec", two, "Esc", "0", "1"}, `+ Title string (default x\x1b]0;pwned\ay, versions 1+)`},
		{[]string{"diff", "--spec", "A=" + escSpec, "--spec", "B=" + two, "--release", "A", "B"}, "1002 Esc versions 0 -> 0-1"},
	} {
		var out, errb bytes.Buffer
		env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
		if code := cli.Main(env, c.args); code != cli.ExitOK {
			t.Fatalf("%v: exit %d: %s", c.args, code, errb.String())
		}
		if r, ok := rawControl(out.String() + errb.String()); ok {
			t.Errorf("%v: raw %q in the output:\n%s", c.args, r, out.String())
		}
		if !strings.Contains(out.String(), c.want) {
			t.Errorf("%v: %q is missing:\n%s", c.args, c.want, out.String())
		}
	}
}

// TestErrorTextEscaped: a command's error quotes its input (here a JSON
// body's unknown key, which sets the terminal's title) escaped, never
// raw; the lines of a multi-line error stay lines.
func TestErrorTextEscaped(t *testing.T) {
	var out, errb bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(`{"A": 1, "B\u001b]0;pwned\u0007": 2}`), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	if code := cli.Main(env, []string{"encode", "--spec", escSpec, "--api", "1002", "-"}); code == cli.ExitOK {
		t.Fatalf("encode of an unknown field: exit 0: %s", out.String())
	}
	got := errb.String()
	if r, ok := rawControl(got); ok {
		t.Errorf("raw %q in the error: %q", r, got)
	}
	if !strings.Contains(got, `B\x1b]0;pwned\a`) {
		t.Errorf("the error %q does not quote the key escaped", got)
	}
	errb.Reset()
	env.Stdin = strings.NewReader("")
	if code := cli.Main(env, []string{"show", "--spec", "../../testdata/specs/bad/duplicate_api_key", "Esc"}); code == cli.ExitOK {
		t.Fatal("a bad spec loaded")
	}
	if lines := strings.Count(errb.String(), "\n"); lines < 2 {
		t.Errorf("a spec's load error lost its lines: %q", errb.String())
	}
}

// TestSpecsListingEscapesPaths: specs lists a spec folder whose name
// carries an escape sequence (names from the file system: a folder's, a
// jar's in the Maven cache) escaped, never raw.
func TestSpecsListingEscapesPaths(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows does not allow control characters in file names")
	}
	dir := filepath.Join(t.TempDir(), "spec\x1b]0;pwned\a")
	if err := os.CopyFS(dir, os.DirFS(escSpec)); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	if code := cli.Main(env, []string{"specs", "--spec", dir}); code != cli.ExitOK {
		t.Fatalf("specs: exit %d: %s", code, errb.String())
	}
	if r, ok := rawControl(out.String() + errb.String()); ok {
		t.Errorf("raw %q in the output: %q", r, out.String())
	}
	if !strings.Contains(out.String(), `spec\x1b]0;pwned\a`) {
		t.Errorf("the folder's name is not listed escaped:\n%s", out.String())
	}
}
