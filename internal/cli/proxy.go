package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/manifester/manifester/internal/proxy"
	"github.com/manifester/manifester/internal/report"
)

const proxyUsage = "[--spec P] --listen ADDR --upstream HOST:PORT [--log FILE.jsonl] [--format summary|text|json] [--no-rewrite] [--advertise-host H] [--roundtrip] [--max-conns N] [--idle-timeout D] [--dial-timeout D] [--max-buffer BYTES]"

func init() {
	register(&command{
		name:    "proxy",
		usage:   proxyUsage,
		summary: "forward Kafka traffic to a broker, decoding every frame on the way",
		run:     runProxy,
	})
}

// proxyStop, when set (by tests), stops the proxy instead of a signal.
var proxyStop context.Context

// noticeLine is the JSON form of a proxy event that is not a frame.
type noticeLine struct {
	Event    string    `json:"event"`
	Time     time.Time `json:"time"`
	Conn     int       `json:"conn,omitempty"`
	Client   string    `json:"client,omitempty"`
	Listener string    `json:"listener,omitempty"`
	Upstream string    `json:"upstream,omitempty"`
	Dir      string    `json:"dir,omitempty"`
	Detail   string    `json:"detail,omitempty"`
	Count    int       `json:"count,omitempty"`
}

func runProxy(env *Env, args []string) error {
	fs := newFlags(env, "proxy", proxyUsage)
	var specs specFlags
	fs.Var(&specs, "spec", "spec location `[LABEL=]PATH` (default $MANIFESTER_SPEC)")
	listen := fs.String("listen", "127.0.0.1:19092", "address to accept clients on")
	upstream := fs.String("upstream", "", "the broker to forward to, `HOST:PORT`")
	logPath := fs.String("log", "", "also write every event as JSON lines to `FILE.jsonl`")
	format := fs.String("format", "summary", "what to print: summary (a line per frame), text (grid and tree per frame) or json (a JSON line per frame)")
	noRewrite := fs.Bool("no-rewrite", false, "forward broker addresses in Metadata, FindCoordinator, DescribeCluster, ... unchanged")
	roundtrip := fs.Bool("roundtrip", false, "check that every decoded frame re-encodes byte for byte")
	advertise := fs.String("advertise-host", "", "host name clients reach the proxy by, written into rewritten broker addresses (default: the --listen host)")
	maxConns := fs.Int("max-conns", proxy.DefaultMaxConns, "most client connections open at once; more are closed and logged (0: no limit)")
	idle := fs.Duration("idle-timeout", proxy.DefaultIdleTimeout, "close both sides of a connection after this long with no bytes either way (0: never)")
	dialTimeout := fs.Duration("dial-timeout", proxy.DefaultDialTimeout, "how long to wait for the broker to accept a connection")
	maxBuffer := fs.Int("max-buffer", proxy.DefaultMaxBuffer, "largest frame, in `BYTES`, held in memory to decode or rewrite; larger ones are forwarded as they come, undecoded")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("proxy takes no arguments, got %q", pos)
	}
	if *upstream == "" {
		return usagef("give the broker to forward to: --upstream HOST:PORT")
	}
	if *maxConns < 0 || *idle < 0 || *dialTimeout <= 0 || *maxBuffer <= 0 {
		return usagef("--max-conns and --idle-timeout must not be negative, --dial-timeout and --max-buffer must be positive")
	}
	switch *format {
	case "summary", "text", "json":
	default:
		return usagef("unknown --format %q (want summary, text or json)", *format)
	}
	rel, all, err := specs.newest(env)
	if err != nil {
		return err
	}
	warnNewestOnly(env, "proxy", all)
	prepareCodec(rel)

	var logW *bufio.Writer
	if *logPath != "" {
		lf, err := os.Create(*logPath)
		if err != nil {
			return failure{err}
		}
		defer lf.Close()
		logW = bufio.NewWriter(lf)
		defer logW.Flush()
	}
	out := bufio.NewWriter(env.Stdout)
	defer out.Flush()
	var mu sync.Mutex
	var writeErr error
	sink := func(e *proxy.Event) {
		mu.Lock()
		defer mu.Unlock()
		if logW != nil {
			if err := writeEventJSON(logW, e); err != nil && writeErr == nil {
				writeErr = err
			}
			logW.Flush()
		}
		var err error
		switch *format {
		case "json":
			err = writeEventJSON(out, e)
		default:
			err = writeEventText(out, e, *format == "text")
		}
		if err != nil && writeErr == nil {
			writeErr = err
		}
		out.Flush()
	}
	if err := checkListenFree("--listen", *listen); err != nil {
		return err
	}
	p, err := proxy.New(proxy.Config{
		Listen: *listen, Upstream: *upstream, Codec: rel.Codec,
		NoRewrite: *noRewrite, Roundtrip: *roundtrip, Sink: sink, AdvertiseHost: *advertise,
		MaxConns: orNegative(*maxConns), IdleTimeout: orNegative(*idle), DialTimeout: *dialTimeout, MaxBuffer: *maxBuffer,
		// Summary lines need no trees; the JSON log and the other formats do.
		Summary: *format == "summary" && logW == nil,
	})
	if err != nil {
		return failure{listenError(*listen, err)}
	}
	// Catch the signals before saying we listen: from then on, SIGINT or
	// SIGTERM stops the proxy gracefully (listeners closed, connections
	// closed, every event logged and flushed); a second one kills it.
	ctx, stop := proxyStop, context.CancelFunc(func() {})
	if ctx == nil {
		ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	}
	defer stop()
	fmt.Fprintf(env.Stderr, "manifester proxy: listening on %s, forwarding to %s (spec %s); Ctrl-C stops\n", p.Addr(), *upstream, rel.Label)
	<-ctx.Done()
	stop()
	fmt.Fprintf(env.Stderr, "manifester proxy: stopping: closing listeners and connections\n")
	p.Close()
	mu.Lock()
	defer mu.Unlock()
	if writeErr != nil {
		return failure{fmt.Errorf("writing the log: %w", writeErr)}
	}
	return nil
}

