package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/filter"
	"github.com/manifester/manifester/internal/proxy"
	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/selector"
)

// brokerPins collects --broker-listen NODE=ADDR.
type brokerPins struct{ m map[int32]string }

func (b *brokerPins) String() string { return fmt.Sprint(b.m) }

func (b *brokerPins) Set(v string) error {
	node, addr, ok := strings.Cut(v, "=")
	id, err := strconv.ParseInt(node, 10, 32)
	if !ok || err != nil || id < 0 {
		return fmt.Errorf("want NODE=ADDR with a node id >= 0, got %q", v)
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("%q: the address: %w", v, err)
	}
	if b.m == nil {
		b.m = map[int32]string{}
	}
	if _, dup := b.m[int32(id)]; dup {
		return fmt.Errorf("broker node %d is given twice", id)
	}
	b.m[int32(id)] = addr
	return nil
}

const proxyUsage = "[--spec P] [--records DIR] --listen ADDR --upstream HOST:PORT [--log FILE.jsonl] [--format summary|text|json] [--no-rewrite] [--advertise-host H] [--roundtrip] [--max-conns N] [--idle-timeout D] [--dial-timeout D] [--max-buffer BYTES] [--tls-cert FILE --tls-key FILE] [--upstream-tls [--upstream-ca FILE] [--upstream-server-name NAME] [--upstream-cert FILE --upstream-key FILE]] [--broker-listen NODE=ADDR ...] [--broker-port-base N] [--max-listeners N] [--listener-idle D] [--decode-process=false] [--filter EXPR] [--show-secrets]"

func init() {
	register(&command{
		name:    "proxy",
		usage:   proxyUsage,
		summary: "forward Kafka traffic to a broker, decoding every frame on the way",
		run:     runProxy,
	})
}

