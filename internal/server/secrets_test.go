package server

import (
	"encoding/hex"
	"net/url"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestDecodeAPIRedactsSecrets pastes a SaslHandshake (PLAIN) and the
// SaslAuthenticate after it, both encoded by kmsg: the answer carries no
// piece of the password, in its bytes, tree, body or markup, unless
// show_secrets asks for it, as decode does.
func TestDecodeAPIRedactsSecrets(t *testing.T) {
	const password = "Tr0ub4dor&3-horse"
	frames := plainExchange("alice", password)
	srv := decodeServer(t)

	w, a := postJSON(t, srv, "/api/decode", map[string]any{"hex": hex.EncodeToString(frames)})
	if w.Code != 200 || len(a.Frames) != 2 || a.Frames[1].API != "SaslAuthenticate" {
		t.Fatalf("decode: %d, %d frames, error %q: %.600s", w.Code, len(a.Frames), a.Error, w.Body.String())
	}
	out := w.Body.String()
	hexPass := hex.EncodeToString([]byte(password))
	noPasswordPiece(t, out, password)
	if !strings.Contains(out, "redacted") {
		t.Errorf("the answer does not say what was redacted")
	}
	if !strings.Contains(out, "alice") {
		t.Errorf("the PLAIN user name, no secret, is not shown")
	}

	w, a = postJSON(t, srv, "/api/decode", map[string]any{"hex": hex.EncodeToString(frames), "show_secrets": true})
	if w.Code != 200 || len(a.Frames) != 2 || !strings.Contains(a.Frames[1].Hex, hexPass) {
		t.Errorf("show_secrets: %d, %d frames; the frame's hex does not hold the password", w.Code, len(a.Frames))
	}
}

// TestDecodePageSecretsCheckbox posts the same frames through the /decode/
// form, which works without script: the page holds no piece of the
// password unless its "show SASL secrets" box is ticked, and the page
// keeps the box as it was posted.
func TestDecodePageSecretsCheckbox(t *testing.T) {
	const password = "c0rrect-h0rse-battery"
	frames := plainExchange("bob", password)
	srv := decodeServer(t)
	hexPass := hex.EncodeToString([]byte(password))
	post := func(show bool) string {
		form := url.Values{"op": {"decode"}, "kind": {"request"}, "hex": {hex.EncodeToString(frames)}}
		if show {
			form.Set("show_secrets", "1")
		}
		code, page := postRaw(t, srv, "/decode/", "application/x-www-form-urlencoded", []byte(form.Encode()))
		if code != 200 || !strings.Contains(string(page), "SaslAuthenticate") {
			t.Fatalf("show_secrets=%v: %d %.400s", show, code, page)
		}
		return string(page)
	}
	page := post(false)
	// The posted hex is echoed into the textarea, so look at the results.
	results := page[strings.Index(page, `id="decode-results"`):]
	noPasswordPiece(t, results, password)
	if !strings.Contains(results, "redacted") || strings.Contains(page, `name="show_secrets" value="1" checked`) {
		t.Errorf("unticked: the results do not say what was redacted, or the box is ticked")
	}
	page = post(true)
	results = page[strings.Index(page, `id="decode-results"`):]
	if !strings.Contains(results, hexPass) || !strings.Contains(page, `name="show_secrets" value="1" checked`) {
		t.Errorf("ticked: the results do not show the password as sent, or the box is not kept ticked")
	}
}

// plainExchange is a SaslHandshake (PLAIN) and the SaslAuthenticate after
// it, for user and password, both encoded by kmsg.
func plainExchange(user, password string) []byte {
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "PLAIN"
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 2, []byte("\x00"+user+"\x00"+password)
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("cli"))
	return append(f.AppendRequest(nil, hs, 1), f.AppendRequest(nil, auth, 2)...)
}

// noPasswordPiece fails when out holds a 4-byte piece of password, or the
// hex of one.
func noPasswordPiece(t *testing.T, out, password string) {
	t.Helper()
	hexPass := hex.EncodeToString([]byte(password))
	for i := 0; i+4 <= len(password); i++ {
		if strings.Contains(out, password[i:i+4]) {
			t.Fatalf("the answer holds %q, a piece of the password", password[i:i+4])
		}
	}
	for i := 0; i+8 <= len(hexPass); i += 2 {
		if strings.Contains(out, hexPass[i:i+8]) {
			t.Fatalf("the answer holds the hex %q of a piece of the password", hexPass[i:i+8])
		}
	}
}
