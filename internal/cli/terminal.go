package cli

import (
	"flag"
	"io"
	"os"

	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/term"
)

// defaultGridMax bounds the byte grid of one frame unless --grid-max says
// otherwise: 64 KiB is 4,096 rows, so that junk input does not flood the
// terminal before its error.
const defaultGridMax = 64 << 10

// termOptions are the terminal flags of the commands that print grids and
// trees: colour, width, pager and grid bound.
type termOptions struct {
	color   *string
	wide    *bool
	noPager *bool // nil for commands without a pager
	gridMax *int  // nil for commands without a grid bound
}

// addTermFlags defines --color and --wide, and with pager --no-pager, and
// with grid --grid-max.
func addTermFlags(fs *flag.FlagSet, pager, grid bool) *termOptions {
	t := &termOptions{
		color: fs.String("color", "auto", "colour the output: `auto` (on a terminal, unless NO_COLOR is set), always or never"),
		wide:  fs.Bool("wide", false, "one line per tree row with every description in full, whatever the terminal's width"),
	}
	if pager {
		t.noPager = fs.Bool("no-pager", false, "do not page output taller than the terminal (default pager: $PAGER, else less -FRX)")
	}
	if grid {
		t.gridMax = fs.Int("grid-max", defaultGridMax, "show at most `N` bytes of a frame's byte grid (0: all)")
	}
	return t
}

// style is the text style for the command's standard output: the
// terminal's width and colour there, the reference format in a pipe or
// file. It also sets how errors are coloured on standard error.
func (t *termOptions) style(env *Env) (text.Style, error) {
	mode, err := term.ParseColorMode(*t.color)
	if err != nil {
		return text.Style{}, usageError{err}
	}
	env.color = mode
	st := text.Style{Color: term.UseColor(mode, env.Stdout, env.Getenv), Wide: *t.wide}
	if cols, _, ok := term.Size(env.Stdout); ok && !*t.wide {
		st.Width = cols
	}
	if t.gridMax != nil {
		if *t.gridMax < 0 {
			return text.Style{}, usagef("--grid-max must not be negative")
		}
		st.GridMax = *t.gridMax
	}
	return st, nil
}

// output is where paged output goes: a pager when standard output is a
// terminal and --no-pager is not given (it starts only once the output is
// taller than the terminal), else standard output. Call done when
// finished.
func (t *termOptions) output(env *Env) (w io.Writer, done func() error) {
	f, ok := env.Stdout.(*os.File)
	if !ok || t.noPager == nil || *t.noPager || !term.IsTerminal(f) {
		return env.Stdout, func() error { return nil }
	}
	_, rows, ok := term.Size(f)
	if !ok {
		return env.Stdout, func() error { return nil }
	}
	p := term.NewPager(f, rows, term.PagerCommand(env.Getenv))
	return p, p.Close
}

// errorText colours a command's error message red when standard error is
// a terminal that gets colour (see --color and NO_COLOR).
func errorText(env *Env, msg string) string {
	if !term.UseColor(env.color, env.Stderr, env.Getenv) {
		return msg
	}
	return text.Style{Color: true}.Error(msg)
}
