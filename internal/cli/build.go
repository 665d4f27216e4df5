package cli

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/manifester/manifester/internal/recsite"
	"github.com/manifester/manifester/internal/refsite"
	"github.com/manifester/manifester/internal/site"
)

func init() {
	register(&command{
		name:    "build",
		usage:   "[--spec P] [--records DIR] [--base-path /PREFIX/] [--wasm] --out DIR",
		summary: "write the static site (every API at every version) to a directory",
		run:     runBuild,
	})
}

// siteExtensions are added to every site that build and serve make: the
// version and release history (site_history.go) and the reference layer
// (site_reference.go).
func siteExtensions() []site.Extension {
	return []site.Extension{siteHistory.Extension(), refsite.Extension()}
}

// buildGCPercent is the garbage collector's target percentage during a
// build (the default is 100).
const buildGCPercent = 400

// basePathUsage is the help of build's and serve's --base-path.
const basePathUsage = "serve the site under `PATH` (/prefix/); every link is relative to its page, so the export also works from file://"

// buildSiteFor builds the site from every release, with the record
// schemas of the internal topics (--records, else $MANIFESTER_RECORDS)
// given to the newest release, the site's links under a base path and,
// when dec is set, the static WebAssembly decoder.
func buildSiteFor(env *Env, specs specFlags, recs recordFlags, base string, dec *site.StaticDecoder) (*site.Site, error) {
	return buildSiteOpts(env, specs, recs, site.Options{BasePath: site.CleanBase(base), StaticDecoder: dec})
}

// buildSiteOpts builds the site of the loaded specs with the extensions
// and the decode page added to opts.
func buildSiteOpts(env *Env, specs specFlags, recs recordFlags, opts site.Options) (*site.Site, error) {
	rels, err := specs.load(env)
	if err != nil {
		return nil, err
	}
	newest := rels[len(rels)-1]
	if err := attachRecords(env, newest, recs, ""); err != nil {
		return nil, err
	}
	exts := siteExtensions()
	if newest.Codec.RecordSchemas() != nil {
		exts = append([]site.Extension{recsite.Extension(newest.Codec)}, exts...)
	}
	opts.Releases, opts.Extensions, opts.DecodePage = rels, exts, true
	s, err := site.Build(opts)
	if err != nil {
		return nil, failure{err}
	}
	return s, nil
}

func runBuild(env *Env, args []string) error {
	fs := newFlags(env, "build", "[--spec P] [--records DIR] [--base-path /PREFIX/] [--wasm] --out DIR")
	var specs specFlags
	fs.Var(&specs, "spec", "spec location `[LABEL=]PATH` (repeatable; the newest drives the pages; default $MANIFESTER_SPEC)")
	out := fs.String("out", "", "write the site into `DIR` (created if needed)")
	recs := addRecordsFlag(fs)
	base := fs.String("base-path", "/", basePathUsage)
	wasm := fs.Bool("wasm", false, "add the WebAssembly decoder, so /decode/ decodes without a server (compiles cmd/manifester-wasm: needs the Go toolchain and a manifester checkout)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("build takes no arguments")
	}
	if *out == "" {
		return usagef("build needs --out DIR")
	}
	var dec *site.StaticDecoder
	if *wasm {
		if dec, err = compileWasm(env); err != nil {
			return err
		}
	}
	// A build holds every page in memory until it is written and
	// allocates about five times as much on the way: collecting garbage
	// less often saves a sixth of its CPU for about 40 MB more at peak
	// (GOGC, when set, still decides).
	if env.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(buildGCPercent))
	}
	// Only the bodies are written: nothing is compressed.
	s, err := buildSiteOpts(env, specs, *recs, site.Options{BasePath: site.CleanBase(*base), StaticDecoder: dec, NoCompress: true})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return failure{err}
	}
	if err := s.WriteDir(*out); err != nil {
		return failure{err}
	}
	st := s.Stats
	fmt.Fprintf(env.Stdout, "wrote %d files (%d HTML pages, %.1f MB) for Kafka %s to %s in %s\n",
		st.Files, st.Pages, float64(st.Bytes)/1e6, st.Release, *out, st.Duration.Round(1e6))
	if a, ok := s.Lookup(st.LargestGzipPath); ok {
		fmt.Fprintf(env.Stdout, "largest page: %s (%d bytes, %d gzipped)\n", a.Path, len(a.Body), site.GzipSize(a.Body))
	}
	if a, ok := s.Lookup(site.WasmPath); ok {
		fmt.Fprintf(env.Stdout, "static decoder: %s (%d bytes)\n", site.WasmPath, len(a.Body))
	} else {
		fmt.Fprintln(env.Stdout, "static decoder: none (/decode/ needs `manifester serve`; --wasm adds it)")
	}
	return nil
}
