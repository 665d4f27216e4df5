package html

import (
	"bytes"
	"fmt"
	"html/template"
	"io"

	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/span"
)

// MaxGridBytes is the largest frame the decode page draws as a byte grid;
// bigger frames are reported without grid and tree markup.
const MaxGridBytes = 64 << 10

// MaxInflatedGridBytes is how many bytes of inflated records one answer
// of the decode page draws as grids, all its frames together (the start
// of [DecodeResult.InflatedBudget]).
const MaxInflatedGridBytes = MaxGridBytes

// DecodeForm is the state of the decode form.
type DecodeForm struct {
	Hex     string
	Kind    string // "request" or "response"
	API     string // name or key, for responses
	Version string // for responses
	// ShowSecrets leaves SASL passwords and tokens in the decoded frames.
	ShowSecrets bool
}

// DecodeResult is one decoded (or undecodable) frame.
type DecodeResult struct {
	Index   int
	Summary string // one line: "request AlterConfigs v2, correlation id 0, 25 bytes"
	Kind    string
	API     string
	Version int16
	// CorrelationID and ClientID go back into the re-encode form.
	CorrelationID int32
	ClientID      *string
	Error         string
	// Warning and Note say what the decoder said of a frame it did not
	// (fully) decode, or read in a way that is not the obvious one.
	Warning, Note string
	// Candidates, for a response whose API is not known, are the APIs and
	// versions whose response schema decodes it cleanly and re-encodes it
	// byte for byte; CandidatesIncomplete says the search stopped at its
	// budget, CandidatesCapped at the most it lists.
	Candidates                             []report.Candidate
	CandidatesIncomplete, CandidatesCapped bool
	// AsResponse, for a request that did not decode, are the APIs and
	// versions whose response schema explains its bytes.
	AsResponse []report.Candidate
	Bytes      []byte
	// Tree is the frame's annotated tree over Bytes (report.Frame.SpanTree),
	// partial when decoding failed; nil when the header did not decode.
	// Inflated record batches are trees of their own (span.Tree.Detached).
	Tree *span.Tree
	// Body is the message body as indented JSON, editable and re-encodable;
	// empty when the frame did not decode.
	Body string
	// InflatedBudget, when set, is how many bytes of inflated records may
	// still be drawn as grids, shared by the results of one answer: each
	// inflated section drawn takes its bytes from it, and one that does
	// not fit is named with its size and left out (a few KB of compressed
	// batches inflate to a MiB, 80 MB of grid markup). Nil: every section
	// of at most MaxGridBytes is drawn.
	InflatedBudget *int
}

// DecodeInput is the data of the /decode/ page.
type DecodeInput struct {
	APIs    []string // names for the API field's suggestions
	Form    DecodeForm
	Error   string
	Results []DecodeResult
	// Static marks the page of a static export with the WebAssembly
	// decoder: with script, the form decodes in the browser.
	Static bool
	// MaxResults, when set, bounds the bytes of the results' markup: the
	// results past it are shown by their summary and notes, their grid,
	// tree, body and inflated records left out, and the page says so.
	MaxResults int
}

type decodeView struct {
	APIs     []string
	Form     DecodeForm
	Error    string
	Results  []template.HTML // each result as the "result" template writes it
	Response bool
	Static   bool
}

type decodeResultView struct {
	sectionView
	Summary       string
	Notes         []string // warning, note and candidates, one paragraph each
	Body          string
	API           string
	Version       int16
	CorrelationID int32
	ClientID      string
	ClientIDNull  bool
	TooLarge      bool
	// LeftOut shows the frame by its summary and notes alone (see
	// DecodeInput.MaxResults).
	LeftOut bool
	// Inflated holds the decompressed records of compressed batches, each
	// with its own grid (offsets within the inflated bytes) and tree.
	Inflated []*inflatedView
}

type inflatedView struct {
	sectionView
	Of string // path of the batch's records field
	// LeftOut is the size of inflated records left out of the answer
	// (see DecodeResult.InflatedBudget); Budget is what an answer draws.
	LeftOut, Budget int
}

