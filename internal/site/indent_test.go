package site

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/page"
	"github.com/manifester/manifester/internal/schema"
)

func encoderJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestMarshalIndentedMatchesEncoder checks that PageJSON's indenter gives
// json.Encoder's bytes (SetIndent "", "  "): for every page of the
// synthetic specs, for values with every kind of string escape, empty and
// nested containers, raw messages with spaces, and for random trees.
func TestMarshalIndentedMatchesEncoder(t *testing.T) {
	check := func(name string, v any) {
		t.Helper()
		want := encoderJSON(t, v)
		got, err := marshalIndented(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %q\nwant %q", name, got, want)
		}
	}
	check("strings", map[string]any{
		"plain": "x", `q"uo\te`: `a "b" \c`, "html": "<script>&amp;</script>", "ctl": "\x00\x01\n\t\u2028",
		"utf8": "caf\u00e9 \xff", "brackets": "{[,:]}", "empty": "", "trailing backslash\\": "\\",
	})
	check("containers", []any{[]any{}, map[string]any{}, []any{[]any{[]any{}}}, map[string]any{"a": map[string]any{}},
		nil, true, false, 0, -1.5e-7, 123456789012, "s"})
	check("raw", map[string]json.RawMessage{"r": json.RawMessage(` { "a" : [ 1 , 2 ] , "b" : "x y" } `)})
	check("scalar", 42)
	check("top string", "a\"b")
	rng := rand.New(rand.NewPCG(1, 2))
	var gen func(depth int) any
	gen = func(depth int) any {
		switch k := rng.IntN(7); {
		case depth > 4 || k == 0:
			return strings.Repeat(`a"\{,:`, rng.IntN(3))
		case k == 1:
			return rng.Float64() * 1e6
		case k == 2:
			return rng.IntN(2) == 0
		case k == 3:
			return nil
		case k <= 5:
			a := make([]any, rng.IntN(4))
			for i := range a {
				a[i] = gen(depth + 1)
			}
			return a
		default:
			m := map[string]any{}
			for i := range rng.IntN(4) {
				m[strings.Repeat("k", i+1)+`"`] = gen(depth + 1)
			}
			return m
		}
	}
	for range 300 {
		check("random", gen(0))
	}

	reg, err := schema.Load("../../testdata/specs/everytype")
	if err != nil {
		t.Fatal(err)
	}
	c := codec.New(reg)
	n := 0
	for _, api := range reg.APIs {
		for v := api.Request.Valid.Lo; !api.Reserved() && v <= api.Request.Valid.Hi; v++ {
			p, err := page.Build(c, api, v)
			if err != nil {
				t.Fatal(err)
			}
			check(api.Name, p)
			n++
		}
	}
	if n == 0 {
		t.Fatal("no page of the synthetic specs was compared")
	}
	if _, err := appendIndented(nil, []byte(`{"a":"unterminated`)); err == nil {
		t.Error("an unterminated string was indented without an error")
	}
}
