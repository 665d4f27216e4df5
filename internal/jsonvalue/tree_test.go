package jsonvalue

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/manifester/manifester/bench/corpus"
	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/compress"
	"github.com/manifester/manifester/internal/hexout"
	"github.com/manifester/manifester/internal/hostile"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
)

// oracle decodes frame b (a request, or a response of api at version v)
// with Values and spans and with spans only (NoValues), and checks that
// AppendTree writes from both trees, with and without the frame's hex,
// exactly what AppendMarshal writes from the Value. When the decode
// failed the tree writers must refuse the tree (an ErrTree error) or,
// when the body was whole, still agree with the Value writer. It returns
// whether the frame decoded cleanly.
func oracle(t *testing.T, c *codec.Codec, b []byte, kind schema.MessageType, api *schema.API, v int16, lim budget.Limits) bool {
	t.Helper()
	decode := func(noValues bool) (*codec.Frame, error) {
		o := codec.Options{Spans: true, NoValues: noValues, Budget: lim.For(nil, len(b))}
		if kind == schema.TypeResponse {
			return c.DecodeResponse(b, api, v, o)
		}
		return c.DecodeRequest(b, o)
	}
	full, ferr := decode(false)
	lean, lerr := decode(true)
	if (ferr == nil) != (lerr == nil) || ferr != nil && ferr.Error() != lerr.Error() {
		t.Fatalf("decode with Values: %v; without: %v", ferr, lerr)
	}
	if full == nil || full.API == nil || full.SpanTree() == nil || full.SpanTree().Body() == span.None {
		return false // the header did not decode: there is no body
	}
	m := full.Message()
	want, werr := AppendMarshal([]byte("x"), m, full.Version, &full.Body)
	for _, f := range []*codec.Frame{full, lean} {
		tr := f.SpanTree()
		for _, hx := range [][]byte{nil, hexout.AppendEncode(nil, tr.Bytes)} {
			got, gerr := AppendTree([]byte("x"), tr, tr.Body(), m, f.Version, hx)
			switch {
			case ferr != nil && gerr != nil:
				if !errors.Is(gerr, ErrTree) {
					t.Fatalf("%s v%d: a failed decode's tree gives %v, not ErrTree", m.Name, f.Version, gerr)
				}
				if string(got) != "x" {
					t.Fatalf("dst changed on error: %q", got)
				}
			case (gerr == nil) != (werr == nil):
				t.Fatalf("%s v%d (decode error %v): tree writer error %v, Value writer error %v\n tree %s\nvalue %s", m.Name, f.Version, ferr, gerr, werr, got, want)
			case gerr != nil:
				if gerr.Error() != werr.Error() {
					t.Fatalf("%s v%d: errors differ:\n tree %v\nvalue %v", m.Name, f.Version, gerr, werr)
				}
			case !bytes.Equal(got, want):
				t.Fatalf("%s v%d (NoValues %v, hex %v, decode error %v): bodies differ:\n tree %s\nvalue %s", m.Name, f.Version, f == lean, hx != nil, ferr, got, want)
			}
		}
	}
	return ferr == nil
}

// cuts checks the frame cut at many points (every byte of a frame of up
// to 100 bytes, 100 points of a larger one, 25 of one over 16 KiB), size
// prefix unchanged.
func cuts(t *testing.T, c *codec.Codec, b []byte, kind schema.MessageType, api *schema.API, v int16) {
	t.Helper()
	points := 100
	if len(b) > 16<<10 {
		points = 25 // the large frames of the corpus and the hostile ones
	}
	step := max(1, len(b)/points)
	for i := 0; i < len(b); i += step {
		oracle(t, c, b[:i], kind, api, v, budget.Limits{})
	}
}

func rel(t *testing.T, name string) *codec.Codec {
	c := load(t, name)
	c.Decompress = compress.Decompressor()
	return c
}

// TestTreeSmallest: the smallest request and response of every API and
// version of every release, whole and cut.
func TestTreeSmallest(t *testing.T) {
	for _, r := range []string{"3.9", "4.0", "4.1", "4.2", "4.3", "trunk"} {
		c := rel(t, r)
		n := 0
		for _, api := range c.Reg.APIs {
			if api.Reserved() {
				continue
			}
			for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
				for _, kind := range []schema.MessageType{schema.TypeRequest, schema.TypeResponse} {
					b, err := sample.Encode(c, api, kind, v)
					if err != nil {
						t.Fatal(err)
					}
					if !oracle(t, c, b, kind, api, v, budget.Limits{}) {
						t.Fatalf("%s %s v%d: the smallest frame does not decode", r, api.Name, v)
					}
					if r == "4.3" {
						cuts(t, c, b, kind, api, v)
					}
					n++
				}
			}
		}
		if n < 500 {
			t.Errorf("%s: only %d frames", r, n)
		}
	}
}

