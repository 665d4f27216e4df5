package frameflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/manifester/manifester/internal/report"
)

// Document is one JSON value of encode's input.
type Document struct {
	Bytes []byte // the value, a part of the input
	Off   int    // where it starts in the input
}

// Documents splits encode's input into its JSON values: one body, or JSON
// lines (decode --format json output) with one frame each. Input that is
// not a sequence of JSON values is one document, whose syntax error the
// encoder reports with its position.
func Documents(data []byte) ([]Document, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs []Document
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			break
		}
		if err != nil {
			if len(docs) == 0 {
				return []Document{{Bytes: data}}, nil
			}
			return nil, fmt.Errorf("JSON value %d: %w", len(docs)+1, positioned(data, err))
		}
		end := int(dec.InputOffset())
		docs = append(docs, Document{Bytes: data[end-len(raw) : end : end], Off: end - len(raw)})
	}
	if len(docs) == 0 {
		return []Document{{Bytes: data}}, nil
	}
	return docs, nil
}

// positioned adds to a syntax error of data, or its end cut short, its
// line and column (1-based), as the encoder's own errors give them.
func positioned(data []byte, err error) error {
	off := int64(len(data))
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		off = min(max(se.Offset-1, 0), off) // the offset after the bad byte
	case errors.Is(err, io.ErrUnexpectedEOF):
		err = errors.New("unexpected end of the JSON input")
	}
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := off - int64(bytes.LastIndexByte(data[:off], '\n'))
	return fmt.Errorf("%w at line %d, column %d", err, line, col)
}

// ReportLine is the part of a decode --format json line that encode uses:
// what the frame was, and its body.
type ReportLine struct {
	Kind          string          `json:"kind"`
	APIKey        int16           `json:"api_key"`
	Version       int16           `json:"version"`
	CorrelationID int32           `json:"correlation_id"`
	ClientID      *string         `json:"client_id"`
	HeaderVersion int16           `json:"header_version"`
	HeaderTags    []report.Tag    `json:"header_tags"`
	Body          json.RawMessage `json:"body"`
	// BodyOff is where Body starts in the line (-1 when not known).
	BodyOff int `json:"-"`
}

// Body returns the body to encode from one document: the document itself,
// or the "body" of a decode --format json line (recognised by its
// "api_key" key, which no spec field can be named: spec names have no
// underscore) with the rest of that line. A line without a body (a frame
// that did not decode) is an error saying so.
func Body(doc []byte) ([]byte, *ReportLine, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(doc, &probe); err != nil {
		return doc, nil, nil // the encoder reports the syntax error with its position
	}
	if _, hasKey := probe["api_key"]; !hasKey {
		return doc, nil, nil
	}
	var l ReportLine
	if err := json.Unmarshal(doc, &l); err != nil {
		return nil, nil, fmt.Errorf("reading a decode report line: %w", err)
	}
	if len(bytes.TrimSpace(l.Body)) == 0 || string(l.Body) == "null" {
		var why struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(doc, &why) == nil && why.Error != "" {
			return nil, nil, fmt.Errorf("the decode report line has no body (the frame did not decode: %s)", why.Error)
		}
		return nil, nil, fmt.Errorf("the decode report line has no body (the frame did not decode)")
	}
	l.BodyOff = bodyOff(doc, l.Body)
	return l.Body, &l, nil
}

// bodyOff returns where body, the value of the "body" key that
// encoding/json kept (the last), starts in doc, or -1.
func bodyOff(doc, body []byte) int {
	dec := json.NewDecoder(bytes.NewReader(doc))
	off := -1
	if _, err := dec.Token(); err != nil {
		return -1
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return -1
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return -1
		}
		if k == "body" {
			off = int(dec.InputOffset()) - len(raw)
		}
	}
	if off < 0 || off+len(body) > len(doc) || !bytes.Equal(doc[off:off+len(body)], body) {
		return -1
	}
	return off
}
