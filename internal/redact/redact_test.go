package redact

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/render/jsonr"
	"github.com/manifester/manifester/internal/render/text"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testframes"
)

// Frames are encoded with kmsg, an independent encoder.
func reqFrame(r kmsg.Request, corr int32) []byte {
	return kmsg.NewRequestFormatter(kmsg.FormatterClientID("redact-test")).AppendRequest(nil, r, corr)
}

func handshake(mech string, v int16) []byte {
	r := kmsg.NewPtrSASLHandshakeRequest()
	r.Version, r.Mechanism = v, mech
	return reqFrame(r, 1)
}

func authenticate(auth []byte, v int16) []byte {
	r := kmsg.NewPtrSASLAuthenticateRequest()
	r.Version, r.SASLAuthBytes = v, auth
	return reqFrame(r, 2)
}

// outputs renders the report of a redacted frame every way the tools do.
func outputs(t *testing.T, r *report.Frame) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := text.Frame(&b, r, true, text.Style{}); err != nil {
		t.Fatal(err)
	}
	if err := jsonr.Line(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// noSecret fails when out holds secret, or any 4-byte piece of it.
func noSecret(t *testing.T, out []byte, secret string) {
	t.Helper()
	for i := 0; i+4 <= len(secret); i++ {
		if bytes.Contains(out, []byte(secret[i:i+4])) {
			t.Fatalf("output holds %q, a piece of the secret:\n%s", secret[i:i+4], out)
		}
	}
	hexSecret := []byte(strings.ToLower(hexString([]byte(secret))))
	for i := 0; i+8 <= len(hexSecret); i += 2 {
		if bytes.Contains(out, hexSecret[i:i+8]) {
			t.Fatalf("output holds the hex %q of a piece of the secret", hexSecret[i:i+8])
		}
	}
}

func TestPlainRequest(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	const password = "Tr0ub4dor&3-horse"
	for _, v := range []int16{0, 1, 2} {
		s := NewStream(false)
		if out, p := s.Request(c, handshake("PLAIN", 1)); p != nil || out == nil {
			t.Fatal("a handshake has nothing to redact")
		}
		in := authenticate([]byte("\x00alice\x00"+password), v)
		out, p := s.Request(c, in)
		if p == nil || p.Mechanism != Plain || p.Redacted != len(password) {
			t.Fatalf("v%d: plan %+v", v, p)
		}
		at := bytes.Index(in, []byte(password))
		if len(out) != len(in) || !bytes.Equal(out[:at], in[:at]) || !bytes.Equal(out[at+len(password):], in[at+len(password):]) ||
			string(out[at:at+len(password)]) != strings.Repeat("*", len(password)) {
			t.Fatalf("v%d: redacted frame %x", v, out)
		}
		r := report.Decode(c, out, report.Options{Roundtrip: true})
		if r.Error != "" {
			t.Fatalf("v%d: %s", v, r.Error)
		}
		p.Apply(r)
		all := outputs(t, r)
		noSecret(t, all, password)
		for _, want := range []string{
			`PLAIN: authzid \"\", authcid \"alice\", password redacted (17 bytes)`,
			"authcid", "password", "17 bytes (redacted)", "2a2a2a2a",
		} {
			if !bytes.Contains(all, []byte(want)) {
				t.Errorf("v%d: output lacks %q:\n%s", v, want, all)
			}
		}
		// The children tile the auth bytes, and the secret's row says
		// it is redacted.
		tr, n := bodyField(r.Decoded, "AuthBytes")
		if n == span.None {
			t.Fatalf("v%d: no AuthBytes row", v)
		}
		end := tr.N(n).Off
		var names []string
		for k := tr.N(n).First; k != span.None; k = tr.N(k).Next {
			if tr.N(k).Off != end {
				t.Fatalf("v%d: child %s at %d, want %d", v, tr.Name(k), tr.N(k).Off, end)
			}
			end += tr.N(k).Len
			names = append(names, tr.Name(k))
			if tr.Name(k) == "password" && (tr.Note(k) != "redacted" || tr.ValueText(k) != "= 17 bytes (redacted)") {
				t.Errorf("v%d: password row %q, note %q", v, tr.ValueText(k), tr.Note(k))
			}
		}
		if end != tr.N(n).Off+tr.N(n).Len {
			t.Fatalf("v%d: children end at %d, node at %d", v, end, tr.N(n).Off+tr.N(n).Len)
		}
		if want := "length separator authcid separator password"; strings.Join(names, " ") != want {
			t.Errorf("v%d: children %v, want %s", v, names, want)
		}
		if got := tr.Note(n); got != `PLAIN: authzid "", authcid "alice", password redacted (17 bytes)` {
			t.Errorf("v%d: note %q", v, got)
		}
	}
}

func TestShowSecrets(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	in := authenticate([]byte("\x00alice\x00secret"), 1)
	s := NewStream(true)
	out, p := s.Request(c, in)
	if p != nil || !bytes.Equal(out, in) {
		t.Fatal("with secrets shown the frame must pass unchanged")
	}
}

func TestScramExchange(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	api, _ := c.Reg.API(keySaslAuthenticate)
	s := NewStream(false)
	s.Request(c, handshake("SCRAM-SHA-256", 1))
	const proof = "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
	const sig = "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
	first := authenticate([]byte("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"), 1)
	final := authenticate([]byte("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p="+proof), 1)
	srvFinal := kmsg.NewPtrSASLAuthenticateResponse()
	srvFinal.Version, srvFinal.SASLAuthBytes = 1, []byte("v="+sig)
	out, p := s.Request(c, first)
	if p == nil || p.Redacted != 0 || !bytes.Equal(out, first) {
		t.Fatalf("client-first holds no secret: %+v", p)
	}
	out, p = s.Request(c, final)
	if p == nil || p.Redacted != len(proof) {
		t.Fatalf("client-final: %+v", p)
	}
	r := report.Decode(c, out, report.Options{})
	p.Apply(r)
	all := outputs(t, r)
	noSecret(t, all, proof)
	if !bytes.Contains(all, []byte("client proof redacted (44 bytes)")) || !bytes.Contains(all, []byte(`"r (nonce)"`)) {
		t.Errorf("client-final structure missing:\n%s", all)
	}
	out, p = s.Response(c, testframes.Response(srvFinal, 2), api, 1)
	if p == nil || p.Redacted != len(sig) {
		t.Fatalf("server-final: %+v", p)
	}
	r = report.Decode(c, out, report.Options{Kind: schema.TypeResponse, API: api, Version: 1})
	p.Apply(r)
	noSecret(t, outputs(t, r), sig)
}

func TestOAuthBearer(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	const token = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl"
	// No handshake seen: recognised from the bytes.
	s := NewStream(false)
	out, p := s.Request(c, authenticate([]byte("n,a=alice,\x01host=broker\x01auth=Bearer "+token+"\x01\x01"), 2))
	if p == nil || p.Mechanism != OAuthBearer {
		t.Fatalf("plan %+v", p)
	}
	r := report.Decode(c, out, report.Options{})
	p.Apply(r)
	all := outputs(t, r)
	noSecret(t, all, token)
	if !bytes.Contains(all, []byte("auth=Bearer")) {
		t.Errorf("the scheme should show:\n%s", all)
	}
}

func TestUnknownMechanismRedactedWhole(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	s := NewStream(false)
	s.Request(c, handshake("GSSAPI", 1))
	tok := []byte{0x60, 0x82, 0x02, 0x10, 'k', 'r', 'b', '5', 't', 'i', 'c', 'k', 'e', 't'}
	out, p := s.Request(c, authenticate(tok, 1))
	if p == nil || p.Redacted != len(tok) || p.Mechanism != "" {
		t.Fatalf("plan %+v", p)
	}
	r := report.Decode(c, out, report.Options{})
	p.Apply(r)
	noSecret(t, outputs(t, r), string(tok[4:]))
}

// A SaslHandshake v0 is followed by raw tokens: a size prefix and the
// mechanism's bytes, no Kafka header.
func TestLegacyRawTokens(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	hsAPI, _ := c.Reg.API(keySaslHandshake)
	s := NewStream(false)
	s.Request(c, handshake("PLAIN", 0))
	hsResp := kmsg.NewPtrSASLHandshakeResponse()
	hsResp.Version, hsResp.SupportedMechanisms = 0, []string{"PLAIN"}
	s.Response(c, testframes.Response(hsResp, 1), hsAPI, 0)
	if !s.RawNext() {
		t.Fatal("a raw token is expected after SaslHandshake v0")
	}
	const password = "hunter2-and-more"
	tok := []byte("\x00bob\x00" + password)
	raw := binary.BigEndian.AppendUint32(nil, uint32(len(tok)))
	raw = append(raw, tok...)
	out, p := s.Request(c, raw)
	if p == nil || !p.Raw || p.Redacted != len(password) {
		t.Fatalf("plan %+v", p)
	}
	if s.RawNext() || !s.RawReplyNext() {
		t.Fatal("PLAIN has one client token, then the server's")
	}
	r := RawReport(out, p, false)
	all := outputs(t, r)
	noSecret(t, all, password)
	if !bytes.Contains(all, []byte(`authcid`)) || !bytes.Contains(all, []byte(`"bob"`)) {
		t.Errorf("structure missing:\n%s", all)
	}
	// The token's tree: the frame's size, then the token, whose parts
	// tile its bytes; the password's row is noted as redacted.
	tr := r.SpanTree()
	if tr == nil || tr.Name(tr.Root()) != "SaslToken" || tr.N(tr.Root()).Len != int32(len(out)) {
		t.Fatalf("token tree %v", tr)
	}
	kids := tr.Kids(tr.Root())
	if len(kids) != 2 || tr.Path(tr.Kids(kids[0])[0]) != "Frame.size" || tr.ValueText(tr.Kids(kids[0])[0]) != fmt.Sprintf("= %d", len(tok)) {
		t.Fatalf("token tree rows %v", kids)
	}
	end, parts := int32(4), []string{}
	for _, k := range tr.Kids(kids[1]) {
		if tr.N(k).Off != end {
			t.Fatalf("part %s at %d, want %d", tr.Name(k), tr.N(k).Off, end)
		}
		end += tr.N(k).Len
		parts = append(parts, tr.Name(k)+" "+tr.ValueText(k))
	}
	want := []string{`separator = 0x00`, `authcid = "bob"`, `separator = 0x00`, fmt.Sprintf("password = %d bytes (redacted)", len(password))}
	if end != int32(len(out)) || !slices.Equal(parts, want) {
		t.Errorf("parts %q end at %d; want %q ending at %d", parts, end, want, len(out))
	}
	// The server's (empty) token, then an ordinary request again.
	if _, p := s.Response(c, []byte{0, 0, 0, 0}, nil, 0); p == nil || !p.Raw {
		t.Fatal("the server's raw token")
	}
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version = 4
	if _, p := s.Request(c, reqFrame(hb, 3)); p != nil {
		t.Fatal("a request after the exchange has nothing to redact")
	}
}

// A refused v0 handshake expects no raw token.
func TestLegacyRefused(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	hsAPI, _ := c.Reg.API(keySaslHandshake)
	s := NewStream(false)
	s.Request(c, handshake("PLAIN", 0))
	hsResp := kmsg.NewPtrSASLHandshakeResponse()
	hsResp.ErrorCode = 33
	s.Response(c, testframes.Response(hsResp, 1), hsAPI, 0)
	if s.RawNext() {
		t.Fatal("no raw token after a refusal")
	}
}

// A SaslAuthenticate frame cut short is redacted after its header.
func TestCutShortAuthenticate(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	in := authenticate([]byte("\x00alice\x00password-cut-short"), 1)
	cut := in[:len(in)-5]
	s := NewStream(false)
	out, p := s.Request(c, cut)
	if p == nil || p.Redacted != len(cut)-8 {
		t.Fatalf("plan %+v", p)
	}
	r := report.Decode(c, out, report.Options{})
	p.Apply(r)
	noSecret(t, outputs(t, r), "password-cut")
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		mech, in string
		server   bool
		want     string
		secret   int
	}{
		{"PLAIN", "authz\x00user\x00pw", false, "PLAIN", 2},
		{"", "\x00user\x00pw", false, "PLAIN", 2},
		{"PLAIN", "no separators", false, "", 13},
		{"SCRAM-SHA-512", "r=abc,s=c2FsdA==,i=4096", true, "SCRAM-SHA-512", 0},
		{"", "r=abc,s=c2FsdA==,i=4096", true, "SCRAM", 0},
		{"", "v=c2ln", true, "SCRAM", 4},
		{"", "something else", true, "", 14},
		{"OAUTHBEARER", `{"status":"invalid_token"}`, true, "OAUTHBEARER", 0},
	} {
		mech, parts := Parse(tc.mech, []byte(tc.in), tc.server)
		_, n := Redact([]byte(tc.in), parts)
		if mech != tc.want || n != tc.secret {
			t.Errorf("Parse(%q, %q) = %q with %d secret bytes, want %q and %d", tc.mech, tc.in, mech, n, tc.want, tc.secret)
		}
		end := 0
		for _, p := range parts {
			if p.Off != end {
				t.Errorf("Parse(%q, %q): part %q at %d, want %d", tc.mech, tc.in, p.Name, p.Off, end)
			}
			end = p.Off + p.Len
		}
		if end != len(tc.in) {
			t.Errorf("Parse(%q, %q): parts end at %d of %d", tc.mech, tc.in, end, len(tc.in))
		}
	}
}

