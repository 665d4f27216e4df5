package redact

import "testing"

// FuzzParse: whatever the bytes and the mechanism, the parts tile the
// bytes in order, and Redact replaces exactly the secret parts.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"\x00u\x00p", "n,,n=u,r=x", "c=biws,r=x,p=pr", "r=x,s=c2E=,i=1", "v=c2ln", "n,a=u,\x01auth=Bearer t\x01\x01", "\x00\x00"} {
		for _, m := range []string{"", "PLAIN", "SCRAM-SHA-256", "OAUTHBEARER", "GSSAPI"} {
			f.Add(m, []byte(s), false)
			f.Add(m, []byte(s), true)
		}
	}
	f.Fuzz(func(t *testing.T, mech string, b []byte, fromServer bool) {
		_, parts := Parse(mech, b, fromServer)
		end := 0
		secret := make([]bool, len(b))
		for _, p := range parts {
			if p.Off != end || p.Len < 0 {
				t.Fatalf("part %q at %d+%d, want it at %d", p.Name, p.Off, p.Len, end)
			}
			for i := p.Off; i < p.Off+p.Len; i++ {
				secret[i] = p.Secret
			}
			end += p.Len
		}
		if end != len(b) {
			t.Fatalf("parts cover %d of %d bytes", end, len(b))
		}
		out, n := Redact(b, parts)
		k := 0
		for i := range b {
			switch {
			case secret[i] && out[i] != Fill:
				t.Fatalf("secret byte %d not replaced", i)
			case !secret[i] && out[i] != b[i]:
				t.Fatalf("byte %d changed", i)
			}
			if secret[i] {
				k++
			}
		}
		if n != k {
			t.Fatalf("Redact says %d bytes, %d are secret", n, k)
		}
	})
}
