package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

func init() {
	register(&command{
		name:    "apis",
		usage:   "[--spec P]",
		summary: "list every API key: name, versions, flexible versions, listeners",
		run:     runAPIs,
	})
}

func runAPIs(env *Env, args []string) error {
	fs := newFlags(env, "apis", "[--spec P]")
	var specs specFlags
	fs.Var(&specs, "spec", "spec location `[LABEL=]PATH` (default $MANIFESTER_SPEC)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("apis takes no arguments")
	}
	rel, _, err := specs.newest(env)
	if err != nil {
		return err
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
