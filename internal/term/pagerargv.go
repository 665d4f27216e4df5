package term

import (
	"os"
	"strings"
)

// pagerArgv is the program and arguments that run the pager command cmd,
// as git runs $PAGER: a command naming an existing file is that file,
// spaces and all ("C:\Program Files\less\less.exe"); where there is a
// POSIX shell (viaShell), a command holding a character the shell
// interprets (quotes, $, |, ...) is run by `sh -c`; elsewhere (Windows)
// double quotes group a word (`"C:\Program Files\Git\usr\bin\less.exe"
// -R`), backslashes staying as they are; otherwise the words are split at
// spaces. exists reports whether a path is a file.
func pagerArgv(cmd string, viaShell bool, exists func(string) bool) []string {
	cmd = strings.TrimSpace(cmd)
	switch {
	case cmd == "":
		return nil
	case exists(cmd):
		return []string{cmd}
	case viaShell && strings.ContainsAny(cmd, shellChars):
		return []string{"sh", "-c", cmd}
	case !viaShell && strings.Contains(cmd, `"`):
		return quotedWords(cmd)
	}
	return strings.Fields(cmd)
}

// shellChars are the characters, besides white space, that make git
// hand $PAGER to the shell.
const shellChars = "|&;<>()$`\\\"'*?[#~=%"

// quotedWords splits s at spaces outside double quotes, the quotes
// removed, as Windows programs read their command line (without the
// backslash rules, which paths do not need).
func quotedWords(s string) []string {
	var out []string
	var w strings.Builder
	inQuote, inWord := false, false
	for _, r := range s {
		switch {
		case r == '"':
			inQuote, inWord = !inQuote, true
		case (r == ' ' || r == '\t') && !inQuote:
			if inWord {
				out = append(out, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, w.String())
	}
	return out
}

// isFile reports whether path names a regular file.
func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
