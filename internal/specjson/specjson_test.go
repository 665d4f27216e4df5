package specjson

import (
	"bytes"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/testshared"
	"github.com/manifester/manifester/internal/vectors"
)

// TestRoundTrip: the registry rebuilt from the document encodes every test
// vector to the same bytes as the registry read from the spec folder.
func TestRoundTrip(t *testing.T) {
	reg, err := schema.Load(testshared.Spec(t, "4.3"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Marshal(reg, "/errors/")
	if err != nil {
		t.Fatal(err)
	}
	reg2, doc, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if doc.ErrorsPath != "/errors/" || reg2.Label != reg.Label || len(reg2.Messages) != len(reg.Messages) {
		t.Fatalf("got %q %q %d messages, want /errors/ %q %d", doc.ErrorsPath, reg2.Label, len(reg2.Messages), reg.Label, len(reg.Messages))
	}
	var want, got bytes.Buffer
	for c, out := range map[*codec.Codec]*bytes.Buffer{codec.New(reg): &want, codec.New(reg2): &got} {
		vs, err := vectors.Generate(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := vectors.Write(out, vs); err != nil {
			t.Fatal(err)
		}
	}
	if want.Len() < 10000 || !bytes.Equal(want.Bytes(), got.Bytes()) {
		t.Errorf("vectors differ (%d vs %d bytes)", want.Len(), got.Len())
	}
	b2, _ := Marshal(reg2, "/errors/")
	if !bytes.Equal(b, b2) {
		t.Error("marshalling the rebuilt registry gives other bytes")
	}
	if _, _, err := Unmarshal([]byte(`{"files":[{"name":"X.json","text":"{"}]}`)); err == nil {
		t.Error("a broken spec file was accepted")
	}
}
