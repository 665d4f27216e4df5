// Package cli holds the manifester commands. cmd/manifester only calls
// [Main]; each command lives in its own file and registers itself.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/manifester/manifester/internal/specfind"
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
}

type command struct {
	name    string
	usage   string // argument synopsis
	summary string
	run     func(env *Env, args []string) error
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
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printHelp(env.Stdout, env)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.Stderr, "manifester: unknown command %q (see manifester --help)\n", args[0])
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
	fmt.Fprintf(env.Stderr, "manifester %s: %v\n", c.name, err)
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
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := commands[n]
		fmt.Fprintf(w, "  %-9s %s\n", n, c.summary)
		// Continuation lines of a usage are indented for "Usage: "; align
		// them with this listing instead.
		usage := strings.ReplaceAll(c.usage, "\n       ", "\n            ")
		fmt.Fprintf(w, "            manifester %s %s\n", n, usage)
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
	fmt.Fprintln(w, "Exit status: 0 success; 1 input that did not decode or round-trip, or a failed")
	fmt.Fprintln(w, "operation; 2 bad usage, unknown API or version, or a spec that does not load.")
}

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(env *Env, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "Usage: manifester %s %s\n", name, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags that may come before, between or after positional
// arguments, and returns the positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err}
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
