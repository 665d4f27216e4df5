package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testdeadline"
	"github.com/manifester/manifester/internal/testshared"
)

// lockedBuffer is a bytes.Buffer safe for a writer and a reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// specCluster starts a one-broker kfake cluster with topic "t" that, like
// the kgo clients the tests point at it, speaks only the versions the test
// spec knows, so every frame decodes. It returns the versions too, for
// the clients.
func specCluster(t *testing.T) (*kfake.Cluster, *kversion.Versions) {
	t.Helper()
	reg, err := schema.Load(testshared.Spec(t, "4.3"))
	if err != nil {
		t.Fatal(err)
	}
	vs := new(kversion.Versions)
	for _, api := range reg.APIs {
		if !api.Reserved() {
			vs.SetMaxKeyVersion(api.Key, api.Request.Valid.Hi)
		}
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"), kfake.MaxVersions(vs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, vs
}

// TestProxyCommand runs `manifester proxy` in-process in front of kfake,
// produces and consumes through it with kgo, and checks the printed
// summaries and the JSON-lines log: with the decoding in a process of its
// own (this test binary again, see TestMain), whose threads all run at
// SCHED_IDLE on Linux, and in the proxy's process.
func TestProxyCommand(t *testing.T) {
	for _, child := range []bool{true, false} {
		t.Run(fmt.Sprintf("decode-process=%v", child), func(t *testing.T) { testProxyCommand(t, child) })
	}
}

func testProxyCommand(t *testing.T, child bool) {
	c, vs := specCluster(t)

	ctx, stop := context.WithCancel(context.Background())
	logPath := filepath.Join(t.TempDir(), "proxy.jsonl")
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	env := &Env{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Getenv: func(string) string { return "" }, Stop: ctx}
	done := make(chan int)
	go func() {
		done <- Main(env, []string{"proxy", "--spec", decSpec, "--listen", "127.0.0.1:0", "--upstream", c.ListenAddrs()[0],
			"--log", logPath, "--roundtrip", fmt.Sprintf("--decode-process=%v", child)})
	}()
	var addr string
	re := regexp.MustCompile(`listening on (\S+),`)
	for deadline := testdeadline.Deadline(t); addr == "" && time.Now().Before(deadline); {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	if addr == "" {
		stop()
		t.Fatalf("proxy did not start: %s", stderr.String())
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.MaxVersions(vs), kgo.DefaultProduceTopic("t"),
		kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	tctx, cancel := testdeadline.From(t, context.Background())
	defer cancel()
	if err := cl.ProduceSync(tctx, &kgo.Record{Value: []byte("through the proxy")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for len(got) == 0 && tctx.Err() == nil {
		cl.PollFetches(tctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	cl.Close()
	pid := decoderPid(t, stderr.String(), child)
	switch {
	case pid > 0 && strings.Contains(stderr.String(), "decoding process: warning: idle priority"):
		// A machine that refuses SCHED_IDLE (a seccomp profile): said, not hidden.
		t.Logf("this machine refused the decoding process its priority: %s", stderr.String())
	case pid > 0 && runtime.GOOS == "linux":
		checkIdleThreads(t, pid)
	}
	stop()
	if code := <-done; code != 0 {
		t.Fatalf("proxy exited %d: %s", code, stderr.String())
	}
	if len(got) != 1 || got[0] != "through the proxy" {
		t.Errorf("consumed %q", got)
	}
	if pid > 0 {
		// The command returns once its decoding process has exited.
		if processAlive(pid) {
			t.Errorf("decoding process %d still runs after the proxy command returned", pid)
		}
	}

	out := stdout.String()
	for _, want := range []string{"request Produce(0)", "response Produce(0)", "response Fetch(1)", "latency", "# ", "listen", "open conn 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary output lacks %q:\n%.2000s", want, out)
		}
	}
	if strings.Contains(out, "error:") || strings.Contains(out, "fault") {
		t.Errorf("errors or faults in the summary:\n%s", out)
	}

	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l struct {
			Event     string  `json:"event"`
			Kind      string  `json:"kind"`
			API       string  `json:"api"`
			Error     *string `json:"error"`
			Roundtrip *bool   `json:"roundtrip"`
			Tree      any     `json:"tree"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line is not JSON: %v: %.200s", err, sc.Text())
		}
		if l.Event != "frame" {
			kinds[l.Event]++
			continue
		}
		kinds[l.Kind+" "+l.API]++
		if l.Error != nil || l.Roundtrip == nil || !*l.Roundtrip || l.Tree == nil {
			t.Errorf("log frame %s %s: error %v, roundtrip %v", l.Kind, l.API, l.Error, l.Roundtrip)
		}
	}
	for _, want := range []string{"listen", "open", "close", "request Produce", "response Produce", "request Fetch", "response Metadata"} {
		if kinds[want] == 0 {
			t.Errorf("log has no %q line: %v", want, kinds)
		}
	}
}
