package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/manifester/manifester/internal/proxy"
)

// decoderEnv marks the decoding process of a proxy: the same binary, run
// by the proxy as "proxy" with the flags that shape the log, reading the
// job stream (package proxy, DecodeStream) on its standard input and
// writing the log to the proxy's standard output and --log file.
const decoderEnv = "MANIFESTER_PROXY_DECODER"

// decodeProcessDefault is --decode-process's default: on Linux, where the
// decoding process runs at SCHED_IDLE. Elsewhere it is a flag away (its
// priority is the platform's lowest for a process), but not the default
// until it has been measured there.
const decodeProcessDefault = runtime.GOOS == "linux"

// decoderTestHook is set by this package's tests, whose binary runs the
// decoding process when decoderEnv says so (TestMain). Any other test
// binary would run its tests instead: there the proxy decodes in process.
var decoderTestHook bool

// decoderOptions are the flags the decoding process is given: what the
// log looks like, not how the proxy forwards.
type decoderOptions struct {
	spec      string   // LABEL=PATH of the release loaded
	records   []string // --records, or $MANIFESTER_RECORDS
	format    string
	logPath   string
	roundtrip bool
	secrets   bool
	workers   int
	maxBuffer int
	upstream  string
	filter    string // --filter
}

func (o decoderOptions) args() []string {
	a := []string{"proxy", "--spec", o.spec, "--format", o.format, "--decode-workers", strconv.Itoa(o.workers),
		"--max-buffer", strconv.Itoa(o.maxBuffer), "--upstream", o.upstream}
	for _, r := range o.records {
		a = append(a, "--records", r)
	}
	if o.logPath != "" {
		a = append(a, "--log", o.logPath)
	}
	if o.roundtrip {
		a = append(a, "--roundtrip")
	}
	if o.filter != "" {
		a = append(a, "--filter", o.filter)
	}
	if o.secrets {
		a = append(a, "--show-secrets")
	}
	return a
}

// decoderProcess is a running decoding process.
type decoderProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser // the job stream (proxy.Config.DecodeTo)
	done  chan struct{}  // closed once it has exited, with exit
	exit  error
}

// startDecoder starts the decoding process, or returns nil (and says
// why on stderr) when this binary cannot run one.
func startDecoder(env *Env, o decoderOptions) (*decoderProcess, error) {
	if testing.Testing() && !decoderTestHook {
		return nil, nil
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(env.Stderr, "manifester proxy: decoding in this process: cannot find this program to run the decoding process: %v\n", err)
		return nil, nil
	}
	cmd := exec.Command(exe, o.args()...)
	cmd.Env = decoderEnviron(env)
	cmd.Stdout, cmd.Stderr = env.Stdout, env.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("the decoding process: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the decoding process: %w", err)
	}
	d := &decoderProcess{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	go func() {
		d.exit = cmd.Wait()
		close(d.done)
	}()
	return d, nil
}

// decoderEnviron is this process's environment for the decoding process:
// decoderEnv set, and the profiles of MANIFESTER_CPUPROFILE and
// MANIFESTER_MEMPROFILE (as this command sees them) written beside this
// process's, with ".decoder" added to their names.
func decoderEnviron(env *Env) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case decoderEnv, "MANIFESTER_CPUPROFILE", "MANIFESTER_MEMPROFILE":
		default:
			out = append(out, kv)
		}
	}
	for _, k := range []string{"MANIFESTER_CPUPROFILE", "MANIFESTER_MEMPROFILE"} {
		if v := env.Getenv(k); v != "" {
			out = append(out, k+"="+v+".decoder")
		}
	}
	return append(out, decoderEnv+"=1")
}

// becomeDecoder readies this process to be a decoding process: at the
// lowest CPU priority, and deaf to SIGINT and SIGTERM (a terminal's
// Ctrl-C reaches it too): the proxy ends it by closing the stream, once
// every event is sent.
func becomeDecoder(env *Env) {
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	if err := proxy.IdlePriority(); err != nil {
		fmt.Fprintf(env.Stderr, "manifester proxy: decoding process: warning: %v\n", err)
	}
}

// runDecoder is the decoding process: it reads the job stream on stdin
// until the proxy closes it, and hands each event to cfg.Sink.
func runDecoder(env *Env, cfg proxy.Config) error {
	if err := proxy.DecodeStream(env.Stdin, cfg); err != nil {
		return failure{fmt.Errorf("decoding process: %w", err)}
	}
	return nil
}

// wait closes the stream (if the proxy has not) and waits for the
// process, which writes what is left of the log first.
func (d *decoderProcess) wait() error {
	d.stdin.Close()
	<-d.done
	err := d.exit
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("the decoding process failed (%v); its error is above", exit)
	}
	if err != nil {
		return fmt.Errorf("the decoding process: %w", err)
	}
	return nil
}