func runProxy(env *Env, args []string) error {
	fs := newFlags(env, "proxy", proxyUsage)
	var specs specFlags
	fs.Var(&specs, "spec", "spec location `[LABEL=]PATH` (default $MANIFESTER_SPEC)")
	listen := fs.String("listen", "127.0.0.1:19092", "address to accept clients on")
	upstream := fs.String("upstream", "", "the broker to forward to, `HOST:PORT`")
	logPath := fs.String("log", "", "also write every event as JSON lines to `FILE.jsonl`")
	format := fs.String("format", "summary", "what to print: summary (a line per frame), text (grid and tree per frame) or json (a JSON line per frame)")
	recs := addRecordsFlag(fs)
	noRewrite := fs.Bool("no-rewrite", false, "forward broker addresses in Metadata, FindCoordinator, DescribeCluster, ... unchanged")
	roundtrip := fs.Bool("roundtrip", false, "check that every decoded frame re-encodes byte for byte")
	advertise := fs.String("advertise-host", "", "host name clients reach the proxy by, written into rewritten broker addresses (default: the --listen host)")
	maxConns := fs.Int("max-conns", proxy.DefaultMaxConns, "most client connections open at once; more are closed and logged (0: no limit)")
	idle := fs.Duration("idle-timeout", proxy.DefaultIdleTimeout, "close both sides of a connection after this long with no bytes either way (0: never)")
	dialTimeout := fs.Duration("dial-timeout", proxy.DefaultDialTimeout, "how long to wait for the broker to accept a connection")
	maxBuffer := fs.Int("max-buffer", proxy.DefaultMaxBuffer, "largest frame, in `BYTES`, held in memory to decode or rewrite; larger ones are forwarded as they come, undecoded")
	tlsCert := fs.String("tls-cert", "", "serve TLS to clients on every listener with this PEM certificate (chain) `FILE`")
	tlsKey := fs.String("tls-key", "", "the PEM private key `FILE` of --tls-cert")
	upTLS := fs.Bool("upstream-tls", false, "speak TLS to the brokers")
	upCA := fs.String("upstream-ca", "", "PEM CA certificates `FILE` the brokers' certificates are checked against (default: the system's roots)")
	upName := fs.String("upstream-server-name", "", "`NAME` the brokers' certificates must be valid for (default: each broker's host)")
	upCert := fs.String("upstream-cert", "", "client certificate `FILE` (PEM) for mutual TLS with the brokers")
	upKey := fs.String("upstream-key", "", "the PEM private key `FILE` of --upstream-cert")
	var pins brokerPins
	fs.Var(&pins, "broker-listen", "a fixed listener for a broker node, `NODE=ADDR`, e.g. 1=0.0.0.0:19093 (repeatable)")
	portBase := fs.Int("broker-port-base", 0, "listen for broker node id on port `N`+id (on the --listen host) unless --broker-listen names it")
	maxListeners := fs.Int("max-listeners", proxy.DefaultMaxListeners, "most per-broker listeners open at once; brokers beyond are left unrewritten and logged (0: no limit)")
	listenerIdle := fs.Duration("listener-idle", proxy.DefaultListenerIdle, "close a per-broker listener (not one --broker-listen names) with no connection that has not been advertised for this long (0: never)")
	decodeWorkers := fs.Int("decode-workers", proxy.DefaultDecodeWorkers(), "goroutines that decode frames at once, at a lower priority than forwarding (events stay in order)")
	decodeProcess := fs.Bool("decode-process", decodeProcessDefault, "decode and write the log in a second process at the lowest CPU priority (Linux: SCHED_IDLE), so that decoding never slows forwarding (default on Linux); false: in this process, at a lower priority")
	filterExpr := fs.String("filter", "", "print only the frames that match `EXPR`, e.g. 'api == JoinGroup or error != NONE' (see docs/capture.md), and of the other events only faults and skips; the --log file still gets every event")
	showSecrets := fs.Bool("show-secrets", false, "show SASL passwords, proofs and tokens in the output and log (redacted by default)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("proxy takes no arguments, got %q", pos)
	}
	decoder := env.Getenv != nil && env.Getenv(decoderEnv) != ""
	if decoder {
		becomeDecoder(env) // first: the specs are loaded at its priority too
	}
	defer startProfile(env, "proxy")()
	if *upstream == "" {
		return usagef("give the broker to forward to: --upstream HOST:PORT")
	}
	if err := proxy.CheckHostPort(*upstream); err != nil {
		return usagef("--upstream wants HOST:PORT: %v", err)
	}
	if err := proxy.CheckHost(*advertise); *advertise != "" && err != nil {
		return usagef("--advertise-host wants a host name or address: %v", err)
	}
	if *maxConns < 0 || *idle < 0 || *dialTimeout <= 0 || *maxBuffer <= 0 || *maxListeners < 0 || *listenerIdle < 0 {
		return usagef("--max-conns, --max-listeners, --idle-timeout and --listener-idle must not be negative, --dial-timeout and --max-buffer must be positive")
	}
	if *decodeWorkers < 1 || *decodeWorkers > proxy.MaxDecodeWorkers {
		return usagef("--decode-workers %d: want at least 1, at most %d", *decodeWorkers, proxy.MaxDecodeWorkers)
	}
	if *portBase < 0 || *portBase > 65535 {
		return usagef("--broker-port-base must be a port number")
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		return usagef("--tls-cert and --tls-key go together")
	}
	if !*upTLS && (*upCA != "" || *upName != "" || *upCert != "" || *upKey != "") {
		return usagef("--upstream-ca, --upstream-server-name, --upstream-cert and --upstream-key need --upstream-tls")
	}
	if (*upCert == "") != (*upKey == "") {
		return usagef("--upstream-cert and --upstream-key go together")
	}
	var serverTLS, clientTLS *tls.Config
	if *tlsCert != "" {
		if serverTLS, err = proxy.ServerTLS(*tlsCert, *tlsKey); err != nil {
			return failure{err}
		}
	}
	if *upTLS {
		if clientTLS, err = proxy.UpstreamTLS(*upCA, *upName, *upCert, *upKey); err != nil {
			return failure{err}
		}
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
	if err := attachRecords(env, rel, *recs, ""); err != nil {
		return err
	}
	flt, err := compileFilter(*filterExpr, rel.Codec.Reg)
	if err != nil {
		return err
	}

	var child *decoderProcess
	if *decodeProcess && !decoder {
		if rel.Path == "" {
			fmt.Fprintf(env.Stderr, "manifester proxy: decoding in this process: the decoding process needs the specs' location, which is not known for %s\n", rel.Label)
		} else {
			o := decoderOptions{spec: rel.Label + "=" + rel.Path, records: *recs, format: *format, logPath: *logPath,
				roundtrip: *roundtrip, secrets: *showSecrets, workers: *decodeWorkers, maxBuffer: *maxBuffer, upstream: *upstream,
				filter: *filterExpr}
			if len(o.records) == 0 && env.Getenv("MANIFESTER_RECORDS") != "" {
				o.records = []string{env.Getenv("MANIFESTER_RECORDS")}
			}
			if err := checkListenFree("--listen", *listen); err != nil {
				return err
			}
			if *logPath != "" { // created here, so that a bad path fails now; written by the decoding process
				lf, err := os.Create(*logPath)
				if err != nil {
					return failure{err}
				}
				lf.Close()
			}
			if child, err = startDecoder(env, o); err != nil {
				return failure{err}
			}
		}
	}

	// Each event is written whole with one write, to the log and to
	// stdout: lines never interleave, and a crash tears at most the last.
	var logW *proxy.LineWriter
	if *logPath != "" && child == nil {
		flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		if decoder {
			flags = os.O_WRONLY | os.O_APPEND // the proxy created it
		}
		lf, err := os.OpenFile(*logPath, flags, 0o666)
		if err != nil {
			return failure{err}
		}
		defer lf.Close()
		logW = proxy.NewLineWriter(lf)
	}
	out := proxy.NewLineWriter(env.Stdout)
	var mu sync.Mutex
	var writeErr error
	shown := newEventFilter(rel.Codec, flt)
	sink := func(e *proxy.Event) {
		mu.Lock()
		defer mu.Unlock()
		if logW != nil {
			if err := logW.WriteEvent(e); err != nil && writeErr == nil {
				writeErr = err
			}
		}
		if !shown.admit(e) {
			return
		}
		var err error
		if *format == "json" {
			// A frame's long line goes in pieces (proxy.LineWriter).
			err = out.WriteEvent(e)
		} else {
			// A frame's text with its tree goes a section at a time.
			err = out.WriteWith(func(w io.Writer) error { return writeEventText(w, e, *format == "text") })
		}
		if err != nil && writeErr == nil {
			writeErr = err
		}
	}
	cfg := proxy.Config{
		Listen: *listen, Upstream: *upstream, Codec: rel.Codec,
		NoRewrite: *noRewrite, Roundtrip: *roundtrip, Sink: sink, AdvertiseHost: *advertise,
		MaxConns: orNegative(*maxConns), IdleTimeout: orNegative(*idle), DialTimeout: *dialTimeout, MaxBuffer: *maxBuffer,
		TLS: serverTLS, UpstreamTLS: clientTLS, BrokerListen: pins.m, BrokerPortBase: *portBase,
		MaxListeners: orNegative(*maxListeners), ListenerIdle: orNegative(*listenerIdle), ShowSecrets: *showSecrets,
		DecodeWorkers: *decodeWorkers,
		// The sink writes each event out and keeps nothing of it.
		ReuseTrees: true,
		// Summary lines need no trees; the JSON log, the other formats
		// and a --filter on topics or errors (facts of the body) do.
		Summary: *format == "summary" && *logPath == "" && (flt == nil || !flt.NeedsBody()),
	}
	if decoder {
		err := runDecoder(env, cfg)
		mu.Lock()
		defer mu.Unlock()
		shown.summary(env.Stderr)
		if err == nil && writeErr != nil {
			err = failure{fmt.Errorf("writing the log: %w", writeErr)}
		}
		return err
	}
	if child != nil {
		cfg.DecodeTo, cfg.Sink = child.stdin, nil
	} else {
		if err := checkListenFree("--listen", *listen); err != nil {
			return err
		}
		proxy.AddDecoderP(*decodeWorkers) // the decoding side's threads get Ps of their own
	}
	p, err := proxy.New(cfg)
	if err != nil {
		if child != nil {
			child.wait()
		}
		return failure{listenError(*listen, err)}
	}
	// Catch the signals before saying we listen: from then on, SIGINT or
	// SIGTERM stops the proxy gracefully (listeners closed, connections
	// closed, every event logged and flushed); a second one kills it.
	ctx, stop := env.Stop, context.CancelFunc(func() {})
	if ctx == nil {
		ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	}
	defer stop()
	where := "decoding in this process"
	var childDone <-chan struct{}
	if child != nil {
		where, childDone = fmt.Sprintf("decoding in process %d", child.cmd.Process.Pid), child.done
	}
	// A broker name that does not resolve now (a typo, a cluster-internal
	// name used from outside) is said once at the start; each connection
	// still dials, and says why it could not.
	if err := upstreamResolves(ctx, *upstream, min(*dialTimeout, 3*time.Second)); err != nil {
		fmt.Fprintf(env.Stderr, "manifester proxy: warning: %v; each client connection will try it again\n", err)
	}
	fmt.Fprintf(env.Stderr, "manifester proxy: listening on %s, forwarding to %s (spec %s, %s); Ctrl-C stops\n", p.Addr(), *upstream, rel.Label, where)
	select {
	case <-ctx.Done():
	case <-childDone:
		fmt.Fprintf(env.Stderr, "manifester proxy: the decoding process ended (%v): stopping\n", child.exit)
	}
	stop()
	fmt.Fprintf(env.Stderr, "manifester proxy: stopping: closing listeners and connections\n")
	closeErr := p.Close()
	if child != nil {
		if err := child.wait(); err != nil {
			return failure{err}
		}
		if closeErr != nil {
			return failure{closeErr}
		}
		return nil
	}
	mu.Lock()
	defer mu.Unlock()
	shown.summary(env.Stderr)
	if writeErr != nil {
		return failure{fmt.Errorf("writing the log: %w", writeErr)}
	}
	return nil
}

// eventFilter is proxy --filter on the events printed: the frames that
// match (a response with its request's client id and topics), and of the
// other events only faults and skips, which say what was not decoded or
// not forwarded. Without a filter it admits every event.
type eventFilter struct {
	sel    *selector.Selector
	frames int // frame events seen, in order: each one's position
}

func newEventFilter(c *codec.Codec, flt *filter.Filter) *eventFilter {
	if flt == nil {
		return &eventFilter{}
	}
	return &eventFilter{sel: selector.New(c, flt)}
}

// admit reports whether e is printed; it takes the events in order.
func (f *eventFilter) admit(e *proxy.Event) bool {
	if f.sel == nil {
		return true
	}
	switch e.Kind {
	case proxy.EventFrame:
		f.frames++
		return e.Frame != nil && f.sel.AdmitReportOn(e.Frame, f.frames-1, e.Conn)
	case proxy.EventFault, proxy.EventSkipped:
		return true
	case proxy.EventClose:
		f.sel.Forget(e.Conn)
	}
	return false
}

// summary says, with a filter, how many frames it printed of how many.
func (f *eventFilter) summary(w io.Writer) {
	if f.sel != nil {
		f.sel.SummaryAs(w, "proxy", "shown")
	}
}

// upstreamResolves looks the host of hostport up, within timeout: nil for
// an IP address or a name that resolves, else an error saying so.
func upstreamResolves(ctx context.Context, hostport string, timeout time.Duration) error {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil // the proxy refused it already
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if _, err := net.DefaultResolver.LookupHost(ctx, host); err != nil {
		return fmt.Errorf("upstream %s does not resolve now: %w", hostport, err)
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

// writeEventText writes a frame's summary (and with verbose its grid and
// tree) or a "#" line for any other event.
func writeEventText(w io.Writer, e *proxy.Event, verbose bool) error {
	if e.Kind == proxy.EventFrame && e.Frame != nil {
		if err := text.Frame(w, e.Frame, verbose, text.Style{}); err != nil {
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
		// The upstream of a per-broker listener is the host a broker
		// advertised in its Metadata responses: a peer's bytes too.
		conn = fmt.Sprintf(" conn %d (%s via %s to %s)", e.Conn, text.Escape(e.Client), text.Escape(e.Listener), text.Escape(e.Upstream))
	}
	_, err := fmt.Fprintf(w, "# %s %s%s: %s\n", e.Time.UTC().Format("15:04:05.000000"), e.Kind, conn, text.Escape(e.Detail))
	return err
}
