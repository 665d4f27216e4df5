package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

func init() {
	register(&command{
		name:    "version",
		usage:   "",
		summary: "print the module version, VCS revision and Go version (also --version)",
		run:     runVersion,
	})
}

func runVersion(env *Env, args []string) error {
	fs := newFlags(env, "version", "")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("version takes no arguments, got %q", pos)
	}
	printVersion(env.Stdout)
	return nil
}

// readBuildInfo is debug.ReadBuildInfo (a variable for tests).
var readBuildInfo = debug.ReadBuildInfo

// versionLine is "manifester v1.2.3 (revision 0123abcd4567, 2026-11-30T12:00:00Z, modified) go1.26.8 linux/amd64":
// the main module's version and the VCS stamp from the build information,
// then the Go version and platform.
func versionLine() string {
	var b strings.Builder
	b.WriteString("manifester")
	version := "(unknown)"
	var stamp []string
	if bi, ok := readBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		var rev, when string
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			stamp = append(stamp, "revision "+rev)
		}
		if when != "" {
			stamp = append(stamp, when)
		}
		if modified {
			stamp = append(stamp, "modified")
		}
	}
	b.WriteString(" " + version)
	if len(stamp) > 0 {
		b.WriteString(" (" + strings.Join(stamp, ", ") + ")")
	}
	fmt.Fprintf(&b, " %s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return b.String()
}

func printVersion(w io.Writer) { fmt.Fprintln(w, versionLine()) }
