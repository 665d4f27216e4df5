package cli

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/tlsdecrypt"
)

// addKeyLogFlag registers --tls-keylog, the TLS key log that decrypts a
// capture's TLS connections.
func addKeyLogFlag(fs *flag.FlagSet) *string {
	return fs.String("tls-keylog", "", "decrypt a capture's TLS connections with the key log `FILE` (SSLKEYLOGFILE's format; a pcapng file's own secrets are read without it)")
}

// loadKeyLog reads the key log at path; nil for an empty path.
func loadKeyLog(path string) (*tlsdecrypt.KeyLog, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, failure{err}
	}
	defer f.Close()
	k := tlsdecrypt.NewKeyLog()
	if err := k.Read(f, path); err != nil {
		return nil, failure{err}
	}
	return k, nil
}

// tlsHint says, after a capture was read, what became of its TLS
// connections when some were not decrypted for want of a key log.
func tlsHint(w io.Writer, cmd string, st capture.Stats, keys *tlsdecrypt.KeyLog) {
	if n := st.Ignored["TLS"]; n > 0 && keys == nil {
		fmt.Fprintf(w, "manifester %s: %s not read: give --tls-keylog FILE (the key log the clients or brokers wrote, e.g. through SSLKEYLOGFILE) to decrypt them\n",
			cmd, english.Count(n, "TLS connection"))
	}
}
