package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/server"
)

func init() {
	register(&command{
		name:    "serve",
		usage:   "[--spec P] [--records DIR] [--addr 127.0.0.1:8080] [--base-path /PREFIX/] [--max-conns N]",
		summary: "serve the site from memory (every API at every version)",
		run:     runServe,
	})
}

// serveContext returns the context that ends serving: env.Stop when set,
// else SIGINT or SIGTERM.
func serveContext(env *Env) (context.Context, context.CancelFunc) {
	if env.Stop != nil {
		return env.Stop, func() {}
	}
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// serveHooks register the dynamic handlers of the site's extensions on
// the server before it starts (see siteExtensions).
var serveHooks = []func(*server.Server, *Env) error{serveHistory, serveReference}

func runServe(env *Env, args []string) error {
	fs := newFlags(env, "serve", "[--spec P] [--records DIR] [--addr 127.0.0.1:8080] [--base-path /PREFIX/] [--max-conns N]")
	var specs specFlags
	fs.Var(&specs, "spec", "spec location `[LABEL=]PATH` (repeatable; the newest drives the pages; default $MANIFESTER_SPEC)")
	addr := fs.String("addr", "127.0.0.1:8080", "listen on `HOST:PORT` (port 0 picks a free one)")
	recs := addRecordsFlag(fs)
	base := fs.String("base-path", "/", basePathUsage)
	maxConns := fs.Int("max-conns", server.MaxConns, "most connections open at once; beyond it the connection idle longest is closed to make room, else more wait until one closes or idles, and are logged")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("serve takes no arguments")
	}
	if *maxConns < 1 {
		return usagef("--max-conns %d: want at least 1", *maxConns)
	}
	if err := checkListenFree("--addr", *addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return failure{fmt.Errorf("listening: %w", listenError(*addr, err))}
	}
	defer ln.Close()
	s, err := buildSiteFor(env, specs, *recs, *base, nil)
	if err != nil {
		return err
	}
	// The decode page inflates compressed record batches (the site's own
	// pages hold none).
	s.Newest().Codec.Decompress = compress.Decompressor()
	s.Newest().Codec.DecompressLimit = compress.LimitDecompressor() // within each request's budget
	srv := server.New(s)
	srv.Limits.MaxConns = *maxConns
	srv.Log = env.Stderr
	server.RegisterDecode(srv, s)
	for _, h := range serveHooks {
		if err := h(srv, env); err != nil {
			return failure{err}
		}
	}
	ctx, stop := serveContext(env)
	defer stop()
	st := s.Stats
	fmt.Fprintf(env.Stdout, "serving Kafka %s (%d pages, built in %s) at %s\n", st.Release, st.Pages, st.Duration.Round(1e6), browseURL(ln.Addr())+strings.TrimPrefix(s.Base, "/"))
	fmt.Fprintln(env.Stderr, "press Ctrl-C to stop")
	err = srv.Serve(ctx, ln)
	if cs := srv.ConnStats(); cs.Waited > 0 || cs.Reclaimed > 0 {
		fmt.Fprintf(env.Stderr, "%s waited for the connection limit (--max-conns %d); %s closed to make room\n",
			english.Count(cs.Waited, "connection"), *maxConns, english.Count(cs.Reclaimed, "idle connection"))
	}
	if err != nil {
		return failure{err}
	}
	fmt.Fprintln(env.Stderr, "stopped")
	return nil
}

// browseURL is the URL to open for a listening address: a wildcard host
// (":8080", "0.0.0.0", "::") becomes localhost.
func browseURL(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
		return fmt.Sprintf("http://localhost:%d/", ta.Port)
	}
	return "http://" + a.String() + "/"
}