// TestTreeCorpus: every request and response of the benchmark corpus,
// whole, cut, and under small budgets.
func TestTreeCorpus(t *testing.T) {
	c := rel(t, "4.3")
	xs := corpus.Exchanges(func(key int16) (int16, int16, bool) {
		api, ok := c.Reg.API(key)
		if !ok || api.Reserved() {
			return 0, 0, false
		}
		return api.Request.Valid.Lo, api.Request.Valid.Hi, true
	})
	n, clean := 0, 0
	for _, x := range xs {
		api, ok := c.Reg.API(x.Request.Key)
		if !ok {
			continue
		}
		for _, f := range []corpus.Frame{x.Request, x.Response} {
			kind := schema.TypeRequest
			if !f.Request {
				kind = schema.TypeResponse
			}
			if oracle(t, c, f.Bytes, kind, api, f.Version, budget.Limits{}) {
				clean++
			}
			cuts(t, c, f.Bytes, kind, api, f.Version)
			for _, lim := range []budget.Limits{{Nodes: 50}, {Nodes: 1000}, {Inflate: 1 << 10}} {
				oracle(t, c, f.Bytes, kind, api, f.Version, lim)
			}
			n++
		}
	}
	if n < 100 || clean < n*9/10 {
		t.Errorf("%d corpus frames, %d of them decode", n, clean)
	}
}

// TestTreeHostile: the hostile frames of issue 9 in every codec, and
// under small budgets.
func TestTreeHostile(t *testing.T) {
	c := rel(t, "4.3")
	c.DecompressLimit = compress.LimitDecompressor()
	produce, _ := c.Reg.API(0)
	for _, sh := range hostile.Shapes {
		for _, cd := range hostile.Codecs {
			b := sh.Build(cd, 64<<10)
			oracle(t, c, b, schema.TypeRequest, produce, 0, budget.Limits{})
			for _, lim := range []budget.Limits{{Nodes: 4096}, {Inflate: 64 << 10}} {
				oracle(t, c, b, schema.TypeRequest, produce, 0, lim)
			}
			if cd == hostile.Gzip {
				cuts(t, c, b, schema.TypeRequest, produce, 0)
			}
		}
	}
}

// TestTreeRandom: random bodies of every API and version (every kind of
// value: nulls, invalid UTF-8, HTML and control characters, NaN and
// infinities, int64 extremes, uuids, records, tagged fields set and
// absent, unknown tags), encoded and decoded as frames.
func TestTreeRandom(t *testing.T) {
	c := rel(t, "4.3")
	rng := rand.New(rand.NewPCG(13, 1))
	n := 0
	for round := 0; round < 4; round++ {
		for _, api := range c.Reg.APIs {
			if api.Reserved() {
				continue
			}
			for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
				for _, kind := range []schema.MessageType{schema.TypeRequest, schema.TypeResponse} {
					b := randomFrame(c, rng, api, kind, v)
					if b == nil {
						continue
					}
					if !oracle(t, c, b, kind, api, v, budget.Limits{}) {
						t.Fatalf("%s %s v%d: a random frame does not decode: %x", kind, api.Name, v, b)
					}
					if round == 0 {
						cuts(t, c, b, kind, api, v)
					}
					n++
				}
			}
		}
	}
	if n < 1000 {
		t.Errorf("only %d random frames", n)
	}
}

// randomFrame encodes a random body of api at v (nil if it does not
// encode: a random value outside what the version can carry).
func randomFrame(c *codec.Codec, rng *rand.Rand, api *schema.API, kind schema.MessageType, v int16) []byte {
	m := api.Request
	if kind == schema.TypeResponse {
		m = api.Response
	}
	g := &randGen{rng: rng, v: v, flex: m.Flexible.Contains(v)}
	f := &codec.Frame{Kind: kind, API: api, Version: v, ClientID: []byte("c"), Body: g.structValue(m.Body, 0)}
	var b []byte
	var err error
	if kind == schema.TypeResponse {
		b, err = c.EncodeResponse(nil, f)
	} else {
		b, err = c.EncodeRequest(nil, f)
	}
	if err != nil {
		return nil
	}
	return b
}

type randGen struct {
	rng  *rand.Rand
	v    int16
	flex bool
}

// awkward strings: quotes, backslashes, HTML and control characters,
// U+2028, non-ASCII and invalid UTF-8.
var awkward = []string{"", "plain", `q"u\o`, "<a&b>", "\x00\x1f\t\n", "\u2028\u2029", "héllo ☃", "\xff\xfe", "a\xc3", "\xed\xa0\x80"}