// orNegative maps a flag's 0 ("none") to the -1 that means none in
// proxy.Config, where 0 means the default.
func orNegative[T int | time.Duration](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

// writeEventJSON writes a frame as report.JSONLine and any other event as
// a noticeLine.
func writeEventJSON(w io.Writer, e *proxy.Event) error {
	if e.Kind == proxy.EventFrame && e.Frame != nil {
		return report.JSONLine(w, e.Frame)
	}
	b, err := json.Marshal(noticeLine{Event: e.Kind.String(), Time: e.Time, Conn: e.Conn, Client: e.Client,
		Listener: e.Listener, Upstream: e.Upstream, Dir: e.Dir, Detail: e.Detail, Count: e.Count})
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// writeEventText writes a frame's summary (and with verbose its grid and
// tree) or a "#" line for any other event.
func writeEventText(w io.Writer, e *proxy.Event, verbose bool) error {
	if e.Kind == proxy.EventFrame && e.Frame != nil {
		if e.Rewritten {
			fmt.Fprintf(w, "# conn %d: broker addresses rewritten to proxy listeners (%d bytes from the broker, %d forwarded)\n", e.Conn, len(e.Original), len(e.Data))
		}
		if err := report.Text(w, e.Frame, verbose); err != nil {
			return err
		}
		if verbose {
			_, err := io.WriteString(w, "\n")
			return err
		}
		return nil
	}
	conn := ""
	if e.Conn > 0 {
		conn = fmt.Sprintf(" conn %d (%s via %s to %s)", e.Conn, e.Client, e.Listener, e.Upstream)
	}
	_, err := fmt.Fprintf(w, "# %s %s%s: %s\n", e.Time.UTC().Format("15:04:05.000000"), e.Kind, conn, e.Detail)
	return err
}
