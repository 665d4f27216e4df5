package server

import (
	"github.com/manifester/manifester/internal/render/jsonr"
	"github.com/manifester/manifester/internal/span"
)

// MarshalJSON writes the frame as package jsonr writes a frame (its tree
// from the frame's span tree, descriptions included, within the frame's
// output budget), then "html".
func (a AnswerFrame) MarshalJSON() ([]byte, error) {
	if a.Frame == nil {
		return append(span.AppendJSONString([]byte(`{"html":`), []byte(a.HTML)), '}'), nil
	}
	b, err := jsonr.AppendFrame(nil, a.Frame, jsonr.Options{About: true})
	if err != nil {
		return nil, err
	}
	b = span.AppendJSONString(append(b[:len(b)-1], `,"html":`...), []byte(a.HTML))
	return append(b, '}'), nil
}
