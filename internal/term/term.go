// Package term knows about the terminal a command writes to: whether an
// output is one, its size, whether to colour, the display width of text
// in terminal cells, and the pager. Platform code (enabling ANSI escape
// sequences on Windows consoles) sits behind build tags; the rest is
// portable through golang.org/x/term.
package term

import (
	"fmt"
	"io"

	"github.com/mattn/go-runewidth"
	xterm "golang.org/x/term"
)

// fder is what *os.File offers to ask the system about it.
type fder interface{ Fd() uintptr }

// IsTerminal reports whether w is a terminal.
func IsTerminal(w any) bool {
	f, ok := w.(fder)
	if !ok {
		return false
	}
	return xterm.IsTerminal(int(f.Fd()))
}

// Size returns the columns and rows of the terminal w, and false when w
// is not a terminal or its size is unknown.
func Size(w any) (cols, rows int, ok bool) {
	f, isF := w.(fder)
	if !isF || !xterm.IsTerminal(int(f.Fd())) {
		return 0, 0, false
	}
	c, r, err := xterm.GetSize(int(f.Fd()))
	if err != nil || c <= 0 {
		return 0, 0, false
	}
	return c, r, true
}

// Width is the number of terminal cells s takes: East Asian wide
// characters take two, combining marks none.
func Width(s string) int { return runewidth.StringWidth(s) }

// ColorMode is the --color setting.
type ColorMode int

// The --color settings.
const (
	ColorAuto   ColorMode = iota // colour when writing to a terminal and NO_COLOR is unset
	ColorAlways                  // colour, also into pipes and files
	ColorNever                   // no colour
)

// ParseColorMode reads "auto", "always" or "never" (and "" as auto).
func ParseColorMode(s string) (ColorMode, error) {
	switch s {
	case "", "auto":
		return ColorAuto, nil
	case "always":
		return ColorAlways, nil
	case "never":
		return ColorNever, nil
	}
	return ColorAuto, fmt.Errorf("unknown --color %q (want auto, always or never)", s)
}

// UseColor decides whether to colour output to w: always and never as
// they say; auto colours a terminal unless NO_COLOR is set to anything
// (https://no-color.org) or TERM is "dumb". getenv may be nil.
func UseColor(mode ColorMode, w io.Writer, getenv func(string) string) bool {
	switch mode {
	case ColorAlways:
		enableEscapes(w)
		return true
	case ColorNever:
		return false
	}
	if getenv != nil && (getenv("NO_COLOR") != "" || getenv("TERM") == "dumb") {
		return false
	}
	if !IsTerminal(w) {
		return false
	}
	return enableEscapes(w)
}
