package cli

import (
	"bufio"
	"flag"
	"io"
	"os"
	"strings"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/term"
)

// stdinIsInput reports whether standard input is something to read: a
// pipe or a redirected file, not the terminal the user types in.
func stdinIsInput(env *Env) bool {
	return env.Stdin != nil && !term.IsTerminal(env.Stdin)
}

// withPeekableStdin returns a copy of env whose Stdin can be peeked at.
func withPeekableStdin(env *Env) *Env {
	if _, ok := env.Stdin.(*bufio.Reader); ok || env.Stdin == nil {
		return env
	}
	e := *env
	e.Stdin = bufio.NewReaderSize(env.Stdin, 64<<10)
	return &e
}

// captureInput looks at the first bytes of a FILE (or "-", standard
// input, which withPeekableStdin made peekable) and, when they are a
// capture's, returns a path to read it from: the file itself, or "-"
// (read from standard input as it streams, as --pcap - reads it).
func captureInput(env *Env, name string) (path string, cleanup func(), isCapture bool, err error) {
	cleanup = func() {}
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return "", cleanup, false, failure{err}
		}
		defer f.Close()
		head := make([]byte, 4)
		n, _ := io.ReadFull(f, head)
		return name, cleanup, capture.IsCapture(head[:n]), nil
	}
	br, ok := env.Stdin.(*bufio.Reader)
	if !ok {
		return "", cleanup, false, nil
	}
	head, _ := br.Peek(4)
	if !capture.IsCapture(head) {
		return "", cleanup, false, nil
	}
	// Read as it comes, as with --pcap -: the peeked bytes are still in
	// br, which is env.Stdin.
	return "-", cleanup, true, nil
}

// warnIgnored warns about each named flag that was given but has no
// effect here, saying why.
func warnIgnored(env *Env, cmd string, fs *flag.FlagSet, why string, names ...string) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var given []string
	for _, n := range names {
		if set[n] {
			given = append(given, spelled(n))
		}
	}
	if len(given) == 0 {
		return
	}
	verb := "has"
	if len(given) > 1 {
		verb = "have"
	}
	warnf(env, cmd, "%s %s no effect: %s", strings.Join(given, " and "), verb, why)
}
