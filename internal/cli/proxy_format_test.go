package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/manifester/manifester/internal/testdeadline"
)

// runProxyFormat starts `manifester proxy --format format` in-process in
// front of kfake, pings the cluster through it with kgo (ApiVersions and
// Metadata), stops the proxy and returns its stdout.
func runProxyFormat(t *testing.T, format string) string {
	t.Helper()
	out, _ := runProxyPing(t, "--format", format)
	return out
}

// runProxyPing is runProxyFormat with the proxy's other flags args; it
// returns its stdout and stderr.
func runProxyPing(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	c, vs := specCluster(t)

	ctx, stop := context.WithCancel(context.Background())
	outBuf, errBuf := &lockedBuffer{}, &lockedBuffer{}
	env := &Env{Stdin: strings.NewReader(""), Stdout: outBuf, Stderr: errBuf, Getenv: func(string) string { return "" }, Stop: ctx}
	done := make(chan int)
	go func() {
		done <- Main(env, append([]string{"proxy", "--spec", decSpec, "--listen", "127.0.0.1:0", "--upstream", c.ListenAddrs()[0]}, args...))
	}()
	var addr string
	re := regexp.MustCompile(`listening on (\S+),`)
	for deadline := testdeadline.Deadline(t); addr == "" && time.Now().Before(deadline); {
		if m := re.FindStringSubmatch(errBuf.String()); m != nil {
			addr = m[1]
		}
		time.Sleep(20 * time.Millisecond)
	}
	if addr == "" {
		stop()
		<-done
		t.Fatalf("proxy did not start: %s", errBuf.String())
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.MaxVersions(vs))
	if err != nil {
		stop()
		<-done
		t.Fatal(err)
	}
	tctx, cancel := testdeadline.From(t, context.Background())
	defer cancel()
	perr := cl.Ping(tctx)
	cl.Close()
	stop()
	if code := <-done; code != 0 {
		t.Fatalf("proxy exited %d: %s", code, errBuf.String())
	}
	if perr != nil {
		t.Fatalf("ping through the proxy: %v", perr)
	}
	return outBuf.String(), errBuf.String()
}

// TestProxyFormatText checks that --format text prints each frame's object
// tree: the request header's fields with their offsets and sizes.
func TestProxyFormatText(t *testing.T) {
	out := runProxyFormat(t, "text")
	// A request header v1/v2: api key at 4, version at 6, correlation id at 8.
	for _, re := range []string{
		`(?m)^\s*\|?\s*\+-- request_api_key\s+int16\s+= 18 \(ApiVersions\)\s+\[0x0004, 2B\]`,
		`(?m)^\s*\|?\s*\+-- request_api_version\s+int16\s+= \d+\s+\[0x0006, 2B\]`,
		`(?m)^\s*\|?\s*\+-- correlation_id\s+int32\s+= \d+\s+\[0x0008, 4B\]`,
		`(?m)^\s*\|?\s*\+-- correlation_id\s+int32\s+= \d+\s+\[0x0004, 4B\]`, // a response header
		`(?m)^\s*\+-- MetadataRequest\b`,
		`(?m)^\s*\+-- MetadataResponse\b`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("text output has no line matching %s:\n%.3000s", re, out)
		}
	}
	if strings.Contains(out, "error:") || strings.Contains(out, "fault") {
		t.Errorf("errors or faults in the text output:\n%.3000s", out)
	}
}

