//go:build !unix

package site

import "os"

// writeFile writes a file of the site.
func writeFile(name string, body []byte) error { return os.WriteFile(name, body, 0o644) }
