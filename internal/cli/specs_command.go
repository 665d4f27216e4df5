package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/spec"
	"github.com/manifester/manifester/internal/specfetch"
	"github.com/manifester/manifester/internal/specfind"
)

func init() {
	register(&command{
		name:    "specs",
		usage:   "[--spec P ...]\n       manifester specs fetch [--repo URL] [VERSION]",
		summary: "list the spec sources found, or download a release's specs",
		run:     runSpecs,
		// The completion scripts and the man page read fetch's flags.
		subcommands: []string{"fetch"},
	})
}

func runSpecs(env *Env, args []string) error {
	if len(args) > 0 && args[0] == "fetch" {
		return runSpecsFetch(env, args[1:])
	}
	fs := newFlags(env, "specs", "[--spec P ...] | fetch [--repo URL] [VERSION]")
	var specs specFlags
	fs.Var(&specs, "spec", "a spec source to describe instead of those found (repeatable)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unknown argument %q: `manifester specs` lists, `manifester specs fetch VERSION` downloads", pos[0])
	}
	type row struct {
		label, where, path, used string
		full                     string // what to open
	}
	var rows []row
	if len(specs) > 0 {
		for _, a := range specs {
			label, p, err := splitSpec(a)
			if err != nil {
				return err
			}
			full, err := resolveVersions(env, p)
			if err != nil {
				return err
			}
			rows = append(rows, row{label: label, where: "--spec", path: p, full: full})
		}
	} else {
		env0 := env.Getenv("MANIFESTER_SPEC")
		if env0 != "" {
			label, p, err := splitSpec(env0)
			if err != nil {
				return err
			}
			full, err := resolveVersions(env, p)
			if err != nil {
				return err
			}
			rows = append(rows, row{label: label, where: "$MANIFESTER_SPEC", path: p, full: full, used: "*"})
		}
		all := finder(env).All()
		best, _ := specfind.Newest(all)
		for _, f := range all {
			r := row{label: f.Version, where: f.Where, path: f.Display(), full: f.Path}
			if env0 == "" && f.Path == best.Path {
				r.used = "*"
			}
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		fmt.Fprintln(env.Stdout, "No spec sources found.")
		fmt.Fprintln(env.Stdout, strings.ReplaceAll(errNoSpecs.Error(), ";\n", ";\n  "))
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  \tLABEL\tAPIS\tRECORD SCHEMAS\tWHERE\tPATH")
	failed := 0
	for _, r := range rows {
		label, apis, recs, err := describe(r.full)
		if err != nil {
			failed++
			fmt.Fprintln(env.Stderr, text.EscapeBlock(fmt.Sprintf("manifester specs: %s: %v", r.path, err)))
			apis, recs = "-", "does not load"
		}
		if r.label == "" {
			r.label = label
		}
		// Labels and paths are names from the file system (a jar's, a
		// folder's): escaped, so that none reaches the terminal raw.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.used, text.Escape(r.label), apis, recs, text.Escape(r.where), text.Escape(r.path))
	}
	tw.Flush()
	if len(specs) == 0 {
		fmt.Fprintln(env.Stdout, "* is used when no --spec is given.")
	}
	if failed > 0 {
		return failure{fmt.Errorf("%d of %d spec sources do not load", failed, len(rows))}
	}
	return nil
}

// describe loads a spec source and says what it holds.
func describe(p string) (label, apis, records string, err error) {
	src, err := spec.Open(p)
	if err != nil {
		return "", "", "", err
	}
	defer src.Close()
	reg, err := schema.Load(p)
	if err != nil {
		return "", "", "", err
	}
	n := 0
	for _, a := range reg.APIs {
		if !a.Reserved() {
			n++
		}
	}
	records = "none"
	if len(src.Records) > 0 {
		files := 0
		for _, r := range src.Records {
			names, _ := fs.Glob(r.FS, "*.json")
			files += len(names)
		}
		records = fmt.Sprintf("%d files, %d modules", files, len(src.Records))
	}
	return reg.Label, fmt.Sprint(n), records, nil
}

func runSpecsFetch(env *Env, args []string) error {
	fs := newFlags(env, "specs fetch", "[--repo URL] [VERSION]")
	repo := fs.String("repo", "", "the Maven repository to download from (default $MANIFESTER_MAVEN_REPO, else Maven Central)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("give one VERSION, e.g. manifester specs fetch %s", suggestedRelease)
	}
	if *repo == "" {
		*repo = env.Getenv("MANIFESTER_MAVEN_REPO")
	}
	dir, err := finder(env).CacheDir()
	if err != nil {
		return failure{fmt.Errorf("no cache folder to store the specs in: %w", err)}
	}
	f := &specfetch.Fetcher{Repo: *repo, Dir: dir, Verified: func(j specfetch.Jar) {
		fmt.Fprintf(env.Stdout, "%-44s %10d bytes  %s verified\n", filepath.Base(j.Path), j.Size, strings.Join(j.Verified, ", "))
	}}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	version := ""
	if len(pos) == 1 {
		version = pos[0]
		if err := specfetch.CheckVersion(version); err != nil {
			return usageError{err}
		}
	} else {
		if version, err = f.Latest(ctx); err != nil {
			if errors.Is(err, specfetch.ErrRepo) {
				return usageError{err}
			}
			return failure{unreachable(err, "VERSION")}
		}
		fmt.Fprintf(env.Stdout, "latest release: %s\n", version)
	}
	res, err := f.Fetch(ctx, version)
	if err != nil {
		if errors.Is(err, specfetch.ErrVersion) || errors.Is(err, specfetch.ErrRepo) {
			return usageError{err}
		}
		return failure{unreachable(err, version)}
	}
	if len(res.Missing) > 0 {
		fmt.Fprintf(env.Stdout, "not published for %s (no record schemas from them): %s\n", res.Version, strings.Join(res.Missing, ", "))
	}
	fmt.Fprintf(env.Stdout, "stored in %s; used without --spec when it is the newest release found, or with --spec %s\n", res.Dir, res.Version)
	return nil
}

// unreachable adds what to do to the error of a fetch that could not reach
// the repository (no network, a firewall, a name that does not resolve).
func unreachable(err error, version string) error {
	var ne net.Error
	if errors.Is(err, specfetch.ErrNotFound) || !errors.As(err, &ne) {
		return err
	}
	return fmt.Errorf("%w\nthe repository could not be reached (offline, or behind a firewall?): set HTTPS_PROXY, give --repo URL (or $MANIFESTER_MAVEN_REPO) of a mirror, or download kafka-clients-%s.jar where it can be reached and give --spec PATH/TO/kafka-clients-%s.jar", err, version, version)
}
