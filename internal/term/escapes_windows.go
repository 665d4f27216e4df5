//go:build windows

package term

import (
	"golang.org/x/sys/windows"
)

// enableEscapes turns on ANSI escape sequences (colour) for a Windows
// console and reports whether the console supports them; anything that
// is not a console (a pipe, a file) takes the bytes as they are.
func enableEscapes(w any) bool {
	f, ok := w.(fder)
	if !ok {
		return true
	}
	h := windows.Handle(f.Fd())
	var mode uint32
	if err := windows.GetConsoleMode(h, &mode); err != nil {
		return true // not a console
	}
	if mode&windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0 {
		return true
	}
	return windows.SetConsoleMode(h, mode|windows.ENABLE_VIRTUAL_TERMINAL_PROCESSING) == nil
}
