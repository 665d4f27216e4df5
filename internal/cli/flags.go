package cli

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
)

// shortFlags are the one-letter forms of the common flags; parse adds each
// to a flag set that defines the long flag and not already the letter.
var shortFlags = []struct{ long, short string }{
	{"spec", "s"},
	{"format", "f"},
	{"out", "o"},
}

// addShortFlags defines the short forms of the common flags fs has.
func addShortFlags(fs *flag.FlagSet) {
	for _, sf := range shortFlags {
		if l := fs.Lookup(sf.long); l != nil && fs.Lookup(sf.short) == nil {
			fs.Var(l.Value, sf.short, l.Usage)
		}
	}
}

// flagDoc is one flag of a command as help, completion and man pages show
// it: every name that sets the same value (short forms included).
type flagDoc struct {
	Names       []string // long name first, then short forms
	Placeholder string   // "N", "FILE", ...; empty for a switch
	Usage       string   // the description, without backquotes
	Default     string   // the default to state, empty when none is worth saying
}

// Long is the flag's main (longest) name.
func (d flagDoc) Long() string { return d.Names[0] }

// Short is the flag's one-letter form, or "".
func (d flagDoc) Short() string {
	for _, n := range d.Names[1:] {
		if len(n) == 1 {
			return n
		}
	}
	return ""
}

// Spelled is "--name" (or "-v" for a one-letter flag).
func spelled(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagDocs lists fs's flags by main name, aliases folded into their flag.
// synopsis is the command's usage line, where "--name WORD" names a flag's
// value when its description does not (with a backquoted word).
func flagDocs(fs *flag.FlagSet, synopsis string) []flagDoc {
	addShortFlags(fs)
	type group struct {
		flags []*flag.Flag
	}
	var groups []*group
	byValue := map[uintptr]*group{}
	fs.VisitAll(func(f *flag.Flag) {
		rv := reflect.ValueOf(f.Value)
		if rv.Kind() == reflect.Pointer {
			if g, ok := byValue[rv.Pointer()]; ok {
				g.flags = append(g.flags, f)
				return
			}
		}
		g := &group{flags: []*flag.Flag{f}}
		if rv.Kind() == reflect.Pointer {
			byValue[rv.Pointer()] = g
		}
		groups = append(groups, g)
	})
	var out []flagDoc
	for _, g := range groups {
		sort.SliceStable(g.flags, func(i, j int) bool { return len(g.flags[i].Name) > len(g.flags[j].Name) })
		main := g.flags[0]
		d := flagDoc{}
		for _, f := range g.flags {
			d.Names = append(d.Names, f.Name)
		}
		name, usage := flag.UnquoteUsage(main)
		d.Usage = usage
		d.Placeholder = placeholder(main, name, synopsis)
		d.Default = defaultToState(main, usage)
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Long() < out[j].Long() })
	return out
}

// placeholder names a flag's value: the backquoted word of its usage, or
// a word for its type instead of Go's "string" and "int".
func placeholder(f *flag.Flag, name, synopsis string) string {
	if name == "" {
		return "" // a switch
	}
	if strings.Contains(f.Usage, "`") && !strings.Contains(name, " ") {
		return name
	}
	if w := synopsisWord(synopsis, f.Name); w != "" {
		return w
	}
	switch name {
	case "":
		return "" // a switch
	case "int", "int64", "uint", "uint64":
		return "N"
	case "float", "float64":
		return "X"
	case "duration":
		return "DURATION"
	}
	return strings.ToUpper(f.Name)
}

// synopsisWord finds "--name WORD" in a usage synopsis and returns WORD.
func synopsisWord(synopsis, name string) string {
	for rest := synopsis; ; {
		i := strings.Index(rest, "--"+name+" ")
		if i < 0 {
			return ""
		}
		rest = rest[i+len(name)+3:]
		end := strings.IndexAny(rest, " ])")
		if end < 0 {
			end = len(rest)
		}
		if w := rest[:end]; w != "" && !strings.HasPrefix(w, "-") && !strings.ContainsAny(w, "[(") {
			return w
		}
	}
}

// defaultToState is the default worth saying: none when the description
// already states one, or when it is the zero value or the -1 that means
// "not given".
func defaultToState(f *flag.Flag, usage string) string {
	if strings.Contains(usage, "default") {
		return ""
	}
	switch f.DefValue {
	case "", "0", "false", "-1", "[]", "0s":
		return ""
	}
	return f.DefValue
}

