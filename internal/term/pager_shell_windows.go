//go:build windows

package term

// pagerViaShell: Windows has no sh to run a pager command; double quotes
// group its words instead.
const pagerViaShell = false
