package cli

import (
	"bufio"
	"fmt"
	"os"

	"github.com/manifester/manifester/internal/vectors"
)

func init() {
	register(&command{
		name:    "vectors",
		usage:   "[--spec P] [--out FILE]",
		summary: "write test vectors (JSON lines) for every API, version and kind",
		run:     runVectors,
	})
}

func runVectors(env *Env, args []string) error {
	fs := newFlags(env, "vectors", "[--spec P] [--out FILE]")
	var specs specFlags
	fs.Var(&specs, "spec", "spec location `[LABEL=]PATH` (default $MANIFESTER_SPEC)")
	out := fs.String("out", "", "write to `FILE` instead of standard output")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("vectors takes no arguments")
	}
	rel, all, err := specs.newest(env)
	if err != nil {
		return err
	}
	warnNewestOnly(env, "vectors", all)
	vs, err := vectors.Generate(rel.Codec)
	if err != nil {
		return failure{err}
	}
	w := env.Stdout
	var f *os.File
	if *out != "" {
		if f, err = os.Create(*out); err != nil {
			return failure{err}
		}
		defer f.Close() // on the error paths; the normal path closes below
		w = f
	}
	bw := bufio.NewWriter(w)
	if err := vectors.Write(bw, vs); err != nil {
		return failure{fmt.Errorf("writing vectors: %w", err)}
	}
	if err := bw.Flush(); err != nil {
		return failure{fmt.Errorf("writing vectors: %w", err)}
	}
	if f != nil {
		return f.Close()
	}
	return nil
}
