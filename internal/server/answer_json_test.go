package server

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/render/jsonr"
)

// TestAnswerFrameJSON: the decode and encode answers' frames are package
// jsonr's frame objects (tree nodes with their descriptions, paths in the
// one syntax) followed by "html"; frames past the answer limit have no
// tree.
func TestAnswerFrameJSON(t *testing.T) {
	srv, d := inflatingServer(t)
	w, _ := postJSON(t, srv, "/api/decode", DecodeRequest{Hex: hex.EncodeToString(kmsgAlterConfigs(true))})
	var raw struct{ Frames []json.RawMessage }
	if err := json.Unmarshal(w.Body.Bytes(), &raw); err != nil || len(raw.Frames) != 1 {
		t.Fatalf("%v: %s", err, w.Body.Bytes())
	}
	fs, err := d.Decode(DecodeRequest{Hex: hex.EncodeToString(kmsgAlterConfigs(true))})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := jsonr.AppendFrame(nil, fs[0], jsonr.Options{About: true})
	if err != nil {
		t.Fatal(err)
	}
	got := raw.Frames[0]
	if !bytes.HasPrefix(got, obj[:len(obj)-1]) || !bytes.HasPrefix(got[len(obj)-1:], []byte(`,"html":"\u003c`)) || !bytes.HasSuffix(got, []byte(`"}`)) {
		t.Fatalf("answer frame is not jsonr's frame and html:\n%.400s", got)
	}
	for _, want := range []string{`"path":"AlterConfigsRequest.Resources[0].Configs[0].Name"`, `"about":`} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("answer frame lacks %s", want)
		}
	}
	// Encode answers the same way.
	back := d.EncodeAnswer(EncodeRequest{Kind: "request", API: "AlterConfigs", Version: 2, ClientID: fs[0].ClientID, Body: fs[0].Body})
	b, err := json.Marshal(back)
	if err != nil || !strings.Contains(string(b), `"path":"AlterConfigsRequest.Resources[0].ResourceName"`) {
		t.Fatalf("encode answer (%v): %.300s", err, b)
	}
	// Past the answer limit: summaries, "tree": null, no hex.
	frame := hex.EncodeToString(kmsgAlterConfigs(false))
	d.MaxAnswer = 1000
	w, _ = postJSON(t, srv, "/api/decode", DecodeRequest{Hex: frame + frame})
	if err := json.Unmarshal(w.Body.Bytes(), &raw); err != nil || len(raw.Frames) != 2 {
		t.Fatalf("%v: %s", err, w.Body.Bytes())
	}
	for _, f := range raw.Frames {
		if !bytes.Contains(f, []byte(`"hex":"","tree":null,"html":""`)) {
			t.Errorf("summary frame: %s", f)
		}
	}
}