func decodeResultViewOf(res *DecodeResult) *decodeResultView {
	v := &decodeResultView{Summary: clean(res.Summary), Body: clean(res.Body), API: clean(res.API), Version: res.Version,
		CorrelationID: res.CorrelationID}
	if res.ClientID != nil {
		v.ClientID = clean(*res.ClientID)
	} else {
		v.ClientIDNull = true
	}
	v.ID = fmt.Sprintf("f%d", res.Index)
	v.Kind = res.Kind
	v.Error = clean(res.Error)
	if res.Warning != "" {
		v.Notes = append(v.Notes, "warning: "+clean(res.Warning))
	}
	if res.Note != "" {
		v.Notes = append(v.Notes, "note: "+clean(res.Note))
	}
	if len(res.Candidates) > 0 {
		v.Notes = append(v.Notes, "candidates (decode cleanly and re-encode byte for byte): "+clean(report.CandidateNames(res.Candidates))+capText(res))
	}
	if len(res.AsResponse) > 0 {
		v.Notes = append(v.Notes, "it may be a response: as one it decodes cleanly and re-encodes as "+clean(report.CandidateNames(res.AsResponse)))
	}
	if len(res.Bytes) > MaxGridBytes {
		v.TooLarge = true
		v.Size = len(res.Bytes)
		return v
	}
	fillBytes(&v.sectionView, res.Bytes, res.Tree)
	t := res.Tree
	if t.Root() == span.None {
		return v
	}
	t.Walk(t.Root(), func(id span.ID, _ int) {
		d := t.Detached(id)
		if d == nil || len(d.Bytes) > MaxGridBytes {
			return
		}
		iv := &inflatedView{Of: clean(t.Path(id))}
		iv.ID = fmt.Sprintf("%s-z%d", v.ID, len(v.Inflated))
		iv.Kind = "inflated records"
		if b := res.InflatedBudget; b != nil {
			if len(d.Bytes) > *b {
				iv.LeftOut, iv.Budget = len(d.Bytes), MaxInflatedGridBytes
				v.Inflated = append(v.Inflated, iv)
				return
			}
			*b -= len(d.Bytes)
		}
		if d.Root() != span.None {
			if err := d.Err(d.Root()); err != nil {
				iv.Error = clean(err.Error())
			}
		}
		fillBytes(&iv.sectionView, d.Bytes, d)
		v.Inflated = append(v.Inflated, iv)
	})
	return v
}

// DecodePage writes the /decode/ page, with results when there are any.
func (r *Renderer) DecodePage(w io.Writer, in *DecodeInput) error {
	v := &decodeView{APIs: in.APIs, Form: in.Form, Error: clean(in.Error), Response: in.Form.Kind == "response", Static: in.Static}
	v.Form.Hex = clean(v.Form.Hex)
	size, cut := 0, -1
	for i := range in.Results {
		rv := decodeResultViewOf(&in.Results[i])
		var b bytes.Buffer
		if err := r.tmpl.ExecuteTemplate(&b, "result", rv); err != nil {
			return fmt.Errorf("rendering a decode result: %w", err)
		}
		if size += b.Len(); cut < 0 && in.MaxResults > 0 && size > in.MaxResults {
			cut = i
		}
		if cut >= 0 {
			rv.LeftOut = true
			b.Reset()
			if err := r.tmpl.ExecuteTemplate(&b, "result", rv); err != nil {
				return fmt.Errorf("rendering a decode result: %w", err)
			}
		}
		v.Results = append(v.Results, template.HTML(b.String()))
	}
	if cut >= 0 {
		msg := fmt.Sprintf("the page would be larger than %d bytes: the grids, trees and bodies of frames %d to %d are left out", in.MaxResults, cut, len(in.Results)-1)
		if v.Error != "" {
			msg = v.Error + "; " + msg
		}
		v.Error = msg
	}
	return r.exec(w, "decode", "Decode", "decode", v)
}

// DecodeFragment writes the markup of one result, as the decode page shows
// it (for the script to insert).
func (r *Renderer) DecodeFragment(w io.Writer, res *DecodeResult) error {
	var b bytes.Buffer
	if err := r.tmpl.ExecuteTemplate(&b, "result", decodeResultViewOf(res)); err != nil {
		return fmt.Errorf("rendering a decode result: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// capText says why the candidate search stopped early, if it did.
func capText(res *DecodeResult) string {
	switch {
	case res.CandidatesCapped:
		return fmt.Sprintf(" (the search stops at %d)", len(res.Candidates))
	case res.CandidatesIncomplete:
		return " (search stopped at its budget)"
	}
	return ""
}
