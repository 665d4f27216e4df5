package tlsdecrypt_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/tlsdecrypt"
	"github.com/manifester/manifester/internal/tlstest"
)

// payloads are the application bytes an OpenSSL session exchanges: text
// beyond ASCII, a record's worth and more, a byte alone.
func payloads() [][2][]byte {
	var p [][2][]byte
	for i, n := range []int{1, 40, 5000, 17000, 3} {
		c := bytes.Repeat(fmt.Appendf(nil, "client %d ünïcode ✓ ", i), n/20+1)[:n]
		s := bytes.Repeat(fmt.Appendf(nil, "server %d Ωmega ", i), min(n, 4000)/16+1)[:min(n, 4000)]
		p = append(p, [2][]byte{c, s})
	}
	return p
}

// decryptRecording feeds a recording's chunks to a Stream and returns the
// application bytes of each direction.
func decryptRecording(t *testing.T, s *tlstest.Session) ([2][]byte, *tlsdecrypt.Stream) {
	t.Helper()
	keys := tlsdecrypt.NewKeyLog()
	if err := keys.Read(bytes.NewReader(s.KeyLog), "keylog"); err != nil {
		t.Fatal(err)
	}
	st := tlsdecrypt.NewStream(keys)
	var out [2][]byte
	for _, c := range s.Recordings[0].Chunks {
		plain, _, _ := st.Feed(int(c.Dir), c.Data)
		out[c.Dir] = append(out[c.Dir], plain...)
	}
	return out, st
}

// checkDecrypted decrypts a session's recording and checks that each
// direction gives the bytes its side sent, with no stop.
func checkDecrypted(t *testing.T, s *tlstest.Session) *tlsdecrypt.Stream {
	t.Helper()
	out, st := decryptRecording(t, s)
	for d := range 2 {
		if !bytes.Equal(out[d], s.Plaintext[d]) {
			t.Errorf("%s: decrypted %d bytes, sent %d", capture.Dir(d), len(out[d]), len(s.Plaintext[d]))
		}
		if err := st.Err(d); err != nil {
			t.Errorf("%s: %v", capture.Dir(d), err)
		}
	}
	return st
}

