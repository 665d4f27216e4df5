package codec

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/spec"
	"github.com/manifester/manifester/internal/wire"
)

// A synthetic spec whose struct holds an array of itself: its smallest
// instance is finite (the array is empty), but a frame can nest it as
// deep as it has bytes.
const selfRequest = `{
  "apiKey": 0, "type": "request", "name": "NestRequest",
  "validVersions": "0-1", "flexibleVersions": "1+",
  "fields": [
    { "name": "Root", "type": "Node", "versions": "0+", "fields": [
      { "name": "Kids", "type": "[]Node", "versions": "0+" }
    ]}
  ]
}`

const selfResponse = `{
  "apiKey": 0, "type": "response", "name": "NestResponse",
  "validVersions": "0-1", "flexibleVersions": "1+",
  "fields": [ { "name": "ErrorCode", "type": "int16", "versions": "0+" } ]
}`

func selfCodec(t *testing.T) *Codec {
	t.Helper()
	var files []*spec.File
	for name, src := range map[string]string{"NestRequest.json": selfRequest, "NestResponse.json": selfResponse} {
		f, err := spec.Parse(name, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	reg, err := schema.Build(files)
	if err != nil {
		t.Skipf("the spec loader rejects a struct that holds an array of itself: %v", err)
	}
	return New(reg)
}

// nested returns a NestRequest v0 frame whose Root nests depth levels of
// one-element Kids arrays: 4 bytes per level (int32 count 1), the last
// array empty.
func nested(depth int) []byte {
	b := make([]byte, 4, 4+10+4*depth+4)
	b = binary.BigEndian.AppendUint16(b, 0) // api key
	b = binary.BigEndian.AppendUint16(b, 0) // version
	b = binary.BigEndian.AppendUint32(b, 7) // correlation id
	b = binary.BigEndian.AppendUint16(b, 0xffff)
	for i := 0; i < depth; i++ {
		b = binary.BigEndian.AppendUint32(b, 1)
	}
	b = binary.BigEndian.AppendUint32(b, 0)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// TestDecodeDepthLimit decodes a 2 MB frame nesting half a million levels:
// a clear error with offset and field path, not a stack overflow; the
// levels within the limit decode, with and without spans.
func TestDecodeDepthLimit(t *testing.T) {
	c := selfCodec(t)
	ok := nested(budget.Depth - 2)
	if _, err := c.DecodeRequest(ok, Options{Spans: true}); err != nil {
		t.Fatalf("%d levels: %v", budget.Depth-2, err)
	}
	deep := nested(512 << 10)
	for _, spans := range []bool{false, true} {
		f, err := c.DecodeRequest(deep, Options{Spans: spans})
		var de *wire.DecodeError
		if !errors.As(err, &de) || !errors.Is(err, budget.ErrDepth) {
			t.Fatalf("spans %v: err = %v", spans, err)
		}
		if !strings.HasPrefix(de.Path, "NestRequest.Root.Kids[0].Kids[0].") || de.Offset < 4*budget.Depth || de.Offset > 4*budget.Depth+32 {
			t.Errorf("spans %v: error at offset %d, path %.80s...", spans, de.Offset, de.Path)
		}
		if !strings.Contains(err.Error(), "nested more than 64 levels") {
			t.Errorf("spans %v: %v", spans, err)
		}
		if spans && (f == nil || f.SpanTree() == nil) {
			t.Errorf("no partial tree")
		}
	}
	// A budget may set another limit.
	if _, err := c.DecodeRequest(nested(20), Options{Budget: budget.Limits{Depth: 10}.For(nil, 100)}); !errors.Is(err, budget.ErrDepth) {
		t.Errorf("depth 20 under a limit of 10: %v", err)
	}
}

// TestEncodeDepthLimit encodes a value nested past the limit: an error,
// not a stack overflow.
func TestEncodeDepthLimit(t *testing.T) {
	c := selfCodec(t)
	api, _ := c.Reg.API(0)
	leaf := KidsValue([]Value{KidsValue([]Value{})})
	v := leaf
	for i := 0; i < 100000; i++ {
		v = KidsValue([]Value{KidsValue([]Value{v})})
	}
	body := KidsValue([]Value{v})
	_, err := c.EncodeRequest(nil, &Frame{Kind: schema.TypeRequest, API: api, Version: 0, Body: body, ClientIDNull: true})
	if !errors.Is(err, budget.ErrDepth) {
		t.Fatalf("err = %v", err)
	}
}
