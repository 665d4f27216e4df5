// Package redact keeps SASL secrets out of manifester's output.
//
// The auth bytes of SaslAuthenticate requests and responses, and the raw
// tokens exchanged after a legacy SaslHandshake v0, carry PLAIN
// passwords, SCRAM proofs and signatures, and OAUTHBEARER tokens. A
// [Stream] follows the SASL exchange of one connection (or one decode
// input), finds the auth bytes of each frame, splits them into the parts
// of their mechanism ([Parse]) and returns a copy of the frame with every
// secret byte replaced by [Fill]; decoding that copy gives a hex dump, a
// body and a tree that hold no secret. [Plan.Apply] then gives the tree's
// auth-bytes node the mechanism's structure ("authcid", "password: 16
// bytes (redacted)").
//
// Auth bytes whose mechanism is not known and cannot be recognised are
// redacted whole: a secret is never shown because it was not understood.
package redact

import (
	"bytes"
	"strconv"
	"strings"
)

// Fill replaces every secret byte.
const Fill = '*'

// Mechanism names, as SaslHandshake carries them.
const (
	Plain       = "PLAIN"
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
	OAuthBearer = "OAUTHBEARER"
)

// Part is one piece of auth bytes.
type Part struct {
	// Name says what the piece is: "authcid", "password", "r (nonce)",
	// "separator", ...
	Name string
	// Off and Len locate it within the auth bytes.
	Off, Len int
	// Secret parts are replaced by Fill.
	Secret bool
}

// Parse splits the auth bytes b of mechanism mech (sent by the client
// unless fromServer) into parts. With mech empty or not one of the
// mechanisms above, the format is recognised from the bytes. It returns
// the mechanism the parts follow ("" when none did: then the only part
// is b whole, secret).
func Parse(mech string, b []byte, fromServer bool) (string, []Part) {
	if len(b) == 0 {
		return mech, nil
	}
	m := strings.ToUpper(mech)
	switch {
	case m == Plain:
		if !fromServer {
			if parts, ok := parsePlain(b); ok {
				return Plain, parts
			}
		}
	case strings.HasPrefix(m, "SCRAM-"):
		if parts, ok := parseScram(b, fromServer); ok {
			return mech, parts
		}
	case m == OAuthBearer:
		if fromServer {
			// The server only ever answers with an error document.
			return OAuthBearer, []Part{{Name: "error document", Len: len(b)}}
		}
		if parts, ok := parseOAuth(b); ok {
			return OAuthBearer, parts
		}
	case m == "":
		// Recognise the format.
		if !fromServer {
			if parts, ok := parseOAuth(b); ok {
				return OAuthBearer, parts
			}
		}
		if looksScram(b, fromServer) {
			if parts, ok := parseScram(b, fromServer); ok {
				return "SCRAM", parts
			}
		}
		if !fromServer && bytes.Count(b, []byte{0}) == 2 {
			if parts, ok := parsePlain(b); ok {
				return Plain, parts
			}
		}
	}
	return "", []Part{{Name: "auth bytes", Len: len(b), Secret: true}}
}

// parsePlain splits "authzid NUL authcid NUL password" (RFC 4616).
func parsePlain(b []byte) ([]Part, bool) {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return nil, false
	}
	j := bytes.IndexByte(b[i+1:], 0)
	if j < 0 {
		return nil, false
	}
	j += i + 1
	return []Part{
		{Name: "authzid", Off: 0, Len: i},
		{Name: "separator", Off: i, Len: 1},
		{Name: "authcid", Off: i + 1, Len: j - i - 1},
		{Name: "separator", Off: j, Len: 1},
		{Name: "password", Off: j + 1, Len: len(b) - j - 1, Secret: true},
	}, true
}

// scramNames names SCRAM attributes (RFC 5802); p (the client proof) and
// v (the server signature) are secret.
var scramNames = map[byte]string{
	'a': "authzid", 'n': "username", 'm': "reserved", 'r': "nonce", 'c': "channel binding",
	's': "salt", 'i': "iteration count", 'p': "client proof", 'v': "server signature", 'e': "server error",
}

// looksScram reports whether b reads as a SCRAM message.
func looksScram(b []byte, fromServer bool) bool {
	s := string(b)
	if fromServer {
		return (strings.HasPrefix(s, "r=") && strings.Contains(s, ",s=") && strings.Contains(s, ",i=")) ||
			strings.HasPrefix(s, "v=") || strings.HasPrefix(s, "e=")
	}
	return strings.HasPrefix(s, "c=") && strings.Contains(s, ",r=") ||
		(strings.HasPrefix(s, "n,") || strings.HasPrefix(s, "y,") || strings.HasPrefix(s, "p=")) && strings.Contains(s, ",n=")
}

