package jsonr

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// randomValue is a random JSON value rich in what an indenter must get
// right: nesting, empty objects and arrays, strings holding quotes,
// backslashes, braces, commas and colons.
func randomValue(rng *rand.Rand, depth int) any {
	pieces := []string{"a", `"`, `\`, "{", "}", "[", "]", ",", ":", " ", "\n", "<", "é", `\"`, `\\`}
	str := func() string {
		var s string
		for n := rng.IntN(6); n > 0; n-- {
			s += pieces[rng.IntN(len(pieces))]
		}
		return s
	}
	switch k := rng.IntN(7); {
	case depth > 4 || k == 0:
		return str()
	case k == 1:
		return rng.IntN(1000) - 500
	case k == 2:
		return []any{true, nil, false}[rng.IntN(3)]
	case k <= 4:
		var a []any
		for n := rng.IntN(4); n > 0; n-- {
			a = append(a, randomValue(rng, depth+1))
		}
		if a == nil {
			a = []any{}
		}
		return a
	default:
		m := map[string]any{}
		for n := rng.IntN(4); n > 0; n-- {
			m[str()] = randomValue(rng, depth+1)
		}
		return m
	}
}

// TestAppendIndentLikeEncodingJSON: appendIndent writes what json.Indent
// writes, on random compact documents.
func TestAppendIndentLikeEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 5000; i++ {
		src, err := json.Marshal(randomValue(rng, 0))
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Indent(&want, src, "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := appendIndent([]byte("x"), src); !bytes.Equal(got[1:], want.Bytes()) || got[0] != 'x' {
			t.Fatalf("%s:\ngot  %s\nwant %s", src, got, want.Bytes())
		}
	}
	// Cut documents (not valid JSON) do not panic.
	for _, s := range []string{`"a\`, `{"a":"\`, `[`, `"`} {
		appendIndent(nil, []byte(s))
	}
}
