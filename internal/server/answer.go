package server

import (
	"bytes"

	"github.com/manifester/manifester/internal/report"
)

// DecodeAnswer is the answer POST /api/decode gives for in, without HTTP:
// for a caller that decodes elsewhere (the WebAssembly decoder of the
// static site, cmd/manifester-wasm).
func (d *Decoder) DecodeAnswer(in DecodeRequest) Answer {
	fs, err := d.Decode(in)
	return d.answerOf(fs, err)
}

// EncodeAnswer is the answer POST /api/encode gives for in, without HTTP.
func (d *Decoder) EncodeAnswer(in EncodeRequest) Answer {
	f, err := d.Encode(in)
	if err != nil {
		return d.answerOf(nil, err)
	}
	return d.answerOf([]*report.Frame{f}, nil)
}

// answerOf builds the answer the decode API writes (the HTTP status aside).
func (d *Decoder) answerOf(fs []*report.Frame, err error) Answer {
	var a Answer
	for _, f := range fs {
		var buf bytes.Buffer
		res := Result(f)
		if rerr := d.Renderer.DecodeFragment(&buf, &res); rerr != nil {
			return Answer{Error: rerr.Error()}
		}
		a.Frames = append(a.Frames, AnswerFrame{Frame: f, HTML: buf.String()})
	}
	if err != nil {
		a.Error = err.Error()
	}
	return a
}
