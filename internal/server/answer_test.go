package server

import (
	"encoding/hex"
	"encoding/json"
	"testing"
)

// TestDecodeAnswerLimit: the answer without HTTP (the static site's
// WebAssembly decoder) is the HTTP answer, within the same answer limit.
func TestDecodeAnswerLimit(t *testing.T) {
	srv, d := inflatingServer(t)
	frame := hex.EncodeToString(kmsgAlterConfigs(false))
	in := DecodeRequest{Hex: frame + frame + frame}
	w, _ := postJSON(t, srv, "/api/decode", in)
	d.MaxAnswer = w.Body.Len() / 2
	w, _ = postJSON(t, srv, "/api/decode", in)
	b, err := json.Marshal(d.DecodeAnswer(in))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != w.Body.String() {
		t.Fatalf("DecodeAnswer past the limit differs from the HTTP answer:\n%s\n%s", b, w.Body.String())
	}
	if len(b) > d.MaxAnswer {
		t.Errorf("DecodeAnswer is %d bytes, past the limit of %d", len(b), d.MaxAnswer)
	}
}
