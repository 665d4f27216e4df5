package cli

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/testshared"
)

// BenchmarkBuildCommand runs `manifester build --spec 4.3 --out DIR` as the
// command line does: spec load, every page, and the files written, into a
// new directory each time.
func BenchmarkBuildCommand(b *testing.B) {
	testshared.Dir(b)
	dir := b.TempDir()
	i := 0
	for b.Loop() {
		out, errs, code := runCLIb(b, "build", "--spec", spec43, "--out", filepath.Join(dir, strconv.Itoa(i)))
		if code != ExitOK {
			b.Fatalf("build exited %d: %s%s", code, out, errs)
		}
		i++
	}
}

func runCLIb(b *testing.B, args ...string) (string, string, int) {
	b.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code := Main(env, args)
	return out.String(), errb.String(), code
}
