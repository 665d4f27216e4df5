package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/manifester/manifester/internal/testdeadline"
)

var decoderPidRe = regexp.MustCompile(`decoding in process (\d+)\)`)

// decoderPid is the decoding process's id that the proxy command's
// startup line names, 0 when it says it decodes in its own process; the
// test fails when that is not what child asks.
func decoderPid(t *testing.T, stderr string, child bool) int {
	t.Helper()
	m := decoderPidRe.FindStringSubmatch(stderr)
	switch {
	case child && m == nil:
		t.Fatalf("no decoding process named on stderr:\n%s", stderr)
	case !child && !strings.Contains(stderr, "decoding in this process)"):
		t.Fatalf("stderr does not say the proxy decodes in its own process:\n%s", stderr)
	case m == nil:
		return 0
	}
	pid, _ := strconv.Atoi(m[1])
	if pid == os.Getpid() || pid <= 0 {
		t.Fatalf("decoding process %d: this process is %d", pid, os.Getpid())
	}
	return pid
}

// TestProxyDecoderDies: when the decoding process ends while the proxy
// runs, the proxy stops (it would log nothing more) and says why, with
// a failing exit status.
func TestProxyDecoderDies(t *testing.T) {
	c, _ := specCluster(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	env := &Env{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Getenv: func(string) string { return "" }, Stop: ctx}
	done := make(chan int, 1)
	go func() {
		done <- Main(env, []string{"proxy", "--spec", decSpec, "--listen", "127.0.0.1:0", "--upstream", c.ListenAddrs()[0],
			"--log", filepath.Join(t.TempDir(), "p.jsonl"), "--decode-process"})
	}()
	pid := 0
	for deadline := testdeadline.Deadline(t); pid == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if s := stderr.String(); strings.Contains(s, "listening on") {
			pid = decoderPid(t, s, true)
		}
	}
	if pid == 0 {
		t.Fatalf("proxy did not start: %s", stderr.String())
	}
	proc, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code == 0 {
			t.Errorf("exit status 0 after its decoding process was killed")
		}
	case <-time.After(time.Until(testdeadline.Deadline(t))):
		t.Fatalf("the proxy did not stop when its decoding process died: %s", stderr.String())
	}
	if s := stderr.String(); !strings.Contains(s, "the decoding process ended") || !strings.Contains(s, "the decoding process failed") {
		t.Errorf("stderr does not say the decoding process ended and failed:\n%s", s)
	}
}
