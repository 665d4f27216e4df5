package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/manifester/manifester/internal/diff"
	"github.com/manifester/manifester/internal/history"
)

const diffUsage = "[--spec [LABEL=]P ...] [--in LABEL] [--format text|json] API vA vB\n" +
	"       manifester diff --spec A=P --spec B=P --release A B [--format text|json]"

func init() {
	register(&command{
		name:    "diff",
		usage:   diffUsage,
		summary: "show what changed between two versions of an API, or between two releases",
		run:     runDiff,
	})
}

func runDiff(env *Env, args []string) error {
	fs := newFlags(env, "diff", diffUsage)
	var specs specFlags
	fs.Var(&specs, "spec", "spec location `[LABEL=]PATH`, repeatable (default $MANIFESTER_SPEC)")
	release := fs.Bool("release", false, "compare two loaded releases, given by label, instead of two versions")
	in := fs.String("in", "", "compare versions within the release `LABEL` (default: the newest release where both are valid)")
	format := fs.String("format", "text", "output `format`: text or json")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *format != "text" && *format != "json" {
		return usagef("unknown --format %q: use text or json", *format)
	}
	rels, err := specs.load(env)
	if err != nil {
		return err
	}
	h, err := historyOf(rels)
	if err != nil {
		return failure{err}
	}
	if *release {
		if len(pos) != 2 {
			return usagef("diff --release takes two release labels (loaded: %s)", strings.Join(h.Labels(), ", "))
		}
		d, err := h.ReleaseDiff(pos[0], pos[1])
		if err != nil {
			return usageError{err}
		}
		return writeDiff(env, *format, d, d.WriteText)
	}
	apiArg, a, b, err := versionArgs(pos)
	if err != nil {
		return err
	}
	key, err := h.Lookup(apiArg)
	if err != nil {
		return usageError{fmt.Errorf("%w (looked in %s; manifester apis --spec PATH lists a release's APIs)",
			err, strings.Join(h.Labels(), " or "))}
	}
	var rel *Release
	if *in != "" {
		var ok bool
		if rel, ok = h.Release(*in); !ok {
			return usagef("--in %q: no such release is loaded (loaded: %s)", *in, strings.Join(h.Labels(), ", "))
		}
	} else if rel, _, _ = h.ReleaseFor(key, a, b); rel == nil {
		return usageError{fmt.Errorf("no loaded release has both v%d and v%d of %s:%s", a, b, apiArg, validByRelease(h, key))}
	}
	api, ok := rel.Reg.API(key)
	if !ok || api.Reserved() {
		return usagef("%s has no versions in release %s", apiArg, rel.Label)
	}
	d, err := diff.Versions(rel.Codec, api, a, b)
	if err != nil {
		return usageError{err}
	}
	d.Release = rel.Label
	return writeDiff(env, *format, d, d.WriteText)
}

// historyOf turns loaded releases (oldest first) into a history.
func historyOf(rels []*Release) (*history.History, error) {
	return history.New(rels)
}

// versionArgs parses "API vA vB" or "API vA..vB".
func versionArgs(pos []string) (string, int16, int16, error) {
	if len(pos) == 2 {
		if x, y, ok := strings.Cut(pos[1], ".."); ok {
			pos = []string{pos[0], x, y}
		}
	}
	if len(pos) != 3 {
		return "", 0, 0, usagef("diff takes an API and two versions, e.g. diff Fetch v12 v13 (or --release A B)")
	}
	var vs [2]int16
	for i, s := range pos[1:] {
		n, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V"), 10, 16)
		if err != nil || n < 0 {
			return "", 0, 0, usagef("bad version %q: want a number such as 3 or v3", s)
		}
		vs[i] = int16(n)
	}
	return pos[0], vs[0], vs[1], nil
}

// validByRelease lists the API's request versions in each release.
func validByRelease(h *history.History, key int16) string {
	var b strings.Builder
	for _, r := range h.Releases {
		v := "absent"
		if api, ok := r.Reg.API(key); ok {
			v = api.Request.Valid.String()
		}
		fmt.Fprintf(&b, "\n  %s: %s", r.Label, v)
	}
	return b.String()
}

func writeDiff(env *Env, format string, v any, text func(io.Writer) error) error {
	var err error
	if format == "json" {
		err = diff.WriteJSON(env.Stdout, v)
	} else {
		err = text(env.Stdout)
	}
	if err != nil {
		return failure{fmt.Errorf("writing the diff: %w", err)}
	}
	return nil
}