func (g *randGen) structValue(s *schema.Struct, depth int) codec.Value {
	out := codec.KidsValue(make([]codec.Value, len(s.Fields)))
	for i, f := range s.Fields {
		switch {
		case !f.Versions.Contains(g.v) || depth > 4:
			out.Kids()[i] = codec.DefaultValue(f)
		case g.flex && f.Tagged.Contains(g.v) && g.rng.IntN(3) == 0:
			out.Kids()[i] = codec.DefaultValue(f) // absent from the wire
		case f.Nullable.Contains(g.v) && g.rng.IntN(5) == 0:
			out.Kids()[i] = codec.NullValue()
		default:
			out.Kids()[i] = g.value(f.Type, depth)
		}
	}
	if g.flex && g.rng.IntN(4) == 0 {
		var tags []codec.RawTag
		for tag := uint32(5000 + g.rng.IntN(50)); len(tags) < 1+g.rng.IntN(3); tag += uint32(1 + g.rng.IntN(1000)) {
			data := make([]byte, g.rng.IntN(6))
			for j := range data {
				data[j] = byte(g.rng.UintN(256))
			}
			tags = append(tags, codec.RawTag{Tag: tag, Data: data})
		}
		out.SetUnknown(tags)
	}
	return out
}

func (g *randGen) value(t *schema.Type, depth int) codec.Value {
	r := g.rng
	switch t.Kind {
	case schema.KindBool:
		return codec.IntValue(int64(r.IntN(2)))
	case schema.KindInt8, schema.KindInt16, schema.KindUint16, schema.KindInt32, schema.KindUint32, schema.KindInt64:
		lo, hi, _ := t.Kind.IntRange()
		switch r.IntN(4) {
		case 0:
			return codec.IntValue(lo)
		case 1:
			return codec.IntValue(hi)
		case 2:
			return codec.IntValue(max(lo, min(hi, int64(r.IntN(2000))-1000)))
		}
		return codec.IntValue(max(lo, min(hi, int64(r.Uint64()))))
	case schema.KindFloat64:
		fs := []float64{0, math.Copysign(0, -1), 1.5, -2.25e-300, math.MaxFloat64, math.NaN(), math.Inf(1), math.Inf(-1), r.NormFloat64() * 1e10}
		return codec.FloatValue(fs[r.IntN(len(fs))])
	case schema.KindUUID:
		b := make([]byte, 16)
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		return codec.BytesValue(b)
	case schema.KindString:
		return codec.BytesValue([]byte(awkward[r.IntN(len(awkward))]))
	case schema.KindBytes:
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		return codec.BytesValue(b)
	case schema.KindRecords:
		if r.IntN(3) == 0 {
			return codec.BytesValue([]byte{})
		}
		return codec.BytesValue(corpus.RecordBatch(r.Uint64(), 1+r.IntN(3), r.IntN(30)))
	case schema.KindArray:
		out := codec.KidsValue(make([]codec.Value, r.IntN(4)))
		for i := range out.Kids() {
			out.Kids()[i] = g.value(t.Elem, depth)
		}
		return out
	case schema.KindStruct:
		return g.structValue(t.Struct, depth+1)
	}
	return codec.Value{}
}

// TestTreeDecodeBody: DecodeBody's tree, whose root is the body.
func TestTreeDecodeBody(t *testing.T) {
	c := rel(t, "4.3")
	rng := rand.New(rand.NewPCG(7, 7))
	n := 0
	for _, api := range c.Reg.APIs {
		if api.Reserved() {
			continue
		}
		for _, m := range []*schema.Message{api.Request, api.Response} {
			for v := m.Valid.Lo; v <= m.Valid.Hi; v++ {
				g := &randGen{rng: rng, v: v, flex: m.Flexible.Contains(v)}
				body := g.structValue(m.Body, 0)
				b, err := c.EncodeBody(nil, m, v, &body)
				if err != nil {
					continue
				}
				val, tr, err := c.DecodeBody(m, v, b, codec.Options{Spans: true})
				if err != nil {
					t.Fatalf("%s v%d: %v", m.Name, v, err)
				}
				want, _ := Marshal(m, v, &val)
				got, err := AppendTree(nil, tr, tr.Root(), m, v, hex.AppendEncode(nil, b))
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("%s v%d: %v\n tree %s\nvalue %s", m.Name, v, err, got, want)
				}
				n++
			}
		}
	}
	if n < 500 {
		t.Errorf("only %d bodies", n)
	}
}

