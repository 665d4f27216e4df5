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
	a, _, _ := d.build(fs, err, true)
	return a
}

// build builds the answer of the decode API for fs and err, its HTTP
// status and its JSON, within the answer limit (MaxAnswer): each frame is
// marshalled as it is rendered, and from the first whose markup and tree
// would take the JSON past the limit on, the frames' markup and trees are
// left out (their summaries still go out) and the answer's error says so.
// The JSON is the bytes json.Marshal writes for the Answer returned; the
// Answer has its frames only with keep (the HTTP answer needs the JSON
// alone, and the markup twice would double the answer's memory).
func (d *Decoder) build(fs []*report.Frame, err error, keep bool) (Answer, int, []byte) {
	var a Answer
	maxAnswer := MaxAnswer
	if d.MaxAnswer > 0 {
		maxAnswer = d.MaxAnswer
	}
	failed := func() (Answer, int, []byte) {
		return Answer{Error: "encoding the answer failed"}, http.StatusInternalServerError, []byte(`{"error":"encoding the answer failed"}`)
	}
	// Room for the answer's frame and the summaries of all frames (a few
	// hundred bytes each) and its error.
	room := maxAnswer - 256
	for _, f := range summaries(fs) {
		b, merr := json.Marshal(f)
		if merr != nil {
			return failed()
		}
		room -= len(b) + 1
	}
	var frames [][]byte
	add := func(af AnswerFrame, b []byte) {
		if keep {
			a.Frames = append(a.Frames, af)
		}
		frames = append(frames, b)
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
		af := AnswerFrame{Frame: f, HTML: buf.String()}
		b, merr := json.Marshal(af)
		if merr != nil {
			return failed()
		}
		if room -= len(b) + 1; room < 0 {
			// Past the answer limit: no more markup or trees; the
			// frames' summaries still go out, and the error says so.
			err = fmt.Errorf("the answer would be larger than %d bytes: the markup and trees of frames %d to %d are left out", maxAnswer, i, len(fs)-1)
			for _, sf := range summaries(fs[i:]) {
				if b, merr = json.Marshal(sf); merr != nil {
					return failed()
				}
				add(sf, b)
			}
			break
		}
		add(af, b)
	}
	status := http.StatusOK
	if err != nil {
		a.Error = err.Error()
		var re *requestError
		if errors.As(err, &re) && len(frames) == 0 {
			status = http.StatusBadRequest
		}
	}
	// As json.Marshal(a) writes it, in one allocation.
	var msg []byte
	if a.Error != "" {
		var merr error
		if msg, merr = json.Marshal(a.Error); merr != nil {
			return failed()
		}
	}
	n := len(`{"frames":[],"error":}`) + len(msg)
	for _, b := range frames {
		n += len(b) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '{')
	if len(frames) > 0 {
		out = append(out, `"frames":[`...)
		for i, b := range frames {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, b...)
			frames[i] = nil // garbage as soon as copied
		}
		out = append(out, ']')
	}
	if msg != nil {
		if len(frames) > 0 {
			out = append(out, ',')
		}
		out = append(append(out, `"error":`...), msg...)
	}
	return a, status, append(out, '}')
}