// printCommandHelp writes a command's help: usage, summary and flags.
func printCommandHelp(w io.Writer, fs *flag.FlagSet, name, usage string) {
	fmt.Fprintf(w, "Usage: manifester %s %s\n", name, usage)
	if c, ok := commands[name]; ok && c.summary != "" {
		fmt.Fprintf(w, "\n%s%s.\n", strings.ToUpper(c.summary[:1]), c.summary[1:])
	}
	docs := flagDocs(fs, usage)
	if len(docs) == 0 {
		fmt.Fprintln(w, "\nFlags:\n  -h, --help  print this help")
		return
	}
	type line struct{ left, right string }
	lines := make([]line, 0, len(docs)+1)
	for _, d := range docs {
		left := "    " + spelled(d.Long())
		if len(d.Long()) == 1 {
			left = spelled(d.Long())
		} else if s := d.Short(); s != "" {
			left = "-" + s + ", " + spelled(d.Long())
		}
		if d.Placeholder != "" {
			left += " " + d.Placeholder
		}
		right := d.Usage
		if d.Default != "" {
			right += " (default " + d.Default + ")"
		}
		lines = append(lines, line{left, right})
	}
	lines = append(lines, line{"-h, --help", "print this help"})
	const maxLeft, width = 30, 80
	col := 0
	for _, l := range lines {
		if n := len(l.left); n <= maxLeft {
			col = max(col, n)
		}
	}
	fmt.Fprintln(w, "\nFlags:")
	for _, l := range lines {
		indent := 2 + col + 2
		text := wrapWords(l.right, width-indent)
		if len(l.left) > col {
			fmt.Fprintf(w, "  %s\n", l.left)
		} else if len(text) > 0 {
			fmt.Fprintf(w, "  %-*s  %s\n", col, l.left, text[0])
			text = text[1:]
		} else {
			fmt.Fprintf(w, "  %s\n", l.left)
		}
		for _, t := range text {
			fmt.Fprintf(w, "%s%s\n", strings.Repeat(" ", indent), t)
		}
	}
}

// wrapWords breaks s into lines of at most width columns, at spaces (a
// word longer than width gets a line of its own).
func wrapWords(s string, width int) []string {
	width = max(width, 20)
	var out []string
	var cur strings.Builder
	for _, word := range strings.Fields(s) {
		if cur.Len() > 0 && cur.Len()+1+len(word) > width {
			out = append(out, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(word)
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// flagError rewrites the flag package's parse errors with --long names, a
// suggestion for a mistyped flag and where to read more.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	see := fmt.Sprintf(" (see manifester %s --help)", fs.Name())
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		name = strings.TrimLeft(name, "-")
		out := "unknown flag " + spelled(name)
		var names []string
		fs.VisitAll(func(f *flag.Flag) {
			if len(f.Name) > 1 {
				names = append(names, f.Name)
			}
		})
		if s := suggest(name, names); s != "" {
			out += "; did you mean " + spelled(s) + "?"
		}
		return fmt.Errorf("%s%s", out, see)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		name = strings.TrimLeft(name, "-")
		v := "a value"
		if f := fs.Lookup(name); f != nil {
			n, _ := flag.UnquoteUsage(f)
			v = placeholder(f, n, "")
		}
		return fmt.Errorf("%s needs %s%s", spelled(name), v, see)
	}
	// invalid value "x" for flag -name: parse error
	if i := strings.Index(msg, " for flag -"); i >= 0 {
		rest := msg[i+len(" for flag -"):]
		name, why, _ := strings.Cut(rest, ": ")
		return fmt.Errorf("%s for %s: %s%s", strings.Replace(msg[:i], "invalid value", "bad value", 1), spelled(name), why, see)
	}
	if i := strings.Index(msg, " for -"); i >= 0 { // invalid boolean value "x" for -name: ...
		rest := msg[i+len(" for -"):]
		name, why, _ := strings.Cut(rest, ": ")
		return fmt.Errorf("%s for %s: %s%s", strings.Replace(msg[:i], "invalid boolean value", "bad value", 1), spelled(name), why, see)
	}
	return fmt.Errorf("%s%s", msg, see)
}

// suggest returns the candidate closest to a mistyped word, or "" when
// none is close: an edit distance (with transpositions) of at most 1 for
// short words and 2 for longer ones, or the only candidate the word is a
// prefix of.
func suggest(word string, candidates []string) string {
	w := strings.ToLower(strings.TrimLeft(word, "-"))
	if w == "" {
		return ""
	}
	limit := 1
	if len(w) >= 5 {
		limit = 2
	}
	best, bestD := "", limit+1
	var prefixed []string
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if d := editDistance(w, lc); d < bestD {
			best, bestD = c, d
		}
		if len(w) >= 2 && strings.HasPrefix(lc, w) {
			prefixed = append(prefixed, c)
		}
	}
	if best != "" {
		return best
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	return ""
}

// editDistance is the optimal-string-alignment distance of a and b:
// insertions, deletions, substitutions and adjacent transpositions.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// commandNames lists the registered commands in order, hidden ones left
// out.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if c.hidden {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// commandFlags returns the flag set a command defines, by running it with
// --help in collecting mode (it prints nothing and does nothing else).
func commandFlags(name string, sub ...string) *flag.FlagSet {
	c, ok := commands[name]
	if !ok {
		return nil
	}
	var fs *flag.FlagSet
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
		Getenv: func(string) string { return "" }, collect: &fs}
	_ = c.run(env, append(sub, "--help"))
	if fs != nil {
		addShortFlags(fs)
	}
	return fs
}

// warnf prints a warning for a command on standard error: something the
// user asked for that has no effect, or a fallback taken.
func warnf(env *Env, cmd, format string, args ...any) {
	fmt.Fprintf(env.Stderr, "manifester %s: warning: %s\n", cmd, fmt.Sprintf(format, args...))
}

// warnNewestOnly warns when a command that reads one release was given
// several: it uses the newest.
func warnNewestOnly(env *Env, cmd string, rels []*Release) {
	if len(rels) > 1 {
		warnf(env, cmd, "%d specs given; %s reads one and uses the newest, %s", len(rels), cmd, rels[len(rels)-1].Label)
	}
}
