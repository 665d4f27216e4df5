package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
)

func init() {
	register(&command{
		name:    "apis",
		usage:   "[--spec P] [--format text|json]",
		summary: "list every API key: name, versions, flexible versions, listeners",
		run:     runAPIs,
	})
}

func runAPIs(env *Env, args []string) error {
	fs := newFlags(env, "apis", "[--spec P] [--format text|json]")
	var specs specFlags
	fs.Var(&specs, "spec", "spec location `[LABEL=]PATH` (default $MANIFESTER_SPEC)")
	format := fs.String("format", "text", "output format: text (a table) or json (one object per API, in a JSON array)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("apis takes no arguments")
	}
	if *format != "text" && *format != "json" {
		return usagef("unknown --format %q (want text or json)", *format)
	}
	rel, all, err := specs.newest(env)
	if err != nil {
		return err
	}
	warnNewestOnly(env, "apis", all)
	if *format == "json" {
		return writeAPIsJSON(env, rel)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tNAME\tVERSIONS\tFLEXIBLE\tLISTENERS\tNOTES")
	for _, a := range rel.Reg.APIs {
		var notes []string
		if a.Reserved() {
			notes = append(notes, "reserved")
		}
		if a.Request.LatestVersionUnstable {
			notes = append(notes, fmt.Sprintf("v%d unstable", a.Request.Valid.Hi))
		}
		listeners := strings.Join(a.Request.Listeners, ",")
		if listeners == "" {
			listeners = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", a.Key, a.Name, a.Request.Valid, a.Request.Flexible, listeners, strings.Join(notes, ", "))
	}
	return tw.Flush()
}

// apiJSON is one API in `apis --format json`.
type apiJSON struct {
	Key                   int16    `json:"api_key"`
	Name                  string   `json:"name"`
	Reserved              bool     `json:"reserved"`
	RequestVersions       string   `json:"request_versions"`
	ResponseVersions      string   `json:"response_versions"`
	MinVersion            *int16   `json:"min_version"` // null when reserved
	MaxVersion            *int16   `json:"max_version"`
	FlexibleVersions      string   `json:"flexible_versions"`
	Listeners             []string `json:"listeners"`
	LatestVersionUnstable bool     `json:"latest_version_unstable"`
}

func writeAPIsJSON(env *Env, rel *Release) error {
	out := make([]apiJSON, 0, len(rel.Reg.APIs))
	for _, a := range rel.Reg.APIs {
		j := apiJSON{Key: a.Key, Name: a.Name, Reserved: a.Reserved(),
			RequestVersions: a.Request.Valid.String(), ResponseVersions: a.Response.Valid.String(),
			FlexibleVersions: a.Request.Flexible.String(), Listeners: a.Request.Listeners,
			LatestVersionUnstable: a.Request.LatestVersionUnstable}
		if !a.Reserved() {
			lo, hi := a.Request.Valid.Lo, a.Request.Valid.Hi
			j.MinVersion, j.MaxVersion = &lo, &hi
		}
		if j.Listeners == nil {
			j.Listeners = []string{}
		}
		out = append(out, j)
	}
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return failure{fmt.Errorf("writing: %w", err)}
	}
	return nil
}
