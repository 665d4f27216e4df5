//go:build !windows

package term

// pagerViaShell: a pager command with shell syntax in it is run by sh, as
// git runs it.
const pagerViaShell = true
