package cli

import (
	"fmt"

	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/render/jsonr"
	"github.com/manifester/manifester/internal/render/text"
)

func init() {
	register(&command{
		name:    "show",
		usage:   "[--spec P] [--records DIR] [--version N] [--format text|json] API|RECORD",
		summary: "print the reference page of an API (name or key), or of an internal record type, at a version",
		run:     runShow,
	})
}

func runShow(env *Env, args []string) error {
	fs := newFlags(env, "show", "[--spec P] [--records DIR] [--version N] [--format text|json] API|RECORD")
	var specs specFlags
	fs.Var(&specs, "spec", "spec location `[LABEL=]PATH` (repeatable; default $MANIFESTER_SPEC)")
	version := fs.Int("version", -1, "version to encode (default: the highest valid version)")
	format := fs.String("format", "text", "output format: text or json")
	recs := addRecordsFlag(fs)
	tf := addTermFlags(fs, true, false)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("show takes one API name or key, got %d arguments", len(pos))
	}
	if *format != "text" && *format != "json" {
		return usagef("unknown --format %q (want text or json)", *format)
	}
	st, err := tf.style(env)
	if err != nil {
		return err
	}
	if *format == "json" {
		warnIgnored(env, "show", fs, "JSON is not coloured, fitted or paged", "color", "wide", "no-pager")
	}
	rel, all, err := specs.newest(env)
	if err != nil {
		return err
	}
	warnNewestOnly(env, "show", all)
	if err := attachRecords(env, rel, *recs, ""); err != nil {
		return err
	}
	if handled, err := showRecord(env, rel, pos[0], *version, *format); handled {
		return err
	}
	api, v, err := lookupAPI(rel.Reg, pos[0], *version)
	if err != nil {
		return recordHint(rel, pos[0], err)
	}
	p, err := page.Build(rel.Codec, api, v)
	if err != nil {
		return failure{err}
	}
	if *format == "json" {
		return jsonr.Page(env.Stdout, p)
	}
	out, done := tf.output(env)
	err = text.PageStyle(out, p, st)
	if derr := done(); err == nil {
		err = derr
	}
	if err != nil {
		return failure{fmt.Errorf("writing: %w", err)}
	}
	return nil
}
