//go:build js && wasm

// Command manifester-wasm is the decoder of the static site, compiled to
// WebAssembly (GOOS=js GOARCH=wasm) by `manifester build --wasm`. It
// registers three functions on the page's global object:
//
//	manifesterLoad(specsJSON)  -> "" or an error: builds the codec from the
//	                              release's spec files (/static/specs.json)
//	manifesterDecode(reqJSON)  -> the JSON answer of POST /api/decode
//	manifesterEncode(reqJSON)  -> the JSON answer of POST /api/encode
//
// The answers are those of `manifester serve` (package server's Decoder),
// so the page treats both alike.
package main

import (
	"encoding/json"
	"syscall/js"

	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/compress"
	htmlr "github.com/manifester/manifester/internal/render/html"
	"github.com/manifester/manifester/internal/server"
	"github.com/manifester/manifester/internal/specjson"
)

var dec *server.Decoder

func main() {
	g := js.Global()
	g.Set("manifesterLoad", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 1 {
			return "manifesterLoad wants the specs JSON"
		}
		d, err := load([]byte(args[0].String()))
		if err != nil {
			return err.Error()
		}
		dec = d
		return ""
	}))
	g.Set("manifesterDecode", js.FuncOf(func(_ js.Value, args []js.Value) any {
		var in server.DecodeRequest
		return answer(args, &in, func() server.Answer { return dec.DecodeAnswer(in) })
	}))
	g.Set("manifesterEncode", js.FuncOf(func(_ js.Value, args []js.Value) any {
		var in server.EncodeRequest
		return answer(args, &in, func() server.Answer { return dec.EncodeAnswer(in) })
	}))
	select {}
}

// answer parses the request JSON into in and returns the JSON answer of
// do, or an answer naming the problem.
func answer(args []js.Value, in any, do func() server.Answer) string {
	var a server.Answer
	switch {
	case dec == nil:
		a.Error = "the decoder has no specs: call manifesterLoad first"
	case len(args) != 1 || args[0].Type() != js.TypeString:
		a.Error = "want one JSON string"
	case len(args[0].String()) > server.MaxDecodeBody:
		a.Error = "request too large"
	default:
		if err := json.Unmarshal([]byte(args[0].String()), in); err != nil {
			a.Error = "bad JSON request: " + err.Error()
		} else {
			a = do()
		}
	}
	out, err := json.Marshal(a)
	if err != nil {
		return `{"error":"encoding the answer failed"}`
	}
	return string(out)
}

// load builds the decoder of a specs document: the codec of its release
// (inflating compressed record batches, as serve does) and the renderer of
// the frames' grid and tree.
func load(specs []byte) (*server.Decoder, error) {
	reg, doc, err := specjson.Unmarshal(specs)
	if err != nil {
		return nil, err
	}
	c := codec.New(reg)
	c.Decompress = compress.Decompressor()
	r, err := htmlr.New()
	if err != nil {
		return nil, err
	}
	r.ErrorsPath = doc.ErrorsPath
	return &server.Decoder{Codec: c, Renderer: r}, nil
}