// TestUnpairedAuthenticateResponse gives a stream SaslAuthenticate
// responses (encoded by kmsg) whose requests it never saw, as a capture
// that starts mid-exchange does: the SCRAM server signature is redacted
// at every version, and a response of another API is left as it is.
func TestUnpairedAuthenticateResponse(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	const sig = "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
	for v := int16(0); v <= 2; v++ {
		resp := kmsg.NewPtrSASLAuthenticateResponse()
		resp.Version, resp.SASLAuthBytes = v, []byte("v="+sig)
		frame := testframes.Response(resp, 7)
		out, p := NewStream(false).Response(c, frame, nil, 0)
		if p == nil || p.Redacted != len(sig) || len(out) != len(frame) {
			t.Fatalf("v%d: plan %+v, %d bytes of %d", v, p, len(out), len(frame))
		}
		// Decoded as the report does an unpaired response: by guessing.
		r := DecodeRedacted(c, out, report.Options{Kind: schema.TypeResponse}, p)
		noSecret(t, outputs(t, r), sig)
		if !bytes.Contains(out, []byte("v=")) {
			t.Errorf("v%d: the attribute's name went too", v)
		}
	}
	md := kmsg.NewPtrMetadataResponse()
	md.Version = 12
	topic := kmsg.NewMetadataResponseTopic()
	topic.Topic = kmsg.StringPtr("orders")
	md.Topics = append(md.Topics, topic)
	frame := testframes.Response(md, 8)
	out, p := NewStream(false).Response(c, frame, nil, 0)
	if p != nil || !bytes.Equal(out, frame) {
		t.Errorf("a Metadata response was changed: plan %+v", p)
	}
}

// TestConnsForget: a connection forgotten starts afresh; a nil Conns and
// one that shows secrets forget nothing and do not fail.
func TestConnsForget(t *testing.T) {
	s := NewConns(false)
	a := s.Stream(1)
	if s.Stream(1) != a {
		t.Fatal("a connection's stream is not kept")
	}
	s.Forget(1)
	if len(s.streams) != 0 || s.Stream(1) == a {
		t.Errorf("after Forget: %d streams kept, the old one returned: %v", len(s.streams), s.Stream(1) == a)
	}
	var none *Conns
	none.Forget(1)
	NewConns(true).Forget(1)
}
