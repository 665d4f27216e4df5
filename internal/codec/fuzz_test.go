package codec_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/testshared"
	"github.com/manifester/manifester/internal/vectors"
	"github.com/manifester/manifester/internal/wire"
)

// The fuzz targets decode arbitrary bytes as request frames and as response
// frames of every API and version of the 4.3 spec. Properties:
//
//   - no panic and no hang (the fuzzer's own timeout);
//   - decoding with and without spans gives the same error;
//   - the span leaves tile the input, also after an error;
//   - an error is set on one row of the tree, whose path is its path;
//   - a frame that decodes cleanly re-encodes to the same bytes, unless
//     the input uses a form the decoder accepts but does not produce (see
//     nonCanonical); then the re-encoded frame decodes to an equal value
//     and is itself a fixed point.
//
// Allocation bounded by the input is TestLyingCountsAllocateLittle.

var fuzzSpec = testshared.SpecPath("4.3")

var (
	fuzzOnce  sync.Once
	fuzzCodec *codec.Codec
	fuzzVecs  []vectors.Vector
	fuzzErr   error
)

func fuzzSetup(tb testing.TB) (*codec.Codec, []vectors.Vector) {
	tb.Helper()
	testshared.Dir(tb)
	fuzzOnce.Do(func() {
		reg, err := schema.Load(fuzzSpec)
		if err != nil {
			fuzzErr = err
			return
		}
		fuzzCodec = codec.New(reg)
		fuzzVecs, fuzzErr = vectors.Generate(fuzzCodec)
	})
	if fuzzErr != nil {
		tb.Fatalf("setup: %v", fuzzErr)
	}
	return fuzzCodec, fuzzVecs
}

func FuzzDecodeRequest(f *testing.F) {
	c, vs := fuzzSetup(f)
	for _, v := range vs {
		if v.Kind == "request" {
			b, _ := hex.DecodeString(v.Hex)
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := func(opts codec.Options) (*codec.Frame, error) { return c.DecodeRequest(data, opts) }
		checkFrame(t, c, data, dec)
	})
}

func FuzzDecodeResponse(f *testing.F) {
	c, vs := fuzzSetup(f)
	for _, v := range vs {
		if v.Kind == "response" {
			b, _ := hex.DecodeString(v.Hex)
			f.Add(v.APIKey, v.Version, b)
		}
	}
	f.Fuzz(func(t *testing.T, key, version int16, data []byte) {
		api, ok := c.Reg.API(key)
		if !ok {
			// Unknown keys have no response to decode; a nil API must be
			// an error (the size prefix is checked first), not a panic.
			var de *wire.DecodeError
			if _, err := c.DecodeResponse(data, nil, version, codec.Options{Spans: true}); !errors.As(err, &de) {
				t.Fatalf("nil API: got %v, want a *wire.DecodeError", err)
			}
			return
		}
		dec := func(opts codec.Options) (*codec.Frame, error) { return c.DecodeResponse(data, api, version, opts) }
		checkFrame(t, c, data, dec)
	})
}

func checkFrame(t *testing.T, c *codec.Codec, data []byte, dec func(codec.Options) (*codec.Frame, error)) {
	t.Helper()
	fs, errS := dec(codec.Options{Spans: true})
	_, errP := dec(codec.Options{})
	if fmt.Sprint(errS) != fmt.Sprint(errP) {
		t.Fatalf("spans and plain decoding disagree: %v vs %v", errS, errP)
	}
	if errS != nil {
		var de *wire.DecodeError
		if !errors.As(errS, &de) {
			t.Fatalf("error is not a *wire.DecodeError: %T %v", errS, errS)
		}
		if de.Offset < 0 || de.Offset > len(data) {
			t.Fatalf("error offset %d outside the %d-byte input: %v", de.Offset, len(data), errS)
		}
		if fs != nil {
			errorRow(t, fs.SpanTree(), errS, "")
		}
	}
	if fs == nil || fs.SpanTree() == nil || fs.SpanTree().Root() == span.None {
		t.Fatalf("no frame or span tree returned (err %v)", errS)
	}
	if msg := tiles(fs.SpanTree(), len(data)); msg != "" {
		t.Fatalf("span leaves do not tile the input (err %v): %s", errS, msg)
	}
	if errS != nil {
		return
	}
	re, err := encodeAgain(c, fs)
	if err != nil {
		t.Fatalf("decoded cleanly but does not re-encode: %v", err)
	}
	if bytes.Equal(re, data) {
		return
	}
	why := nonCanonical(fs.SpanTree(), data)
	f2, err := dec2(c, fs, re)
	if err != nil {
		t.Fatalf("re-encoded frame does not decode: %v\n in: %x\nout: %x", err, data, re)
	}
	if tagCount(fs.SpanTree()) > tagCount(f2.SpanTree()) {
		why = append(why, "a tagged field holding its default value")
	}
	if len(why) == 0 {
		t.Fatalf("re-encode differs with no non-canonical form in the input\n in: %x\nout: %x", data, re)
	}
	if !sameValue(&fs.Body, &f2.Body) {
		t.Fatalf("re-encoded frame (non-canonical input: %s) decodes to a different value", strings.Join(why, "; "))
	}
	if re2, err := encodeAgain(c, f2); err != nil || !bytes.Equal(re2, re) {
		t.Fatalf("re-encoding is not a fixed point (err %v)", err)
	}
}

