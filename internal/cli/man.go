package cli

import (
	"fmt"
	"io"
	"strings"
)

func init() {
	register(&command{
		name:    "man",
		usage:   "",
		summary: "write the manual page (roff; read it with man -l -, or install it as manifester.1)",
		run:     runMan,
	})
}

func runMan(env *Env, args []string) error {
	fs := newFlags(env, "man", "")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("man takes no arguments")
	}
	writeMan(env.Stdout, completionModel())
	return nil
}

// roff escapes text for a roff line: backslashes, hyphens as minus signs
// (so that flags copy as ASCII), and a leading control character.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// writeMan writes the manual page from the same command and flag
// definitions as the help. It carries no date, so the same build writes
// the same page.
func writeMan(w io.Writer, m []completionCommand) {
	fmt.Fprintln(w, `.TH MANIFESTER 1 "" "manifester" "User Commands"`)
	fmt.Fprintln(w, ".SH NAME")
	fmt.Fprintln(w, `manifester \- show what every Kafka API puts on the wire, to the byte`)
	fmt.Fprintln(w, ".SH SYNOPSIS")
	fmt.Fprintln(w, ".B manifester")
	fmt.Fprintln(w, ".I COMMAND")
	fmt.Fprintln(w, "[flags] [arguments]")
	fmt.Fprintln(w, ".br")
	fmt.Fprintln(w, `.B manifester \-\-help | \-\-version`)
	fmt.Fprintln(w, ".SH DESCRIPTION")
	fmt.Fprintln(w, roff("manifester encodes the smallest legal instance of every Kafka request and response at every version and shows it as a byte grid coloured by category, an object tree with every field's type, value, offset, size and description, and the message's JSON schema. It decodes real bytes (hex dumps, captures, live traffic through a proxy) into the same view, serves it all as a site, and shows what changed between versions and releases."))
	fmt.Fprintln(w, ".PP")
	fmt.Fprintln(w, roff("Flags take --flag value or --flag=value, before or after the arguments; -s, -f and -o are short for --spec, --format and --out. Every command takes -h or --help."))
	fmt.Fprintln(w, ".SH COMMANDS")
	for _, c := range m {
		fmt.Fprintf(w, ".SS %s\n", c.name)
		fmt.Fprintf(w, ".B manifester %s\n", c.name)
		// A usage of several lines is several synopses ("manifester diff
		// ... --release A B"): each on a line of its own.
		for i, u := range strings.Split(commands[c.name].usage, "\n") {
			u = strings.Join(strings.Fields(u), " ")
			if i > 0 {
				fmt.Fprintln(w, ".br")
				if rest, ok := strings.CutPrefix(u, "manifester "+c.name); ok {
					fmt.Fprintf(w, ".B manifester %s\n", c.name)
					u = strings.TrimSpace(rest)
				}
			}
			if u != "" {
				fmt.Fprintln(w, roff(u))
			}
		}
		fmt.Fprintln(w, ".PP")
		fmt.Fprintln(w, roff(strings.ToUpper(c.summary[:1])+c.summary[1:]+"."))
		writeManFlags(w, c.flags)
		for _, sc := range c.subs {
			fmt.Fprintf(w, ".SS %s %s\n", c.name, sc.name)
			writeManFlags(w, sc.flags)
		}
	}
	fmt.Fprintln(w, ".SH ENVIRONMENT")
	for _, e := range [][2]string{
		{"MANIFESTER_SPEC", "the spec location used when no --spec is given, in any form --spec takes: a directory of *.json files, a Kafka source checkout, a Kafka download or its libs/, a kafka-clients jar, or a release number; without it and --spec, the newest release found on the machine (manifester --help lists where)"},
		{"MANIFESTER_RECORDS", "the record schemas used when no --records is given"},
		{"KAFKA_HOME", "a Kafka installation whose libs/ is searched for specs"},
		{"GRADLE_USER_HOME", "the Gradle folder whose cache is searched for kafka-clients jars (default ~/.gradle)"},
		{"XDG_CACHE_HOME", "where manifester's cache is on Linux (default ~/.cache; ~/Library/Caches on macOS, %LocalAppData% on Windows): specs fetch stores releases in manifester/kafka/VERSION/ there"},
		{"MANIFESTER_MAVEN_REPO", "the Maven repository specs fetch downloads from when no --repo is given (default Maven Central)"},
		{"NO_COLOR", "when set to anything, no colour unless --color=always (https://no-color.org)"},
		{"MANIFESTER_PAGER, PAGER", "the pager for output taller than the terminal (default: less -FRX), read as git reads it (a path with spaces, sh -c for shell syntax, double quotes on Windows); cat turns paging off, as --no-pager does"},
		{"MANIFESTER_CPUPROFILE, MANIFESTER_MEMPROFILE", "for measuring decode --pcap and proxy: write a CPU profile, or an allocation profile when the command ends, to this file (go tool pprof reads them); a proxy's decoding process writes its own to the same name with .decoder added"},
	} {
		fmt.Fprintln(w, ".TP")
		fmt.Fprintf(w, `\fB%s\fR`+"\n", roff(e[0]))
		fmt.Fprintln(w, roff(e[1]))
	}
	fmt.Fprintln(w, ".SH EXIT STATUS")
	fmt.Fprintln(w, roff("0 success; 1 input that did not decode or round-trip, or a failed operation; 2 bad usage, an unknown API or version, or a spec that does not load (the error names file:line:col and the field path)."))
	fmt.Fprintln(w, ".SH SEE ALSO")
	fmt.Fprintln(w, `\fBtshark\fR(1), \fBxxd\fR(1), \fBhexdump\fR(1), \fBkcat\fR(1)`)
}

// writeManFlags writes one tagged paragraph per flag.
func writeManFlags(w io.Writer, flags []flagDoc) {
	for _, d := range flags {
		fmt.Fprintln(w, ".TP")
		var names []string
		if s := d.Short(); s != "" {
			names = append(names, `\fB`+roff("-"+s)+`\fR`)
		}
		names = append(names, `\fB`+roff(spelled(d.Long()))+`\fR`)
		head := strings.Join(names, ", ")
		if d.Placeholder != "" {
			head += ` \fI` + roff(d.Placeholder) + `\fR`
		}
		fmt.Fprintln(w, head)
		text := d.Usage
		if d.Default != "" {
			text += " (default " + d.Default + ")"
		}
		fmt.Fprintln(w, roff(text))
	}
}
