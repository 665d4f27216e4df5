package tlsdecrypt

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzKeyLogRead reads any bytes as a key log: no panic; an error names
// the key log and a line and is an ErrLine, or says reading the key log
// failed (text that does not decode); the
// sessions and the master secrets kept are no more than the lines read
// (a line that names one is at least 80 bytes long).
func FuzzKeyLogRead(f *testing.F) {
	random := strings.Repeat("ab", 32)
	f.Add([]byte("CLIENT_RANDOM " + random + " " + strings.Repeat("cd", 48) + "\n"))
	f.Add([]byte("# comment\r\n\r\nCLIENT_TRAFFIC_SECRET_0 " + random + " " + strings.Repeat("01", 32) + "\r\n"))
	f.Add([]byte("\xef\xbb\xbfRSA 0102030405060708 " + strings.Repeat("ff", 48) + "\n"))
	f.Add([]byte("\xff\xfeC\x00L\x00"))
	f.Add([]byte("SERVER_HANDSHAKE_TRAFFIC_SECRET " + random + " zz\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k := NewKeyLog()
		err := k.Read(bytes.NewReader(data), "fuzz.keys")
		if err != nil {
			lineErr := strings.HasPrefix(err.Error(), "fuzz.keys:") && errors.Is(err, ErrLine)
			if !lineErr && !strings.HasPrefix(err.Error(), "reading fuzz.keys: ") {
				t.Fatalf("error %q", err)
			}
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		if k.Sessions() > lines || len(k.masters) > lines {
			t.Fatalf("%d sessions, %d master secrets from %d lines", k.Sessions(), len(k.masters), lines)
		}
		if k.Sessions() > 0 && len(data) < 80*k.Sessions() {
			t.Fatalf("%d sessions from %d bytes", k.Sessions(), len(data))
		}
	})
}
