package jsonr

import (
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testframes"
)

// TestCutFramesShowNoUnreadValue cuts corpus frames at every offset of
// their first 300 bytes (the size prefix fixed to the cut): no node that
// covers no bytes (a read that failed) carries a value, no array count
// that failed is described as "0 elements follow", and no string, bytes
// or records value cut after its prefix shows fewer bytes than the prefix
// says (it keeps its prefix alone, span.ValPrefixOnly). The JSON line and
// the text write a value only for a node that has one.
func TestCutFramesShowNoUnreadValue(t *testing.T) {
	c, fs, _ := corpusFrames(t)
	prefixOnly := 0
	var walk func(tr *span.Tree, id span.ID)
	walk = func(tr *span.Tree, id span.ID) {
		r := tr.N(id)
		if a := tr.About(id); r.Len == 0 && (r.Val != span.ValNone || strings.HasSuffix(a, "elements follow") || strings.HasSuffix(a, "element follows")) {
			t.Errorf("%s: no bytes, but value kind %v, about %q", tr.Path(id), r.Val, a)
		}
		switch r.Val {
		case span.ValString, span.ValBytes, span.ValText, span.ValRecords:
			want := r.Prefix
			if r.Enc == span.EncCompact {
				want--
			}
			if got := len(tr.ValueBytes(id)); r.Enc != span.EncNone && !r.Null && int64(got) != want {
				t.Errorf("%s: a value of %d bytes shown for the prefix %d (%v)", tr.Path(id), got, r.Prefix, r.Enc)
			}
		case span.ValPrefixOnly:
			prefixOnly++
		}
		for _, k := range tr.Kids(id) {
			walk(tr, k)
		}
	}
	cuts := 0
	for _, f := range fs[:min(len(fs), 80)] {
		for cut := 4; cut < len(f.b) && cut < 300; cut++ {
			b := append([]byte(nil), f.b[:cut]...)
			binary.BigEndian.PutUint32(b, uint32(cut-4))
			r := report.Decode(c, b, f.o)
			if r.OK() {
				continue
			}
			cuts++
			if tr := r.SpanTree(); tr != nil && tr.Root() != span.None {
				walk(tr, tr.Root())
			}
		}
	}
	if cuts < 1000 {
		t.Fatalf("only %d cut frames failed to decode", cuts)
	}
	if prefixOnly < 100 {
		t.Errorf("only %d values cut after their prefix", prefixOnly)
	}
}

// TestCutStringLine: in the JSON line of a request cut inside its client
// id (the prefix says 5 bytes, 2 follow), the client id's node says
// "no value (int16 len=5)" and has no "value"; the frame's fields read
// before it keep theirs.
func TestCutStringLine(t *testing.T) {
	c := testframes.Codec(t, "4.3")
	b := []byte{0, 0, 0, 12, 0, 3, 0, 0, 0, 0, 0, 7, 0, 5, 'a', 'b'}
	r := report.Decode(c, b, report.Options{})
	if r.OK() {
		t.Fatal("a cut frame decoded")
	}
	line, err := AppendLine(nil, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tree cutNode `json:"tree"`
	}
	if err := json.Unmarshal(line, &doc); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	got := map[string]cutNode{}
	var walk func(n cutNode)
	walk = func(n cutNode) {
		got[n.Path] = n
		for _, k := range n.Children {
			walk(k)
		}
	}
	walk(doc.Tree)
	id, ok := got["RequestHeader.client_id"]
	if !ok {
		t.Fatalf("no client id node in %s", line)
	}
	if id.Text != "no value (int16 len=5)" || id.Value != nil || id.Size != 2 {
		t.Errorf("client id: text %q, value %s, size %d", id.Text, id.Value, id.Size)
	}
	if corr := got["RequestHeader.correlation_id"]; string(corr.Value) != "7" {
		t.Errorf("correlation id: value %s", corr.Value)
	}
}

// cutNode is what TestCutStringLine reads of a JSON tree node.
type cutNode struct {
	Path     string          `json:"path"`
	Text     string          `json:"text"`
	Value    json.RawMessage `json:"value"`
	Size     int             `json:"size"`
	Children []cutNode       `json:"children"`
}