// parseScram splits a SCRAM message into attributes and separators. The
// client-first message starts with a GS2 header ("n,," or "n,a=user,").
func parseScram(b []byte, fromServer bool) ([]Part, bool) {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return nil, false
		}
	}
	var parts []Part
	off := 0
	if !fromServer && (b[0] == 'n' || b[0] == 'y' || b[0] == 'p') && !bytes.HasPrefix(b, []byte("c=")) {
		// GS2 header: cbind-flag "," [authzid] ","
		i := bytes.IndexByte(b, ',')
		if i < 0 {
			return nil, false
		}
		j := bytes.IndexByte(b[i+1:], ',')
		if j < 0 {
			return nil, false
		}
		j += i + 1
		parts = append(parts, Part{Name: "gs2 header", Off: 0, Len: j + 1})
		off = j + 1
	}
	for off < len(b) {
		end := bytes.IndexByte(b[off:], ',')
		if end < 0 {
			end = len(b)
		} else {
			end += off
		}
		attr := b[off:end]
		if len(attr) < 2 || attr[1] != '=' {
			return nil, false
		}
		name, ok := scramNames[attr[0]]
		if !ok {
			name = "extension"
		}
		secret := attr[0] == 'p' || attr[0] == 'v'
		if secret {
			parts = append(parts, Part{Name: string(attr[0]) + "= (" + name + ")", Off: off, Len: 2},
				Part{Name: name, Off: off + 2, Len: len(attr) - 2, Secret: true})
		} else {
			parts = append(parts, Part{Name: string(attr[0]) + " (" + name + ")", Off: off, Len: len(attr)})
		}
		off = end
		if off < len(b) {
			parts = append(parts, Part{Name: "separator", Off: off, Len: 1})
			off++
		}
	}
	return parts, len(parts) > 0
}

// parseOAuth splits an OAUTHBEARER client response (RFC 7628): GS2
// header, then key=value pairs each ended by 0x01, then 0x01. The value of
// auth (after its scheme, "Bearer ") is secret.
func parseOAuth(b []byte) ([]Part, bool) {
	i := bytes.IndexByte(b, 1)
	if i < 0 || !bytes.HasSuffix(b, []byte{1, 1}) || bytes.IndexByte(b[:i], ',') < 0 {
		return nil, false
	}
	parts := []Part{{Name: "gs2 header", Off: 0, Len: i}, {Name: "separator", Off: i, Len: 1}}
	off := i + 1
	sawAuth := false
	for off < len(b)-1 {
		end := bytes.IndexByte(b[off:], 1)
		if end < 0 {
			return nil, false
		}
		end += off
		kv := b[off:end]
		eq := bytes.IndexByte(kv, '=')
		if eq <= 0 {
			return nil, false
		}
		if string(kv[:eq]) == "auth" {
			sawAuth = true
			head := eq + 1
			if sp := bytes.IndexByte(kv[head:], ' '); sp >= 0 {
				head += sp + 1 // keep the scheme
			}
			parts = append(parts, Part{Name: "auth=" + strings.TrimSpace(string(kv[eq+1:head])), Off: off, Len: head},
				Part{Name: "token", Off: off + head, Len: len(kv) - head, Secret: true})
		} else {
			// Only auth is defined as secret, but extensions may carry
			// credentials too: show their keys, not their values.
			parts = append(parts, Part{Name: string(kv[:eq+1]), Off: off, Len: eq + 1},
				Part{Name: "value of " + string(kv[:eq]), Off: off + eq + 1, Len: len(kv) - eq - 1, Secret: true})
		}
		parts = append(parts, Part{Name: "separator", Off: end, Len: 1})
		off = end + 1
	}
	if !sawAuth {
		return nil, false
	}
	parts = append(parts, Part{Name: "separator", Off: len(b) - 1, Len: 1})
	return parts, true
}

// Redact returns a copy of b with the secret parts replaced by Fill, and
// the number of bytes replaced.
func Redact(b []byte, parts []Part) ([]byte, int) {
	out := append([]byte(nil), b...)
	n := 0
	for _, p := range parts {
		if p.Secret {
			for i := p.Off; i < p.Off+p.Len && i < len(out); i++ {
				out[i] = Fill
				n++
			}
		}
	}
	return out, n
}

// Summary describes parts in one line: `PLAIN: authzid "", authcid
// "alice", password redacted (16 bytes)`.
func Summary(mech string, b []byte, parts []Part) string {
	var sb strings.Builder
	if mech == "" {
		mech = "mechanism not recognised"
	}
	sb.WriteString(mech)
	first := true
	for _, p := range parts {
		if p.Name == "separator" {
			continue
		}
		if first {
			sb.WriteString(": ")
			first = false
		} else {
			sb.WriteString(", ")
		}
		sb.WriteString(p.Name)
		if p.Secret {
			sb.WriteString(" redacted (" + strconv.Itoa(p.Len) + " bytes)")
		} else if p.Off+p.Len <= len(b) {
			sb.WriteString(" " + strconv.QuoteToASCII(string(b[p.Off:p.Off+p.Len])))
		}
	}
	return sb.String()
}