// sameValue is an independent restatement of codec.Equal: floats (kept as
// bits in Int) compare by their bits, so a NaN read from the wire equals
// itself and -0 differs from 0.
func sameValue(a, b *codec.Value) bool {
	if a.Int() != b.Int() || a.IsNull() != b.IsNull() || !bytes.Equal(a.Bytes(), b.Bytes()) {
		return false
	}
	if len(a.Kids()) != len(b.Kids()) || len(a.Unknown()) != len(b.Unknown()) {
		return false
	}
	for i := range a.Kids() {
		if !sameValue(&a.Kids()[i], &b.Kids()[i]) {
			return false
		}
	}
	for i := range a.Unknown() {
		if a.Unknown()[i].Tag != b.Unknown()[i].Tag || !bytes.Equal(a.Unknown()[i].Data, b.Unknown()[i].Data) {
			return false
		}
	}
	return true
}

func encodeAgain(c *codec.Codec, f *codec.Frame) ([]byte, error) {
	if f.Kind == schema.TypeResponse {
		return c.EncodeResponse(nil, f)
	}
	return c.EncodeRequest(nil, f)
}

func dec2(c *codec.Codec, f *codec.Frame, b []byte) (*codec.Frame, error) {
	if f.Kind == schema.TypeResponse {
		return c.DecodeResponse(b, f.API, f.Version, codec.Options{Spans: true})
	}
	return c.DecodeRequest(b, codec.Options{Spans: true})
}

// tiles checks that the leaves of root cover [0, size) in order.
func tiles(t *span.Tree, size int) string {
	end := 0
	for _, id := range t.Leaves(t.Root()) {
		l := t.N(id)
		if int(l.Off) != end {
			return fmt.Sprintf("leaf %s at %d, want %d", t.Path(id), l.Off, end)
		}
		end += int(l.Len)
	}
	if end != size {
		return fmt.Sprintf("leaves end at %d of %d", end, size)
	}
	return ""
}

func tagCount(t *span.Tree) int {
	n := 0
	t.Walk(t.Root(), func(id span.ID, _ int) {
		if strings.HasPrefix(t.Type(id), "tag ") {
			n++
		}
	})
	return n
}

// nonCanonical lists the forms in data that the decoder accepts and the
// encoder never writes, so that re-encoding changes them:
//
//   - a bool byte other than 0 or 1 (read as true, written as 1);
//   - a nullable-struct presence marker other than -1/1 (int8) or 0/1
//     (tagged uvarint): negative is null, anything else present;
//   - an unsigned varint (compact length, count, tag number or size) with
//     redundant continuation bytes, or a 5-byte one whose high bits the
//     reader drops;
//   - a tagged field that holds its default value (found by the caller: it
//     is not written again).
func nonCanonical(t *span.Tree, data []byte) []string {
	var why []string
	t.Walk(t.Root(), func(id span.ID, _ int) {
		r := t.N(id)
		if !t.IsLeaf(id) || int(r.Off+r.Len) > len(data) {
			return
		}
		n := struct {
			Off, Len    int
			Int, Prefix int64
			Val         span.ValueKind
			Enc         span.Enc
			Type        string
			Bytes       []byte
		}{int(r.Off), int(r.Len), r.Int, r.Prefix, r.Val, r.Enc, t.Type(id), t.ValueBytes(id)}
		switch {
		case n.Val == span.ValBool && n.Len == 1 && data[n.Off] > 1:
			why = append(why, fmt.Sprintf("bool byte 0x%02x at %d", data[n.Off], n.Off))
		case n.Val == span.ValPresence && n.Type == "int8" && n.Int != -1 && n.Int != 1:
			why = append(why, fmt.Sprintf("presence marker %d at %d", n.Int, n.Off))
		case n.Val == span.ValPresence && n.Type == "uvarint" && (n.Int > 0 || n.Len > 1):
			why = append(why, fmt.Sprintf("tagged presence marker at %d", n.Off))
		case n.Type == "uvarint" && n.Len > wire.UvarintLen(uint32(n.Int)):
			why = append(why, fmt.Sprintf("%d-byte uvarint for %d at %d", n.Len, n.Int, n.Off))
		case n.Enc == span.EncCompact && (n.Val == span.ValString || n.Val == span.ValBytes):
			if plen := n.Len - len(n.Bytes); plen > wire.UvarintLen(uint32(n.Prefix)) {
				why = append(why, fmt.Sprintf("%d-byte compact length %d at %d", plen, n.Prefix, n.Off))
			}
		}
	})
	return why
}