// TestProxyFormatJSON checks that --format json prints only JSON lines,
// and that frame lines carry kind, api_key, version and correlation_id,
// each response matching a request by correlation id, API and version.
func TestProxyFormatJSON(t *testing.T) {
	out := runProxyFormat(t, "json")
	type key struct {
		api, ver int16
		corr     int32
	}
	reqs, resps := map[key]bool{}, map[key]bool{}
	events := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("stdout line is not JSON: %v: %.200s", err, sc.Text())
		}
		var ev string
		json.Unmarshal(l["event"], &ev)
		if ev != "frame" {
			events[ev]++
			continue
		}
		var f struct {
			Kind          *string `json:"kind"`
			APIKey        *int16  `json:"api_key"`
			Version       *int16  `json:"version"`
			CorrelationID *int32  `json:"correlation_id"`
			Error         string  `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatalf("frame line: %v: %.200s", err, sc.Text())
		}
		if f.Kind == nil || f.APIKey == nil || f.Version == nil || f.CorrelationID == nil {
			t.Errorf("frame line lacks kind, api_key, version or correlation_id: %.300s", sc.Text())
			continue
		}
		if f.Error != "" {
			t.Errorf("frame error %q: %.300s", f.Error, sc.Text())
		}
		k := key{*f.APIKey, *f.Version, *f.CorrelationID}
		switch *f.Kind {
		case "request":
			reqs[k] = true
		case "response":
			resps[k] = true
		default:
			t.Errorf("kind %q", *f.Kind)
		}
	}
	var sawAV, sawMD bool
	for k := range resps {
		if !reqs[k] {
			t.Errorf("response %+v answers no request", k)
		}
		sawAV = sawAV || k.api == 18
		sawMD = sawMD || k.api == 3
	}
	if !sawAV || !sawMD {
		t.Errorf("no ApiVersions (%v) or Metadata (%v) exchange: requests %v, responses %v", sawAV, sawMD, reqs, resps)
	}
	if events["open"] == 0 || events["close"] == 0 {
		t.Errorf("no open/close event lines: %v", events)
	}
}

// TestProxyUpstreamDoesNotResolve: an upstream name that does not resolve
// (.invalid never does) is said once at the start, as a warning; the
// proxy still starts, and stops cleanly. An IP address is not looked up.
func TestProxyUpstreamDoesNotResolve(t *testing.T) {
	for _, c := range []struct {
		upstream string
		warned   bool
	}{{"broker.manifester-test.invalid:9092", true}, {"127.0.0.1:9", false}} {
		ctx, stop := context.WithCancel(context.Background())
		stderr := &lockedBuffer{}
		env := &Env{Stdin: strings.NewReader(""), Stdout: &lockedBuffer{}, Stderr: stderr, Getenv: func(string) string { return "" }, Stop: ctx}
		done := make(chan int)
		go func() {
			done <- Main(env, []string{"proxy", "--spec", decSpec, "--listen", "127.0.0.1:0", "--upstream", c.upstream, "--decode-process=false"})
		}()
		for deadline := testdeadline.Deadline(t); !strings.Contains(stderr.String(), "listening on") && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		stop()
		if code := <-done; code != 0 {
			t.Fatalf("%s: exit %d: %s", c.upstream, code, stderr.String())
		}
		out := stderr.String()
		warn := "manifester proxy: warning: upstream " + c.upstream + " does not resolve now: "
		if strings.Contains(out, warn) != c.warned || !strings.Contains(out, "listening on") {
			t.Errorf("%s: stderr %q; want the warning: %v", c.upstream, out, c.warned)
		}
		if c.warned && strings.Index(out, warn) > strings.Index(out, "listening on") {
			t.Errorf("the warning comes after the listening line: %q", out)
		}
	}
}

// TestProxyBadFlagsBeforeListening: an --upstream that is no HOST:PORT
// (a broker named without its port: every client connection would fail
// to dial it), more --decode-workers than the runtime has threads for
// (each keeps one, in process: past 10,000 the runtime ends the process)
// and an --advertise-host with a port or brackets (written as the host of
// every rewritten address, which no client could then reach) are usage
// errors, before the proxy listens.
func TestProxyBadFlagsBeforeListening(t *testing.T) {
	for _, args := range [][]string{
		{"--upstream", "localhost"},
		{"--upstream", "127.0.0.1:"},
		{"--upstream", "[::1"},
		{"--upstream", "127.0.0.1:0"},
		{"--upstream", "127.0.0.1:99999"},
		{"--upstream", "127.0.0.1:9", "--decode-workers", "1025"},
		{"--upstream", "127.0.0.1:9", "--advertise-host", "proxy.example:9092"},
		{"--upstream", "127.0.0.1:9", "--advertise-host", "[::1]"},
	} {
		ctx, stop := context.WithCancel(context.Background())
		stderr := &lockedBuffer{}
		env := &Env{Stdin: strings.NewReader(""), Stdout: &lockedBuffer{}, Stderr: stderr, Getenv: func(string) string { return "" }, Stop: ctx}
		done := make(chan int, 1)
		go func() {
			done <- Main(env, append([]string{"proxy", "--spec", decSpec, "--listen", "127.0.0.1:0", "--decode-process=false"}, args...))
		}()
		code, ended, listened := 0, false, false
		for deadline := testdeadline.Deadline(t); !ended && time.Now().Before(deadline); {
			select {
			case code = <-done:
				ended = true
			case <-time.After(20 * time.Millisecond):
				if strings.Contains(stderr.String(), "listening on") {
					listened = true
					stop()
				}
			}
		}
		stop()
		if !ended {
			t.Fatalf("%v: the proxy did not end: %s", args, stderr.String())
		}
		if listened || code != 2 || !strings.Contains(stderr.String(), args[len(args)-2]) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a usage error naming %s, before listening", args, code, stderr.String(), args[len(args)-2])
		}
	}
}
