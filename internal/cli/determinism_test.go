package cli

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/manifester/manifester/internal/testdeadline"
	"github.com/manifester/manifester/internal/testshared"
)

// buildHelperEnv names the variable that turns this test binary into a
// plain `manifester build` (see TestBuildHelperProcess).
const buildHelperEnv = "MANIFESTER_TEST_BUILD_ARGS"

// TestBuildHelperProcess is not a test: run as a child of
// TestSiteBuildDeterministic, it runs `manifester build` with the
// arguments in $MANIFESTER_TEST_BUILD_ARGS (separated by U+001F) and exits.
func TestBuildHelperProcess(t *testing.T) {
	args := os.Getenv(buildHelperEnv)
	if args == "" {
		t.Skip("helper process for TestSiteBuildDeterministic")
	}
	var errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: os.Stdout, Stderr: &errb, Getenv: func(string) string { return "" }}
	code := Main(env, strings.Split(args, "\x1f"))
	os.Stderr.Write(errb.Bytes())
	os.Exit(code)
}

// TestSiteBuildDeterministic builds the site of every release twice at
// the same time, in two processes with GOMAXPROCS 1 and 4 (so the page
// workers interleave differently and the machine is busy), and checks that
// the two directories hold the same files with the same bytes. With
// -short or -race only 4.3 is built.
func TestSiteBuildDeterministic(t *testing.T) {
	testshared.Dir(t)
	specs := allSpecFlags()
	if testing.Short() || raceEnabled {
		specs = []string{"--spec", spec43}
	}
	ctx := testdeadline.Context(t)
	dirs := []string{t.TempDir(), t.TempDir()}
	procs := []string{"1", "4"}
	errs := make([]error, len(dirs))
	outs := make([][]byte, len(dirs))
	var wg sync.WaitGroup
	for i := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := append(append([]string{"build"}, specs...), "--out", dirs[i])
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestBuildHelperProcess$")
			cmd.Env = append(os.Environ(), buildHelperEnv+"="+strings.Join(args, "\x1f"), "GOMAXPROCS="+procs[i])
			outs[i], errs[i] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("build with GOMAXPROCS=%s: %v\n%s", procs[i], err, outs[i])
		}
	}
	a, b := readTree(t, dirs[0]), readTree(t, dirs[1])
	if len(a) < 700 {
		t.Fatalf("only %d files built", len(a))
	}
	var diffs []string
	for p, body := range a {
		if other, ok := b[p]; !ok {
			diffs = append(diffs, p+" only with GOMAXPROCS=1")
		} else if !bytes.Equal(body, other) {
			diffs = append(diffs, fmt.Sprintf("%s differs (%d and %d bytes)", p, len(body), len(other)))
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			diffs = append(diffs, p+" only with GOMAXPROCS=4")
		}
	}
	if len(diffs) > 0 {
		t.Errorf("%d of %d files differ between two builds of the same specs, e.g. %v", len(diffs), len(a), diffs[:min(10, len(diffs))])
	}
}

// readTree reads every file under dir, keyed by slash-separated path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
