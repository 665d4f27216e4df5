package site

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/release"
	"github.com/manifester/manifester/internal/schema"
)

// TestStaticDecoderScripts builds a site of the synthetic everytype
// specs with a static decoder whose bytes hold every byte value and a
// "</script>", and checks the two scripts a page opened from file://
// loads: each sets its window property to exactly the decoder (base64)
// or the specs' JSON text that the fetched files hold, and neither can
// end its script element early.
func TestStaticDecoderScripts(t *testing.T) {
	reg, err := schema.Load("../../testdata/specs/everytype")
	if err != nil {
		t.Fatal(err)
	}
	wasm := []byte("\x00asm</script><!--\u2028")
	for i := range 256 {
		wasm = append(wasm, byte(i))
	}
	s, err := Build(Options{Releases: []*release.Release{{Label: "t", Codec: codec.New(reg)}}, DecodePage: true,
		StaticDecoder: &StaticDecoder{Wasm: wasm, WasmExec: []byte("// exec\n")}, NoCompress: true})
	if err != nil {
		t.Fatal(err)
	}
	specs, ok := s.Lookup(SpecsPath)
	if !ok {
		t.Fatalf("no %s", SpecsPath)
	}
	for _, c := range []struct {
		path, name string
		want       []byte
		base64     bool
	}{{WasmScriptPath, "manifesterWasm", wasm, true}, {SpecsScriptPath, "manifesterSpecs", specs.Body, false}} {
		a, ok := s.Lookup(c.path)
		if !ok {
			t.Fatalf("no %s", c.path)
		}
		if a.ContentType != TypeJS {
			t.Errorf("%s: content type %s", c.path, a.ContentType)
		}
		if bytes.ContainsAny(a.Body, "<>&\u2028") {
			t.Errorf("%s holds a character that could end or break its script", c.path)
		}
		lit, prefixed := bytes.CutPrefix(a.Body, []byte("window."+c.name+" = "))
		lit, suffixed := bytes.CutSuffix(lit, []byte(";\n"))
		if !prefixed || !suffixed {
			t.Fatalf("%s: %.60q... is not one assignment to window.%s", c.path, a.Body, c.name)
		}
		var str string
		if err := json.Unmarshal(lit, &str); err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		got := []byte(str)
		if c.base64 {
			if got, err = base64.StdEncoding.DecodeString(str); err != nil {
				t.Fatalf("%s: %v", c.path, err)
			}
		}
		if !bytes.Equal(got, c.want) {
			t.Errorf("%s sets %d bytes, want the %d of the decoder's file", c.path, len(got), len(c.want))
		}
	}
}
