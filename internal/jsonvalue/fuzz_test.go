package jsonvalue

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/sample"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/wire"
)

// FuzzUnmarshal reads arbitrary JSON as the body of any request or
// response (the first argument picks it). Whatever reads and encodes must
// decode again and survive JSON -> bytes -> JSON -> bytes unchanged.
func FuzzUnmarshal(f *testing.F) {
	c := load(f, "4.3")
	var msgs []*schema.Message
	for _, api := range c.Reg.APIs {
		if !api.Reserved() {
			msgs = append(msgs, api.Request, api.Response)
		}
	}
	for i, m := range msgs {
		body := sample.Body(m, m.Valid.Hi)
		js, err := Marshal(m, m.Valid.Hi, &body)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint16(i), js)
	}
	f.Add(uint16(0), []byte(`{"TopicData":[{"PartitionData":[{"Records":{"records":[{"key":"k","value":{"hex":"00"}}]}}]}]}`))
	f.Fuzz(func(t *testing.T, i uint16, js []byte) {
		m := msgs[int(i)%len(msgs)]
		v := m.Valid.Hi
		val, err := Unmarshal(m, v, js)
		if err != nil {
			return
		}
		b, err := c.EncodeBody(nil, m, v, &val)
		if err != nil {
			return // e.g. a non-nullable field left at a null default
		}
		dec, _, err := c.DecodeBody(m, v, b, codec.Options{})
		if err != nil {
			// Records given as hex are opaque to encode; anything else we
			// encode must decode.
			var de *wire.DecodeError
			if errors.As(err, &de) && strings.Contains(de.Path, "Records") {
				return
			}
			t.Fatalf("%s: our own encoding does not decode: %v", m.Name, err)
		}
		out, err := Marshal(m, v, &dec)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Unmarshal(m, v, out)
		if err != nil {
			t.Fatalf("%s: Marshal output does not read back: %v\n%s", m.Name, err, out)
		}
		again, err := c.EncodeBody(nil, m, v, &back)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("%s: bytes changed through JSON: %v", m.Name, err)
		}
	})
}
