package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	htmlr "github.com/manifester/manifester/internal/render/html"
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
	a, _, _ := d.build(fs, err)
	return a
}

// build builds the answer of the decode API for fs and err, its HTTP
// status and its JSON, within the answer limit (MaxAnswer): past it, the
// frames' markup and trees are left out (their summaries still go out)
// and the answer's error says so.
func (d *Decoder) build(fs []*report.Frame, err error) (Answer, int, []byte) {
	var a Answer
	size, maxAnswer := 0, MaxAnswer
	if d.MaxAnswer > 0 {
		maxAnswer = d.MaxAnswer
	}
	inflated := htmlr.MaxInflatedGridBytes // shared by the frames
	for i, f := range fs {
		var buf bytes.Buffer
		res := Result(f)
		res.InflatedBudget = &inflated
		if rerr := d.Renderer.DecodeFragment(&buf, &res); rerr != nil {
			a := Answer{Error: rerr.Error()}
			b, _ := json.Marshal(a)
			return a, http.StatusInternalServerError, b
		}
		if size += buf.Len(); size > maxAnswer {
			// Past the answer limit: no more markup or trees; the
			// frames' summaries still go out, and the error says so.
			a.Frames = append(a.Frames, summaries(fs[i:])...)
			err = fmt.Errorf("the answer would be larger than %d bytes: the markup and trees of frames %d to %d are left out", maxAnswer, i, len(fs)-1)
			break
		}
		a.Frames = append(a.Frames, AnswerFrame{Frame: f, HTML: buf.String()})
	}
	status := http.StatusOK
	if err != nil {
		a.Error = err.Error()
		var re *requestError
		if errors.As(err, &re) && len(a.Frames) == 0 {
			status = http.StatusBadRequest
		}
	}
	b, merr := json.Marshal(a)
	if merr == nil && len(b) > maxAnswer {
		// The trees and markup together are too large: summaries only.
		a.Frames = summaries(fs)
		a.Error = fmt.Sprintf("the answer would be %d bytes, larger than %d: the frames' markup and trees are left out", len(b), maxAnswer)
		b, merr = json.Marshal(a)
	}
	if merr != nil {
		a = Answer{Error: "encoding the answer failed"}
		status, b = http.StatusInternalServerError, []byte(`{"error":"encoding the answer failed"}`)
	}
	return a, status, b
}