// TestTreeMissingRows: a tree that lacks a field's row, or an array's
// element, is refused with ErrTree naming the path, not written with
// made-up values.
func TestTreeMissingRows(t *testing.T) {
	c := rel(t, "4.3")
	api, _ := c.Reg.API(3) // Metadata
	b, err := sample.Encode(c, api, schema.TypeResponse, 12)
	if err != nil {
		t.Fatal(err)
	}
	f, err := c.DecodeResponse(b, api, 12, codec.Options{Spans: true, NoValues: true})
	if err != nil {
		t.Fatal(err)
	}
	tr := f.SpanTree()
	body := tr.Body()
	if _, err := AppendTree(nil, tr, body, api.Response, 12, nil); err != nil {
		t.Fatal(err)
	}
	// Brokers is an array of one element: cut the element.
	brokers := tr.KidOf(body, fieldNamed(api.Response.Body, "Brokers"))
	if brokers == span.None {
		t.Fatal("no Brokers row")
	}
	n := tr.N(brokers)
	n.Last = n.First
	tr.N(n.First).Next = span.None
	_, err = AppendTree(nil, tr, body, api.Response, 12, nil)
	var je *Error
	if !errors.Is(err, ErrTree) || !errors.As(err, &je) || je.Path != "MetadataResponse.Brokers" {
		t.Fatalf("cut array: %v", err)
	}
	// No rows at all under the body.
	tr.N(body).First, tr.N(body).Last = span.None, span.None
	_, err = AppendTree(nil, tr, body, api.Response, 12, nil)
	if !errors.Is(err, ErrTree) || !errors.As(err, &je) || je.Path != "MetadataResponse.ThrottleTimeMs" {
		t.Fatalf("no rows: %v", err)
	}
}

func fieldNamed(s *schema.Struct, name string) *schema.Field {
	for _, f := range s.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// FuzzTree decodes any bytes as a request, or as the response of any API
// and version, and checks that the tree writer agrees with the Value
// writer (see oracle). Seeds: the smallest frames of every API and
// version, and random ones.
//
//	go test -run XXX -fuzz FuzzTree -fuzztime 20s ./internal/jsonvalue
func FuzzTree(f *testing.F) {
	c := load(f, "4.3")
	c.Decompress = compress.Decompressor()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, api := range c.Reg.APIs {
		if api.Reserved() {
			continue
		}
		for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
			for _, kind := range []schema.MessageType{schema.TypeRequest, schema.TypeResponse} {
				if b, err := sample.Encode(c, api, kind, v); err == nil {
					f.Add(kind == schema.TypeResponse, api.Key, v, b)
				}
				if b := randomFrame(c, rng, api, kind, v); b != nil && v == api.Request.Valid.Hi {
					f.Add(kind == schema.TypeResponse, api.Key, v, b)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, resp bool, key, v int16, b []byte) {
		kind := schema.TypeRequest
		var api *schema.API
		if resp {
			kind = schema.TypeResponse
			var ok bool
			if api, ok = c.Reg.API(key); !ok || api.Reserved() {
				return
			}
		}
		oracle(t, c, b, kind, api, v, budget.Limits{})
	})
}

// TestJSONRoundTripRandom: the JSON of random frames (every API, version
// and kind, with extreme integers, NaN and infinities, uuids, null and
// empty values, records, tagged fields and unknown tags) reads back and
// encodes to the same bytes: what decode prints, encode takes.
func TestJSONRoundTripRandom(t *testing.T) {
	c := rel(t, "4.3")
	rng := rand.New(rand.NewPCG(29, 3))
	n := 0
	for round := 0; round < 2; round++ {
		for _, api := range c.Reg.APIs {
			if api.Reserved() {
				continue
			}
			for v := api.Request.Valid.Lo; v <= api.Request.Valid.Hi; v++ {
				for _, kind := range []schema.MessageType{schema.TypeRequest, schema.TypeResponse} {
					b := randomFrame(c, rng, api, kind, v)
					if b == nil {
						continue
					}
					var f *codec.Frame
					var err error
					if kind == schema.TypeResponse {
						f, err = c.DecodeResponse(b, api, v, codec.Options{})
					} else {
						f, err = c.DecodeRequest(b, codec.Options{})
					}
					if err != nil {
						continue // records the random bytes do not make whole
					}
					m := f.Message()
					js, err := Marshal(m, v, &f.Body)
					if err != nil {
						t.Fatalf("%s v%d: %v", m.Name, v, err)
					}
					back, err := Unmarshal(m, v, js)
					if err != nil {
						t.Fatalf("%s v%d: %v\n%s", m.Name, v, err, js)
					}
					f.Body = back
					var out []byte
					if kind == schema.TypeResponse {
						out, err = c.EncodeResponse(nil, f)
					} else {
						out, err = c.EncodeRequest(nil, f)
					}
					if err != nil || !bytes.Equal(out, b) {
						t.Fatalf("%s v%d: through JSON %x, %v; was %x\n%s", m.Name, v, out, err, b, js)
					}
					n++
				}
			}
		}
	}
	if n < 500 {
		t.Errorf("only %d random frames", n)
	}
}
