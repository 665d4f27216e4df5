package jsonvalue

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
)

// sameAsOld fails t when the streaming reader and the old one (a tree
// first, oldUnmarshalAt) read in differently: the same Value, or the
// same error, word for word, with the same causes.
func sameAsOld(t *testing.T, m *schema.Message, v int16, in []byte) {
	t.Helper()
	pad := append(append([]byte("x\n"), in...), "\ny"...) // UnmarshalAt of a body within its input
	for _, bounds := range [][3]int{{0, 0, len(in)}, {1, 2, 2 + len(in)}} {
		src := in
		if bounds[0] == 1 {
			src = pad
		}
		orig := bytes.Clone(src)
		got, gotErr := UnmarshalAt(m, v, src, bounds[1], bounds[2])
		if !bytes.Equal(src, orig) {
			t.Fatalf("%s v%d %q: the reader wrote to its input", m.Name, v, in)
		}
		want, wantErr := oldUnmarshalAt(m, v, src, bounds[1], bounds[2])
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("%s v%d %q:\n got %v\nwant %v", m.Name, v, in, gotErr, wantErr)
		}
		for _, cause := range []error{ErrUnknownField, ErrNotInVersion, ErrType, ErrRange, ErrNull, ErrSyntax, ErrNotUTF8, ErrDuplicate} {
			if errors.Is(gotErr, cause) != errors.Is(wantErr, cause) {
				t.Fatalf("%s v%d %q: %v and %v differ on %v", m.Name, v, in, gotErr, wantErr, cause)
			}
		}
		if gotErr == nil {
			if d := sameValue(&got, &want, m.Name); d != "" {
				t.Fatalf("%s v%d %q: %s", m.Name, v, in, d)
			}
		}
	}
}

// seedBodies is the sample body of every request and response at 4.3,
// in JSON, and a few inputs of the forms only input has.
func seedBodies(t testing.TB) ([]*schema.Message, [][]byte) {
	c := load(t, "4.3")
	var msgs []*schema.Message
	var bodies [][]byte
	for _, api := range c.Reg.APIs {
		if api.Reserved() {
			continue
		}
		for _, m := range []*schema.Message{api.Request, api.Response} {
			val := sample.Body(m, m.Valid.Hi)
			js, err := Marshal(m, m.Valid.Hi, &val)
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, m)
			bodies = append(bodies, js)
		}
	}
	return msgs, bodies
}

// extras are inputs of the forms sample bodies do not show, each for
// the message of that index in seedBodies' order that has the fields.
var extras = []string{
	`{"TopicData":[{"PartitionData":[{"Records":{"baseOffset":5,"records":[{"key":"k","value":{"hex":"00"},"headers":[{"key":"h","value":null}],"timestampDelta":-3},{}],"transactional":true,"baseTimestamp":1e3}}]}]}`,
	`{"TopicData":[{"PartitionData":[{"Records":[{},{"records":[{"key":null}]},{"producerId":1.0e1}]}]}]}`,
	`{"TopicData":[{"PartitionData":[{"Records":"00ff"}]}],"_unknown_tags":[{"tag":3,"data":"0a"},{"data":"","tag":1}]}`,
	`{"Topics":[{"Name":"a\u00e9\ud83d\ude00","Configs":[{"Name":{"hex":"ff00"},"Value":null}]}],"timeoutMs":1000.0}`,
	`{"Entries":[{"Ops":[{"Key":"k","Value":"NaN"},{"Key":"k","Value":{"hex":"7ff8000000000001"}},{"Key":"k","Value":-1.5e-3}]}]}`,
	`{"Topics":[{"Name":"plain","Configs":[{"Name":"x","Value":"a\nb\u0041"}]}]}`,
	`{"TopicId":"AAAAAAAAAAAAAAAAAAAAAA","Topics":[{"TopicId":"00000000-0000-0000-0000-000000000001"}]}`,
}

// mutate changes in at a few places: a byte dropped, doubled or put
// in, a span copied elsewhere (keys given twice, nesting), a number
// or string in place of another.
func mutate(rng *rand.Rand, in []byte) []byte {
	out := append([]byte(nil), in...)
	const bytesIn = `{}[],:"\ 0123456789-+.eEtrufalsn` + "\xff\xc3\t\n"
	words := []string{`null`, `true`, `"x"`, `1e3`, `-0.5`, `{}`, `[]`, `{"hex":"zz"}`, `"\ud800"`, `"\u0041"`, `[{}]`, `"NaN"`, `{"a":1,"a":2}`, `1e999`, `"_unknown_tags"`}
	for range 1 + rng.IntN(3) {
		if len(out) == 0 {
			out = append(out, '{')
		}
		i := rng.IntN(len(out))
		switch rng.IntN(6) {
		case 0:
			out = append(out[:i], out[i+1:]...)
		case 1:
			out = append(out[:i+1], out[i:]...)
		case 2:
			out = append(out[:i], append([]byte{bytesIn[rng.IntN(len(bytesIn))]}, out[i:]...)...)
		case 3:
			j := rng.IntN(len(out))
			lo, hi := min(i, j), max(i, j)
			k := rng.IntN(len(out))
			out = append(out[:k], append(append([]byte(nil), out[lo:hi]...), out[k:]...)...)
		default:
			w := words[rng.IntN(len(words))]
			j := min(len(out), i+rng.IntN(8))
			out = append(out[:i], append([]byte(w), out[j:]...)...)
		}
	}
	return out
}

// TestSameAsOld reads the sample bodies, the extras and many mutations
// of them with both readers: the streaming one must accept what the
// tree did, read the same Values and give the same errors.
func TestSameAsOld(t *testing.T) {
	msgs, bodies := seedBodies(t)
	rng := rand.New(rand.NewPCG(1, 2))
	n := 200
	if testing.Short() {
		n = 20
	}
	for i, m := range msgs {
		ins := [][]byte{bodies[i]}
		for _, e := range extras {
			ins = append(ins, []byte(e))
		}
		for _, in := range ins {
			sameAsOld(t, m, m.Valid.Hi, in)
			for range n / len(ins) {
				sameAsOld(t, m, m.Valid.Hi, mutate(rng, in))
			}
		}
	}
}

// FuzzSameAsOld is TestSameAsOld for the fuzzer's inputs.
func FuzzSameAsOld(f *testing.F) {
	msgs, bodies := seedBodies(f)
	for i, b := range bodies {
		f.Add(uint16(i), b)
	}
	for _, e := range extras {
		f.Add(uint16(0), []byte(e))
	}
	f.Fuzz(func(t *testing.T, i uint16, js []byte) {
		m := msgs[int(i)%len(msgs)]
		sameAsOld(t, m, m.Valid.Hi, js)
		sameAsOld(t, m, m.Valid.Lo, js)
	})
}
