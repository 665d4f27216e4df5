// Package cli holds the manifester commands. cmd/manifester only calls
// [Main]; each command lives in its own file and registers itself.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/specfind"
	"github.com/manifester/manifester/internal/term"
)

// Exit statuses.
const (
	ExitOK      = 0 // success
	ExitFailure = 1 // the input did not decode or round-trip, or the operation failed
	ExitUsage   = 2 // bad flags or arguments, unknown API or version, or a bad spec
)

// Env bundles the process environment a command runs in, so tests can run
// commands in-process.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// SpecPlaces are the fixed Kafka installation folders searched for
	// specs when none are given (/opt/kafka/libs, Homebrew's); the real
	// environment has specfind.DefaultSystem, tests leave it empty.
	SpecPlaces []specfind.System
	// Stop, when set, ends the commands that run until stopped (serve,
	// proxy) when it is done, instead of SIGINT or SIGTERM (tests set it).
	Stop context.Context

	// collect, when set, makes a command's --help store its flag set
	// here instead of printing (completion and man read every command's
	// flags this way).
	collect **flag.FlagSet
	// color is the --color setting of the running command, for its
	// error message (auto when the command has no --color).
	color term.ColorMode
}

type command struct {
	name    string
	usage   string // argument synopsis
	summary string
	run     func(env *Env, args []string) error
	hidden  bool // not listed in the help (internal helpers of completion)
	// subcommands are words that may follow the command and make a
	// command of their own with its own flags (specs fetch); run is given
	// them as its first argument.
	subcommands []string
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// usageError marks an error as a usage problem (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// failure marks an error as an operation failure (exit status 1), e.g. a
// frame that did not decode.
type failure struct{ err error }

func (e failure) Error() string { return e.err.Error() }
func (e failure) Unwrap() error { return e.err }

// errSilentFailure exits 1 after the command already reported why.
var errSilentFailure = errors.New("")

// Main runs the command line and returns the exit status.
func Main(env *Env, args []string) int {
	if len(args) == 0 {
		// Not a request for help: the help is the error message.
		printHelp(env.Stderr, env)
		return ExitUsage
	}
	switch args[0] {
	case "-h", "--help", "-help":
		printHelp(env.Stdout, env)
		return ExitOK
	case "help":
		if len(args) == 1 {
			printHelp(env.Stdout, env)
			return ExitOK
		}
		// "manifester help show" is "manifester show --help".
		args = []string{args[1], "--help"}
	case "--version", "-version", "-V":
		printVersion(env.Stdout)
		return ExitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		msg := fmt.Sprintf("manifester: unknown command %q", args[0])
		if strings.HasPrefix(args[0], "-") {
			msg = fmt.Sprintf("manifester: unknown flag %q before a command", args[0])
		}
		if s := suggest(args[0], commandNames()); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		fmt.Fprintf(env.Stderr, "%s (see manifester --help)\n", msg)
		return ExitUsage
	}
	err := c.run(env, args[1:])
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.Is(err, errSilentFailure):
		return ExitFailure
	}
	// An error can quote its input: a JSON body's unknown key, a path.
	// Its control characters are escaped (its lines and tabs kept), so
	// that nothing from the input reaches the terminal raw.
	fmt.Fprintln(env.Stderr, errorText(env, text.EscapeBlock(fmt.Sprintf("manifester %s: %v", c.name, err))))
	var f failure
	if errors.As(err, &f) {
		return ExitFailure
	}
	return ExitUsage
}

func printHelp(w io.Writer, env *Env) {
	fmt.Fprintln(w, "manifester shows what every Kafka API puts on the wire, to the byte.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: manifester COMMAND [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, n := range commandNames() {
		c := commands[n]
		fmt.Fprintf(w, "  %-9s %s\n", n, c.summary)
		// Continuation lines of a usage are indented for "Usage: "; align
		// them with this listing instead.
		usage := strings.ReplaceAll(c.usage, "\n       ", "\n            ")
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("            manifester %s %s", n, usage), " "))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Specs: --spec PATH reads Kafka's message specs from a directory of *.json files, a Kafka")
	fmt.Fprintln(w, "source checkout, a Kafka download or its libs/ folder, a kafka-clients jar, a release")
	fmt.Fprintln(w, "number (--spec 4.3.0, looked up below) or comma-separated jars of one release (clients")
	fmt.Fprintln(w, "and module jars, which add record schemas); --spec LABEL=PATH names the release.")
	fmt.Fprintln(w, "Without --spec, $MANIFESTER_SPEC is used; without both, the newest release found in")
	fmt.Fprintln(w, "these places, searched in this order (stderr says which one was used):")
	for i, p := range specfind.Places {
		fmt.Fprintf(w, "  %d. %s\n", i+1, p)
	}
	fmt.Fprintf(w, "Used now without --spec: %s.\n", specsInUse(env))
	fmt.Fprintln(w, "`manifester specs` lists what is found; `manifester specs fetch 4.3.0` downloads a release.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Flags take --flag value or --flag=value, before or after the arguments; -s, -f and -o")
	fmt.Fprintln(w, "are short for --spec, --format and --out. \"manifester COMMAND --help\" (or")
	fmt.Fprintln(w, "\"manifester help COMMAND\") describes one command; \"manifester --version\" prints the version.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit status: 0 success; 1 input that did not decode or round-trip, or a failed")
	fmt.Fprintln(w, "operation; 2 bad usage, unknown API or version, or a spec that does not load.")
}

// newFlags returns a flag set that reports errors instead of exiting.
// "--help" prints the command's help (see printCommandHelp) on standard
// output; parse errors are returned by [parse], never printed by the flag
// package (so they appear once).
func newFlags(env *Env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		if env.collect != nil {
			*env.collect = fs
			return
		}
		printCommandHelp(env.Stdout, fs, name, usage)
	}
	return fs
}

// parse parses flags that may come before, between or after positional
// arguments, and returns the positional ones. It first adds the short
// forms of the common flags (see shortFlags); -h and --help print the
// command's help and return flag.ErrHelp; any other flag error becomes a
// usage error with a suggestion for a mistyped name.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	addShortFlags(fs)
	usage := fs.Usage
	fs.Usage = func() {} // the flag package calls it on errors too
	defer func() { fs.Usage = usage }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				if usage != nil {
					usage()
				}
				return nil, flag.ErrHelp
			}
			return nil, usageError{flagError(fs, err)}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// stdEnv is the real process environment.
func stdEnv() *Env {
	return &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, SpecPlaces: specfind.DefaultSystem}
}

// Run is Main with the real process environment.
func Run(args []string) int { return Main(stdEnv(), args) }
