package cli

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/proxy"
	"github.com/manifester/manifester/internal/testframes"
)

func runSecretsCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code := Main(env, args)
	return code, out.String(), errb.String()
}

// TestDecodeRedactsSASL: a SaslHandshake and a SaslAuthenticate (PLAIN,
// encoded by kmsg) given as hex: the text and the JSON show the
// mechanism's structure and no byte of the password, unless
// --show-secrets.
func TestDecodeRedactsSASL(t *testing.T) {
	const password = "Hx9-Kq2Lm7Pz"
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("cli-test"))
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "PLAIN"
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 2, []byte("\x00carol\x00"+password)
	frames := hex.EncodeToString(append(f.AppendRequest(nil, hs, 1), f.AppendRequest(nil, auth, 2)...))
	pieces := func(out string) bool {
		for i := 0; i+4 <= len(password); i++ {
			p := password[i : i+4]
			if strings.Contains(out, p) || strings.Contains(out, hex.EncodeToString([]byte(p))) {
				return true
			}
		}
		return false
	}
	for _, format := range []string{"text", "json"} {
		code, out, errs := runSecretsCLI(t, "", "decode", "--spec", decSpec, "--format", format, "--roundtrip", "--hex", frames)
		if code != 0 {
			t.Fatalf("decode --format %s: exit %d: %s", format, code, errs)
		}
		if pieces(out) {
			t.Errorf("decode --format %s shows the password:\n%s", format, out)
		}
		if !strings.Contains(out, "password") || !strings.Contains(out, "12 bytes (redacted)") || !strings.Contains(out, "carol") {
			t.Errorf("decode --format %s lacks the structure:\n%s", format, out)
		}
		code, out, _ = runSecretsCLI(t, "", "decode", "--spec", decSpec, "--format", format, "--show-secrets", "--hex", frames)
		if code != 0 || !pieces(out) {
			t.Errorf("decode --format %s --show-secrets: exit %d, password shown %v", format, code, pieces(out))
		}
	}
}

// TestProxyFlagErrors: flags that do not go together are usage errors
// (exit 2) that say why.
func TestProxyFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", "x.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"--upstream-ca", "ca.pem"}, "need --upstream-tls"},
		{[]string{"--upstream-tls", "--upstream-cert", "c.pem"}, "--upstream-cert and --upstream-key go together"},
		{[]string{"--broker-listen", "one=127.0.0.1:1"}, "NODE=ADDR"},
		{[]string{"--broker-listen", "1=nothing"}, "the address"},
		{[]string{"--broker-listen", "1=127.0.0.1:1", "--broker-listen", "1=127.0.0.1:2"}, "given twice"},
		{[]string{"--broker-port-base", "70000"}, "port number"},
		{[]string{"--max-listeners", "-1"}, "must not be negative"},
		{[]string{"--decode-workers", "0"}, "--decode-workers 0: want at least 1"},
		{[]string{"--tls-cert", "missing.pem", "--tls-key", "missing-key.pem"}, "loading the TLS certificate"},
	} {
		code, _, errs := runSecretsCLI(t, "", append([]string{"proxy", "--spec", decSpec, "--upstream", "127.0.0.1:1"}, tc.args...)...)
		if code == 0 || !strings.Contains(errs, tc.want) {
			t.Errorf("proxy %v: exit %d, stderr %q; want an error with %q", tc.args, code, errs, tc.want)
		}
	}
}

// TestDecodePcapRedactsSASL: a capture of a SCRAM exchange (kmsg
// frames): decode --pcap shows no piece of the client proof or the server
// signature, in text -v or JSON, unless --show-secrets.
func TestDecodePcapRedactsSASL(t *testing.T) {
	const proof, sig = "UHJvb2ZPZlRoZUNsaWVudEFiY2RlZg==", "U2lnbmF0dXJlT2ZUaGVTZXJ2ZXJYeXo="
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("pcap-sasl"))
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "SCRAM-SHA-512"
	hsr := kmsg.NewPtrSASLHandshakeResponse()
	hsr.Version, hsr.SupportedMechanisms = 1, []string{"SCRAM-SHA-512"}
	auth := func(b string) *kmsg.SASLAuthenticateRequest {
		r := kmsg.NewPtrSASLAuthenticateRequest()
		r.Version, r.SASLAuthBytes = 2, []byte(b)
		return r
	}
	authr := func(b string) *kmsg.SASLAuthenticateResponse {
		r := kmsg.NewPtrSASLAuthenticateResponse()
		r.Version, r.SASLAuthBytes = 2, []byte(b)
		return r
	}
	path := writePcap(t, []pcapExchange{
		{f.AppendRequest(nil, hs, 1), testframes.Response(hsr, 1), 17, 1},
		{f.AppendRequest(nil, auth("n,,n=dave,r=cnonce"), 2), testframes.Response(authr("r=cnoncesnonce,s=c2FsdA==,i=4096"), 2), 36, 2},
		{f.AppendRequest(nil, auth("c=biws,r=cnoncesnonce,p="+proof), 3), testframes.Response(authr("v="+sig), 3), 36, 2},
	}, capture.PCAP, true, 0)
	holds := func(out string) bool {
		for _, s := range []string{proof, sig} {
			for i := 0; i+4 <= len(s); i++ {
				p := s[i : i+4]
				if strings.Contains(out, p) || strings.Contains(out, hex.EncodeToString([]byte(p))) {
					return true
				}
			}
		}
		return false
	}
	for _, args := range [][]string{{"--format", "json"}, {"-v"}} {
		code, out, errs := runSecretsCLI(t, "", append([]string{"decode", "--spec", decSpec, "--pcap", path}, args...)...)
		if code != 0 {
			t.Fatalf("decode --pcap %v: exit %d: %s", args, code, errs)
		}
		if holds(out) {
			t.Errorf("decode --pcap %v shows a SCRAM secret:\n%s", args, out)
		}
		if !strings.Contains(out, "client proof") || !strings.Contains(out, "server signature") {
			t.Errorf("decode --pcap %v lacks the structure", args)
		}
		_, out, _ = runSecretsCLI(t, "", append([]string{"decode", "--spec", decSpec, "--pcap", path, "--show-secrets"}, args...)...)
		if !holds(out) {
			t.Errorf("decode --pcap %v --show-secrets hides the secrets", args)
		}
	}
}

// TestEventTextSafe: a connection's event line escapes its addresses as
// its detail, since the upstream of a per-broker listener is the host a
// broker advertised (here with an escape sequence that sets the
// terminal's title).
func TestEventTextSafe(t *testing.T) {
	var b bytes.Buffer
	e := &proxy.Event{Kind: proxy.EventClose, Conn: 3, Client: "127.0.0.1:5000", Listener: "127.0.0.1:9093",
		Upstream: "b\x1b]0;pwned\a:9092", Detail: "closed \x1b[2J by cn=\u202eevil"}
	if err := writeEventText(&b, e, false); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if strings.ContainsAny(got, "\x1b\a\u202e") || !strings.Contains(got, `to b\x1b]0;pwned\a:9092)`) || !strings.Contains(got, `closed \x1b[2J by cn=\u202eevil`) {
		t.Errorf("event line %q: want its upstream and detail escaped", got)
	}
}