// TestDecryptOpenSSL: sessions with OpenSSL's s_server, in every suite
// read (the TLS 1.3 ones Go cannot choose among them), decrypt to the
// bytes each side sent, with s_server's key log.
func TestDecryptOpenSSL(t *testing.T) {
	for _, tc := range []struct{ version, suite, name string }{
		{"1.3", "TLS_AES_128_GCM_SHA256", "TLS 1.3 TLS_AES_128_GCM_SHA256"},
		{"1.3", "TLS_AES_256_GCM_SHA384", "TLS 1.3 TLS_AES_256_GCM_SHA384"},
		{"1.3", "TLS_CHACHA20_POLY1305_SHA256", "TLS 1.3 TLS_CHACHA20_POLY1305_SHA256"},
		{"1.2", "ECDHE-ECDSA-AES128-GCM-SHA256", "TLS 1.2 TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
		{"1.2", "ECDHE-ECDSA-AES256-GCM-SHA384", "TLS 1.2 TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
		{"1.2", "ECDHE-ECDSA-CHACHA20-POLY1305", "TLS 1.2 TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"},
	} {
		t.Run(tc.suite, func(t *testing.T) {
			s := tlstest.OpenSSL(t, tc.version, tc.suite, payloads())
			st := checkDecrypted(t, s)
			if st.Session() != tc.name {
				t.Errorf("Session() = %q, want %q", st.Session(), tc.name)
			}
		})
	}
}

// TestDecryptKeyUpdate: TLS 1.3 KeyUpdates (two in a row, then one
// more), each answered, move both directions to the next traffic keys;
// every byte after them decrypts.
func TestDecryptKeyUpdate(t *testing.T) {
	s := tlstest.OpenSSLKeyUpdate(t, "TLS_AES_256_GCM_SHA384", payloads(), 1, 1, 2)
	if s.KeyUpdates != 3 {
		t.Fatalf("%d KeyUpdates sent, want 3", s.KeyUpdates)
	}
	checkDecrypted(t, s)
}

// TestJoinMidwayOpenSSL: sessions of each TLS 1.3 suite, captured from
// the middle on, are read from their first whole records: the suite is
// found with the secret (AES-256-GCM by its 48-byte secrets,
// ChaCha20-Poly1305 after AES-128-GCM fails under a 32-byte one).
func TestJoinMidwayOpenSSL(t *testing.T) {
	for _, suite := range []string{"TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"} {
		t.Run(suite, func(t *testing.T) {
			s := tlstest.OpenSSL(t, "1.3", suite, payloads())
			keys := tlsdecrypt.NewKeyLog()
			if err := keys.Read(bytes.NewReader(s.KeyLog), "keylog"); err != nil {
				t.Fatal(err)
			}
			st := tlsdecrypt.NewStream(keys)
			st.JoinMidway(nil)
			chunks := s.Recordings[0].Chunks
			var out [2][]byte
			for _, c := range chunks[len(chunks)/3:] {
				plain, _, _ := st.Feed(int(c.Dir), c.Data)
				out[c.Dir] = append(out[c.Dir], plain...)
			}
			for d := range 2 {
				if st.Err(d) != nil || len(out[d]) == 0 || !bytes.HasSuffix(s.Plaintext[d], out[d]) {
					t.Errorf("%s: %d bytes, a tail of the %d sent: %v; %v", capture.Dir(d), len(out[d]), len(s.Plaintext[d]), bytes.HasSuffix(s.Plaintext[d], out[d]), st.Err(d))
				}
			}
			if want := "TLS 1.3 " + suite; st.Session() != want {
				t.Errorf("Session() = %q, want %q", st.Session(), want)
			}
		})
	}
}

// TestJoinMidwayKeyUpdateOpenSSL: sessions with s_server captured from
// just after two KeyUpdates (each answered: both directions at the
// second generation of their traffic secrets) are joined there, in
// AES-GCM and ChaCha20-Poly1305, and follow the KeyUpdate after: each
// direction decrypts to all its side sent after the record the capture
// begins inside (the second payload, one record).
func TestJoinMidwayKeyUpdateOpenSSL(t *testing.T) {
	for _, suite := range []string{"TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256"} {
		t.Run(suite, func(t *testing.T) {
			p := payloads()
			s := tlstest.OpenSSLKeyUpdate(t, suite, p, 0, 0, 2)
			rec := s.Recordings[0]
			// The KeyUpdate records: a handshake message of 5 bytes, its
			// inner content type and the tag (no payload is 5 bytes long,
			// and neither peer pads). The capture begins 3 bytes into the
			// record after the second of each direction.
			var cut [2]int64
			for d := range 2 {
				rs, err := tlstest.TLSRecords(rec.Stream(capture.Dir(d)))
				if err != nil {
					t.Fatal(err)
				}
				var updates []tlstest.TLSRecord
				for _, r := range rs {
					if r.Type == 23 && r.Length == 5+1+16 {
						updates = append(updates, r)
					}
				}
				if len(updates) != s.KeyUpdates {
					t.Fatalf("%s: %d records of a KeyUpdate's length, want %d", capture.Dir(d), len(updates), s.KeyUpdates)
				}
				cut[d] = updates[1].Offset + 5 + int64(updates[1].Length) + 3
			}
			keys := tlsdecrypt.NewKeyLog()
			if err := keys.Read(bytes.NewReader(s.KeyLog), "keylog"); err != nil {
				t.Fatal(err)
			}
			st := tlsdecrypt.NewStream(keys)
			st.JoinMidway(nil)
			var out [2][]byte
			var pos [2]int64
			for _, c := range rec.Chunks {
				data := c.Data
				if k := cut[c.Dir] - pos[c.Dir]; k > 0 {
					data = data[min(k, int64(len(data))):]
				}
				pos[c.Dir] += int64(len(c.Data))
				if len(data) == 0 {
					continue
				}
				plain, _, _ := st.Feed(int(c.Dir), data)
				out[c.Dir] = append(out[c.Dir], plain...)
			}
			for d := range 2 {
				if want := s.Plaintext[d][len(p[0][d])+len(p[1][d]):]; !bytes.Equal(out[d], want) || st.Err(d) != nil {
					t.Errorf("%s: decrypted %d bytes, want the %d sent after the second payload; %v", capture.Dir(d), len(out[d]), len(want), st.Err(d))
				}
			}
			if want := "TLS 1.3 " + suite; st.Session() != want || !st.Midway() {
				t.Errorf("Session() = %q, want %q", st.Session(), want)
			}
		})
	}
}
