package cli_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/cli"
	"github.com/manifester/manifester/internal/testshared"
)

// commandsUnderTest are the commands whose help is checked; every
// registered command is also checked through the top-level help listing.
func listedCommands(t *testing.T) []string {
	t.Helper()
	_, out, _ := mainRun(t, nil, "--help")
	var names []string
	in := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "Commands:":
			in = true
		case in && line == "":
			in = false
		case in && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   "):
			names = append(names, strings.Fields(line)[0])
		}
	}
	if len(names) < 8 {
		t.Fatalf("the help lists %d commands: %q", len(names), names)
	}
	return names
}

// TestHelpEveryCommand: "CMD --help", "CMD -h" and "help CMD" print the
// same help on stdout, exit 0, write nothing on stderr, and show no Go
// type noise or doubled defaults.
func TestHelpEveryCommand(t *testing.T) {
	for _, name := range listedCommands(t) {
		t.Run(name, func(t *testing.T) {
			code, out, errs := mainRun(t, nil, name, "--help")
			if code != cli.ExitOK || errs != "" {
				t.Fatalf("exit %d, stderr %q", code, errs)
			}
			if !strings.HasPrefix(out, "Usage: manifester "+name) || !strings.Contains(out, "-h, --help") {
				t.Errorf("help:\n%s", out)
			}
			for _, noise := range []string{" string ", " int ", " value ", "(default -1)", "default: the highest valid version) (default"} {
				if strings.Contains(out, noise) {
					t.Errorf("help contains %q:\n%s", noise, out)
				}
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.Count(line, "default") > 1 {
					t.Errorf("two defaults in %q", line)
				}
			}
			for _, args := range [][]string{{name, "-h"}, {"help", name}} {
				code2, out2, errs2 := mainRun(t, nil, args...)
				if code2 != cli.ExitOK || out2 != out || errs2 != "" {
					t.Errorf("%q: exit %d, same help %t, stderr %q", args, code2, out2 == out, errs2)
				}
			}
		})
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, errs := mainRun(t, nil, args...)
		if code != cli.ExitOK || errs != "" {
			t.Fatalf("%q: exit %d, stderr %q", args, code, errs)
		}
		if !strings.HasPrefix(out, "manifester ") || !strings.Contains(out, runtime.Version()) || !strings.Contains(out, runtime.GOOS+"/"+runtime.GOARCH) || strings.Count(out, "\n") != 1 {
			t.Errorf("%q: %q", args, out)
		}
	}
	if code, _, _ := mainRun(t, nil, "version", "extra"); code != cli.ExitUsage {
		t.Errorf("version extra: exit %d, want 2", code)
	}
}

// TestFlagConventions: --flag=value and --flag value, -s/-f short forms,
// suggestions for mistyped commands and flags, each error once on stderr.
func TestFlagConventions(t *testing.T) {
	_, want, _ := mainRun(t, nil, "show", "--spec", specDir43, "--format", "json", "AlterConfigs")
	for _, args := range [][]string{
		{"show", "--spec=" + specDir43, "--format=json", "AlterConfigs"},
		{"show", "-s", specDir43, "-f", "json", "AlterConfigs"},
		{"show", "-s=" + specDir43, "-f=json", "AlterConfigs"},
		{"show", "AlterConfigs", "-f", "json", "-spec", specDir43},
	} {
		code, out, errs := mainRun(t, nil, args...)
		if code != cli.ExitOK || out != want {
			t.Errorf("%q: exit %d, same output %t, stderr %q", args, code, out == want, errs)
		}
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"shwo"}, `did you mean "show"?`},
		{[]string{"decod"}, `did you mean "decode"?`},
		{[]string{"show", "--fromat", "json", "33"}, "unknown flag --fromat; did you mean --format?"},
		{[]string{"decode", "--roundtrp"}, "did you mean --roundtrip?"},
		{[]string{"show", "--version"}, "--version needs N"},
		{[]string{"show", "--version", "x", "33"}, `bad value "x" for --version`},
	}
	for _, c := range cases {
		code, out, errs := mainRun(t, nil, c.args...)
		if code != cli.ExitUsage || out != "" {
			t.Errorf("%q: exit %d, stdout %q", c.args, code, out)
		}
		if !strings.Contains(errs, c.want) {
			t.Errorf("%q: stderr lacks %q:\n%s", c.args, c.want, errs)
		}
		if n := strings.Count(errs, "\n"); n != 1 {
			t.Errorf("%q: %d lines on stderr, want the error once:\n%s", c.args, n, errs)
		}
	}
	// A name far from every command gets no guess.
	if _, _, errs := mainRun(t, nil, "zzzzzz"); strings.Contains(errs, "did you mean") {
		t.Errorf("zzzzzz: %s", errs)
	}
}

// TestIgnoredOptionsWarn: options that have no effect in a mode are
// warned about on stderr, and the command still succeeds.
func TestIgnoredOptionsWarn(t *testing.T) {
	spec42 := testshared.Spec(t, "4.2")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"show", "--spec", spec42, "--spec", specDir43, "33"}, "warning: 2 specs given; show reads one and uses the newest"},
		{[]string{"vectors", "--spec", spec42, "--spec", specDir43}, "warning: 2 specs given"},
		{[]string{"show", "--spec", specDir43, "-f", "json", "--wide", "33"}, "warning: --wide has no effect"},
		{[]string{"decode", "--spec", specDir43, "--about", "--hex", "0000000a0012000300000000ffff"}, "warning: --about has no effect without --format json"},
	}
	for _, c := range cases {
		code, _, errs := mainRun(t, nil, c.args...)
		if !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stderr lacks %q:\n%s", c.args, code, c.want, errs)
		}
	}
	if _, _, errs := mainRun(t, nil, "show", "--spec", specDir43, "33"); strings.Contains(errs, "warning") {
		t.Errorf("a plain show warns: %s", errs)
	}
}
