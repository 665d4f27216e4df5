package cli

import (
	"bufio"
	"flag"
	"fmt"
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
// capture's, returns a path to read it from: the file itself, or a
// temporary copy of standard input that cleanup removes.
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
	tmp, err := os.CreateTemp("", "manifester-stdin-*.pcap")
	if err != nil {
		return "", cleanup, false, failure{fmt.Errorf("copying the capture on standard input: %w", err)}
	}
	cleanup = func() { os.Remove(tmp.Name()) }
	if _, err := io.Copy(tmp, br); err != nil {
		tmp.Close()
		cleanup()
		return "", func() {}, false, failure{fmt.Errorf("copying the capture on standard input: %w", err)}
	}
	if err := tmp.Close(); err != nil {
		cleanup()
		return "", func() {}, false, failure{fmt.Errorf("copying the capture on standard input: %w", err)}
	}
	return tmp.Name(), cleanup, true, nil
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
