package redact

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testframes"
)

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

// FuzzApply: whatever the auth bytes, mechanism and version, the tree of
// the redacted SaslAuthenticate frame gives the auth bytes children that
// tile them, and every secret part's row covers only Fill bytes.
func FuzzApply(f *testing.F) {
	for _, s := range []string{"\x00u\x00p", "n,,n=u,r=x", "c=biws,r=x,p=pr", "r=x,s=c2E=,i=1", "v=c2ln", "n,a=u,\x01auth=Bearer t\x01\x01", ""} {
		for _, m := range []string{"", "PLAIN", "SCRAM-SHA-256", "OAUTHBEARER"} {
			f.Add(m, []byte(s), int8(2), false)
			f.Add(m, []byte(s), int8(0), true)
		}
	}
	c := testframes.Codec(f, "4.3")
	api, _ := c.Reg.API(keySaslAuthenticate)
	f.Fuzz(func(t *testing.T, mech string, auth []byte, v int8, fromServer bool) {
		version := int16(v&0x7f) % 3
		s := NewStream(false)
		s.mech = mech
		var out []byte
		var p *Plan
		var r *report.Frame
		if fromServer {
			resp := kmsg.NewPtrSASLAuthenticateResponse()
			resp.Version, resp.SASLAuthBytes = version, auth
			frame := testframes.Response(resp, 1)
			out, p = s.Response(c, frame, api, version)
			// Unpaired, the same response keeps its size, and its secret
			// bytes are redacted as when paired.
			if orphan, op := NewStream(false).Response(c, frame, nil, 0); len(orphan) != len(frame) {
				t.Fatalf("unpaired: %d bytes of %d", len(orphan), len(frame))
			} else if s.mech == "" && p != nil && p.Redacted > 0 && (op == nil || op.Redacted < p.Redacted) {
				t.Fatalf("unpaired: plan %+v, paired %+v", op, p)
			}
			r = report.Decode(c, out, report.Options{Kind: schema.TypeResponse, API: api, Version: version})
		} else {
			out, p = s.Request(c, authenticate(auth, version))
			r = report.Decode(c, out, report.Options{})
		}
		p.Apply(r)
		tr, id := bodyField(r.Decoded, "AuthBytes")
		if p == nil || len(p.Parts) == 0 || id == span.None {
			return
		}
		kids := tr.Kids(id)
		if len(kids) == 0 {
			t.Fatalf("no parts under the auth bytes (plan %+v)", p)
		}
		end := tr.N(id).Off
		for _, k := range kids {
			n := tr.N(k)
			if n.Off != end {
				t.Fatalf("part %s at %d, want %d", tr.Name(k), n.Off, end)
			}
			end += n.Len
			if tr.Note(k) == "redacted" {
				for _, b := range out[n.Off : n.Off+n.Len] {
					if b != Fill {
						t.Fatalf("secret row %s shows %q", tr.Name(k), out[n.Off:n.Off+n.Len])
					}
				}
			}
		}
		if end != tr.N(id).Off+tr.N(id).Len {
			t.Fatalf("parts end at %d, the auth bytes at %d", end, tr.N(id).Off+tr.N(id).Len)
		}
	})
}
