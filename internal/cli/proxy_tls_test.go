package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/manifester/manifester/internal/testcert"
)

// The secrets of the SASL users; no 4-byte piece of them may appear in
// any output.
const (
	plainPassword = "Pl41n-Qx7Zv3Wk9"
	scramPassword = "Scr4m-Jh6Ty2Rb8"
)

// runningProxy is `manifester proxy` started in-process.
type runningProxy struct {
	addr           string
	stdout, stderr *lockedBuffer
	stop           func() int // stops it and returns its exit status
}

func startProxyCommand(t *testing.T, args ...string) *runningProxy {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	env := &Env{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Getenv: func(string) string { return "" }, Stop: ctx}
	done := make(chan int, 1)
	go func() { done <- Main(env, append([]string{"proxy", "--spec", decSpec}, args...)) }()
	re := regexp.MustCompile(`listening on (\S+),`)
	deadline := time.Now().Add(30 * time.Second)
	var addr string
	for addr == "" && time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
			break
		}
		select {
		case code := <-done:
			cancel()
			t.Fatalf("proxy exited %d: %s", code, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if addr == "" {
		cancel()
		t.Fatalf("proxy did not start: %s", stderr.String())
	}
	rp := &runningProxy{addr: addr, stdout: stdout, stderr: stderr}
	rp.stop = func() int {
		cancel()
		code := <-done
		return code
	}
	return rp
}

// saslCluster is a kfake cluster that requires mutual TLS and SASL
// (PLAIN user alice, SCRAM-SHA-256 user bob).
func saslCluster(t *testing.T, certs *testcert.Set) *kfake.Cluster {
	t.Helper()
	_, vs := specCluster(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(2), kfake.SeedTopics(1, "t"), kfake.MaxVersions(vs),
		kfake.TLS(certs.ServerConfig(true)), kfake.EnableSASL(),
		kfake.Superuser("PLAIN", "alice", plainPassword), kfake.Superuser("SCRAM-SHA-256", "bob", scramPassword))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// produceConsume produces a record and consumes it back with kgo over
// TLS with the SASL mechanism.
func produceConsume(t *testing.T, addr string, certs *testcert.Set, mech sasl.Mechanism, value string) {
	t.Helper()
	_, vs := specCluster(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.MaxVersions(vs), kgo.DialTLSConfig(certs.ClientConfig(false)),
		kgo.SASL(mech), kgo.DefaultProduceTopic("t"), kgo.ConsumeTopics("t"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatalf("%s: produce: %v", mech.Name(), err)
	}
	for ctx.Err() == nil {
		found := false
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil && ctx.Err() == nil {
			t.Fatalf("%s: fetch: %v", mech.Name(), err)
		}
		fs.EachRecord(func(r *kgo.Record) { found = found || string(r.Value) == value })
		if found {
			return
		}
	}
	t.Fatalf("%s: %q not consumed back", mech.Name(), value)
}

// holdsSecret names the secret a piece of which out holds, as text or
// as hex (how JSON bodies and trees show bytes).
func holdsSecret(out []byte) string {
	for _, s := range []string{plainPassword, scramPassword} {
		for i := 0; i+4 <= len(s); i++ {
			if bytes.Contains(out, []byte(s[i:i+4])) || bytes.Contains(out, []byte(hex.EncodeToString([]byte(s[i:i+4])))) {
				return s
			}
		}
	}
	return ""
}

// TestProxyTLSAndSASL: kgo with SASL PLAIN and SCRAM-SHA-256 speaks TLS
// to `manifester proxy`, which speaks mutual TLS to a kfake cluster that
// requires SASL: produce and consume work, and no secret is in the
// proxy's output or log, nor in what `decode` makes of the log. With
// --show-secrets the log holds them, and decode still redacts them
// unless given --show-secrets too.
func TestProxyTLSAndSASL(t *testing.T) {
	brokerCerts, proxyCerts := testcert.New(t, "broker"), testcert.New(t, "proxy")
	c := saslCluster(t, brokerCerts)
	dir := t.TempDir()
	tlsArgs := []string{"--listen", "127.0.0.1:0", "--upstream", c.ListenAddrs()[0], "--roundtrip",
		"--tls-cert", proxyCerts.ServerCert, "--tls-key", proxyCerts.ServerKey,
		"--upstream-tls", "--upstream-ca", brokerCerts.CAFile, "--upstream-cert", brokerCerts.ClientCert, "--upstream-key", brokerCerts.ClientKey}

	logPath := filepath.Join(dir, "proxy.jsonl")
	rp := startProxyCommand(t, append(tlsArgs, "--log", logPath, "--format", "text")...)
	produceConsume(t, rp.addr, proxyCerts, plain.Auth{User: "alice", Pass: plainPassword}.AsMechanism(), "plain over TLS")
	produceConsume(t, rp.addr, proxyCerts, scram.Auth{User: "bob", Pass: scramPassword}.AsSha256Mechanism(), "scram over TLS")
	if code := rp.stop(); code != 0 {
		t.Fatalf("proxy exited %d: %s", code, rp.stderr.String())
	}
	logData, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string][]byte{"stdout": []byte(rp.stdout.String()), "stderr": []byte(rp.stderr.String()), "log": logData} {
		if s := holdsSecret(out); s != "" {
			t.Errorf("the proxy's %s holds a piece of %q", name, s)
		}
	}
	if regexp.MustCompile(`(?m)^  error: |^# \S+ error`).MatchString(rp.stdout.String()) {
		t.Errorf("errors in the proxy's output:\n%.3000s", rp.stdout.String())
	}
	// Both mechanisms authenticated through the proxy, and their auth
	// bytes are shown with their structure.
	for _, want := range []string{`authcid \"alice\", password redacted (15 bytes)`, `client proof redacted`, `n (username)`} {
		if !bytes.Contains(logData, []byte(want)) {
			t.Errorf("the log lacks %q", want)
		}
	}
	logFrames, _ := countLogLines(t, logData)

	// decode reads the log: text and JSON, no secret, every frame clean.
	for _, format := range []string{"text", "json"} {
		var out, errb bytes.Buffer
		env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
		if code := Main(env, []string{"decode", "--spec", decSpec, "--format", format, logPath}); code != 0 {
			t.Fatalf("decode --format %s of the log exited %d: %s", format, code, errb.String())
		}
		if s := holdsSecret(out.Bytes()); s != "" {
			t.Errorf("decode --format %s of the log holds a piece of %q", format, s)
		}
		if format == "json" {
			if n, _ := countLogLines(t, out.Bytes()); n != logFrames {
				t.Errorf("decode --format json: %d frame lines, the log has %d", n, logFrames)
			}
		}
		if !strings.Contains(errb.String(), " frames, ") {
			t.Errorf("decode's summary: %s", errb.String())
		}
	}

	// --show-secrets on the proxy: the log holds the password; decode
	// redacts it by default and shows it with --show-secrets.
	shownPath := filepath.Join(dir, "shown.jsonl")
	rp = startProxyCommand(t, append(tlsArgs, "--log", shownPath, "--show-secrets")...)
	produceConsume(t, rp.addr, proxyCerts, plain.Auth{User: "alice", Pass: plainPassword}.AsMechanism(), "shown")
	if code := rp.stop(); code != 0 {
		t.Fatalf("proxy exited %d", code)
	}
	shown, _ := os.ReadFile(shownPath)
	if holdsSecret(shown) != plainPassword {
		t.Fatal("with --show-secrets the log should hold the password")
	}
	for _, show := range []bool{false, true} {
		var out, errb bytes.Buffer
		env := &Env{Stdin: bytes.NewReader(shown), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
		args := []string{"decode", "--spec", decSpec, "--format", "json", "-"}
		if show {
			args = append(args, "--show-secrets")
		}
		if code := Main(env, args); code != 0 {
			t.Fatalf("decode exited %d: %s", code, errb.String())
		}
		if got := holdsSecret(out.Bytes()) != ""; got != show {
			t.Errorf("decode --show-secrets=%v of a log with secrets: secret in the output %v", show, got)
		}
	}
}

// countLogLines counts frame and other lines of a JSON-lines log, and
// checks that each is JSON with conn and event.
func countLogLines(t *testing.T, data []byte) (frames, others int) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var l struct {
			Conn  *int    `json:"conn"`
			Event *string `json:"event"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Conn == nil || l.Event == nil {
			t.Fatalf("line without conn or event (%v): %.200s", err, sc.Text())
		}
		if *l.Event == "frame" {
			frames++
		} else {
			others++
		}
	}
	return frames, others
}