func TestNonCanonicalFormsAreReported(t *testing.T) {
	c, vs := fuzzSetup(t)
	// A flexible request with a compact string: make its length prefix
	// redundant (0x01 -> 0x81 0x00) and patch the size prefix.
	for _, v := range vs {
		if v.Kind != "request" || v.Name != "CreateTopics" || v.HeaderVersion != 2 {
			continue
		}
		b, _ := hex.DecodeString(v.Hex)
		f, err := c.DecodeRequest(b, codec.Options{Spans: true})
		if err != nil {
			t.Fatal(err)
		}
		var at = -1
		tr := f.SpanTree()
		tr.Walk(tr.Root(), func(id span.ID, _ int) {
			if n := tr.N(id); at < 0 && n.Enc == span.EncCompact && n.Val == span.ValString && !n.Null && tr.IsLeaf(id) {
				at = int(n.Off)
			}
		})
		if at < 0 || b[at] != 0x01 {
			t.Fatalf("no empty compact string found in %s v%d", v.Name, v.Version)
		}
		mut := append(append(append([]byte(nil), b[:at]...), 0x81, 0x00), b[at+1:]...)
		mut[3]++
		dec := func(opts codec.Options) (*codec.Frame, error) { return c.DecodeRequest(mut, opts) }
		checkFrame(t, c, mut, dec) // accepted: redundant varint byte
		got, _ := c.DecodeRequest(mut, codec.Options{Spans: true})
		if why := nonCanonical(got.SpanTree(), mut); len(why) != 1 || !strings.Contains(why[0], "compact length") {
			t.Errorf("nonCanonical = %q, want one redundant compact length", why)
		}
		return
	}
	t.Fatal("no flexible CreateTopics request vector")
}

// TestIntArrayOutOfRange checks that the one-loop path for integer arrays
// leaves range errors to the general path: the error names the element.
func TestIntArrayOutOfRange(t *testing.T) {
	c, _ := fuzzSetup(t)
	api, _ := c.Reg.APIByName("Metadata")
	v := api.Response.Valid.Hi
	f := sample.Frame(api, schema.TypeResponse, v)
	topics := fieldIndex(t, api.Response.Body, "Topics")
	parts := fieldIndex(t, api.Response.Body.Fields[topics].Type.ElemStruct(), "Partitions")
	ps := api.Response.Body.Fields[topics].Type.ElemStruct().Fields[parts].Type.ElemStruct()
	replicas := fieldIndex(t, ps, "ReplicaNodes")
	arr := &f.Body.Kids()[topics].Kids()[0].Kids()[parts].Kids()[0].Kids()[replicas]
	arr.SetKids([]codec.Value{codec.IntValue(1), codec.IntValue(1 << 40)})
	_, err := c.EncodeResponse(nil, f)
	if !errors.Is(err, codec.ErrOutOfRange) || !strings.Contains(err.Error(), "ReplicaNodes[1]") {
		t.Fatalf("got %v, want ErrOutOfRange at ReplicaNodes[1]", err)
	}
	arr.Kids()[1].SetInt(-7)
	b, err := c.EncodeResponse(nil, f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.DecodeResponse(b, api, v, codec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := g.Body.Kids()[topics].Kids()[0].Kids()[parts].Kids()[0].Kids()[replicas].Kids()
	if len(got) != 2 || got[0].Int() != 1 || got[1].Int() != -7 {
		t.Fatalf("decoded %+v, want 1, -7", got)
	}
}

func fieldIndex(t *testing.T, s *schema.Struct, name string) int {
	t.Helper()
	for i, f := range s.Fields {
		if f.Name == name {
			return i
		}
	}
	t.Fatalf("%s has no field %s", s.Name, name)
	return -1
}
