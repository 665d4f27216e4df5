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

// runMain runs the command args with stdin as its input and returns its
// stdout, its stderr and its exit status.
func runMain(stdin string, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code = cli.Main(env, args)
	return out.String(), errb.String(), code
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
		out, errOut, code := runMain("", args...)
		if code != cli.ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		if r, ok := rawControl(out + errOut); ok {
			t.Errorf("%v: raw %q in the output", args, r)
		}
		if !strings.Contains(out, `red \x1b[31mtext\x1b[0m`) {
			t.Errorf("%v: the escaped about is missing:\n%s", args, out)
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
		out, errOut, code := runMain("", c.args...)
		if code != cli.ExitOK {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		if r, ok := rawControl(out + errOut); ok {
			t.Errorf("%v: raw %q in the output:\n%s", c.args, r, out)
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%v: %q is missing:\n%s", c.args, c.want, out)
		}
	}
}

// TestErrorTextEscaped: a command's error quotes its input (here a JSON
// body's unknown key, which sets the terminal's title) escaped, never
// raw; the lines of a multi-line error stay lines.
func TestErrorTextEscaped(t *testing.T) {
	out, got, code := runMain(`{"A": 1, "B\u001b]0;pwned\u0007": 2}`, "encode", "--spec", escSpec, "--api", "1002", "-")
	if code == cli.ExitOK {
		t.Fatalf("encode of an unknown field: exit 0: %s", out)
	}
	if r, ok := rawControl(got); ok {
		t.Errorf("raw %q in the error: %q", r, got)
	}
	if !strings.Contains(got, `B\x1b]0;pwned\a`) {
		t.Errorf("the error %q does not quote the key escaped", got)
	}
	_, errOut, code := runMain("", "show", "--spec", "../../testdata/specs/bad/duplicate_api_key", "Esc")
	if code == cli.ExitOK {
		t.Fatal("a bad spec loaded")
	}
	if lines := strings.Count(errOut, "\n"); lines < 2 {
		t.Errorf("a spec's load error lost its lines: %q", errOut)
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
	out, errOut, code := runMain("", "specs", "--spec", dir)
	if code != cli.ExitOK {
		t.Fatalf("specs: exit %d: %s", code, errOut)
	}
	if r, ok := rawControl(out + errOut); ok {
		t.Errorf("raw %q in the output: %q", r, out)
	}
	if !strings.Contains(out, `spec\x1b]0;pwned\a`) {
		t.Errorf("the folder's name is not listed escaped:\n%s", out)
	}
}
