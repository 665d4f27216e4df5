package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/manifester/manifester/internal/budget"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/frameflow"
	"github.com/manifester/manifester/internal/hexin"
	"github.com/manifester/manifester/internal/redact"
	htmlr "github.com/manifester/manifester/internal/render/html"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/site"
)

// Limits of the decode handlers.
const (
	// MaxDecodeBody is the largest request body the decode handlers read;
	// larger ones get 413.
	MaxDecodeBody = 1 << 20
	// MaxDecodeFrames is the most frames one decode answers.
	MaxDecodeFrames = 64
)

// Decoder answers the decode page and its API:
//
//	POST /decode/      form post (works without script): the page with results
//	POST /api/decode   {"hex", "kind", "api", "version"} -> {"frames": [...]}
//	POST /api/encode   {"kind", "api", "version", "correlation_id",
//	                    "client_id", "body"} -> {"frames": [...]}
//
// Each answered frame is the report of package report (kind, API, version,
// error with offset and path, tree, body JSON, hex) plus "html", the
// frame's byte grid and tree as the page shows them.
type Decoder struct {
	Codec    *codec.Codec
	Renderer *htmlr.Renderer
	// Limits are each request's budget (zero: DecodeLimits).
	Limits *budget.Limits
	// MaxConcurrent caps the requests decoded at once (zero:
	// MaxConcurrentDecodes()); MaxQueued more may wait at most QueueWait
	// for a slot (zero: MaxQueuedDecodes, QueueWait), the others are
	// answered 503 with Retry-After. Timeout bounds each request's work
	// (zero: DecodeTimeout). Set them before serving.
	MaxConcurrent int
	// MaxAnswer bounds an answer's bytes (zero: the MaxAnswer constant).
	MaxAnswer int
	MaxQueued int
	QueueWait time.Duration
	Timeout   time.Duration
	// MaxPending bounds the bytes of answers waiting for their clients
	// at once (zero: MaxPendingAnswers).
	MaxPending int
	// MaxBodies bounds the bytes of request bodies being read or worked
	// on at once (zero: MaxBodiesInFlight).
	MaxBodies int

	once    sync.Once
	gate    // the decode slots and their queue
	pending atomic.Int64
	bodies  byteBudget
}

func (d *Decoder) limits() budget.Limits {
	if d.Limits != nil {
		return *d.Limits
	}
	return DecodeLimits
}

// RegisterDecode adds the decode handlers of the site's newest release to s.
func RegisterDecode(s *Server, st *site.Site) *Decoder {
	d := &Decoder{Codec: st.Newest().Codec, Renderer: st.Renderer}
	s.Handle("POST "+site.DecodePath, http.HandlerFunc(d.servePage))
	s.Handle("POST /api/decode", http.HandlerFunc(d.serveDecodeAPI))
	s.Handle("POST /api/encode", http.HandlerFunc(d.serveEncodeAPI))
	s.Handle("/api/", http.HandlerFunc(serveAPIMethod))
	return d
}

// requestError is a problem with the client's input (400).
type requestError struct{ msg string }

func (e *requestError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &requestError{fmt.Sprintf(format, args...)}
}

// DecodeRequest is the JSON body of POST /api/decode.
type DecodeRequest struct {
	Hex     string `json:"hex"`
	Kind    string `json:"kind"`              // "request" (default) or "response"
	API     string `json:"api,omitempty"`     // name or key; responses only
	Version *int   `json:"version,omitempty"` // responses only
	// ShowSecrets leaves SASL auth bytes as they are; by default they are
	// redacted, as decode redacts them (see package redact).
	ShowSecrets bool `json:"show_secrets,omitempty"`
}

// EncodeRequest is the JSON body of POST /api/encode.
type EncodeRequest struct {
	Kind          string          `json:"kind"`
	API           string          `json:"api"`
	Version       int             `json:"version"`
	CorrelationID int32           `json:"correlation_id"`
	ClientID      *string         `json:"client_id"` // null for a null client id
	Body          json.RawMessage `json:"body"`
	// Index numbers the answered frame (its element ids), so that a page
	// can replace frame N with its re-encoding.
	Index int `json:"index,omitempty"`
}

// Answer is the JSON answer of the decode API.
type Answer struct {
	Frames []AnswerFrame `json:"frames,omitempty"`
	Error  string        `json:"error,omitempty"`
}

// AnswerFrame is one frame's report with its rendered grid and tree.
type AnswerFrame struct {
	*report.Frame
	HTML string `json:"html"`
}

func parseKind(s string) (schema.MessageType, error) {
	switch s {
	case "", "request":
		return schema.TypeRequest, nil
	case "response":
		return schema.TypeResponse, nil
	}
	return 0, badRequest("kind %q: want request or response", s)
}

// lookup resolves an API and version for a response (or an encode).
func (d *Decoder) lookup(apiArg string, version int, haveVersion bool) (*schema.API, int16, error) {
	if strings.TrimSpace(apiArg) == "" {
		return nil, 0, badRequest("a response does not name its API: give the API (name or key) and version")
	}
	api, err := d.Codec.Reg.Lookup(apiArg)
	if err != nil {
		return nil, 0, &requestError{err.Error()}
	}
	if api.Reserved() {
		return nil, 0, badRequest("%s (key %d) is reserved: it has no valid versions", api.Name, api.Key)
	}
	if !haveVersion {
		return nil, 0, badRequest("give the version of the %s response", api.Name)
	}
	if version < 0 || version > 32767 || !api.Request.Valid.Contains(int16(version)) {
		return nil, 0, badRequest("%s has no version %d; valid versions are %s", api.Name, version, api.Request.Valid)
	}
	return api, int16(version), nil
}

// Decode decodes every frame of a hex input.
func (d *Decoder) Decode(in DecodeRequest) ([]*report.Frame, error) {
	return d.DecodeContext(context.Background(), in)
}

// DecodeContext decodes every frame of a hex input under one budget (see
// Limits), stopping when ctx is done.
func (d *Decoder) DecodeContext(ctx context.Context, in DecodeRequest) ([]*report.Frame, error) {
	kind, err := parseKind(in.Kind)
	if err != nil {
		return nil, err
	}
	opts := report.Options{Kind: kind, Roundtrip: true, MaybeResponse: kind == schema.TypeRequest}
	// A response given without its API is reported with the APIs and
	// versions that explain it (report.Unnamed).
	if kind == schema.TypeResponse && (strings.TrimSpace(in.API) != "" || in.Version != nil) {
		v := -1
		if in.Version != nil {
			v = *in.Version
		}
		if opts.API, opts.Version, err = d.lookup(in.API, v, in.Version != nil); err != nil {
			return nil, err
		}
	}
	b, err := hexin.ParseMax(in.Hex, MaxSqueezedHex)
	if err != nil {
		return nil, &requestError{err.Error()}
	}
	if len(b) == 0 {
		return nil, badRequest("no bytes: paste a frame as hex")
	}
	opts.Ctx, opts.Budget = ctx, d.limits().For(ctx, len(b))
	var out []*report.Frame
	// The frames are one connection's, in order: a SaslHandshake names the
	// mechanism of the SaslAuthenticate frames after it.
	sec := redact.NewStream(in.ShowSecrets)
	decode := func(b []byte) *report.Frame { return sec.Decode(d.Codec, b, opts) }
	i := -1
	var searches report.Searches
	for piece := range frameflow.All(b) { // frames past the limit are never framed
		i++
		if i == MaxDecodeFrames {
			return out, badRequest("only the first %d frames are decoded", MaxDecodeFrames)
		}
		if i > 0 && ctx.Err() != nil {
			return out, fmt.Errorf("decoding stopped after %d frames: %w", i, context.Cause(ctx))
		}
		// As the CLI does: the first frames that fail search every
		// response schema in full, later ones in proportion to their size.
		opts.LeanSearch = searches.Lean()
		f := frameflow.Decode(i, piece, decode)
		searches.Count(f)
		out = append(out, f)
	}
	return out, nil
}

// Encode encodes a body given as JSON into a frame and reports on it.
func (d *Decoder) Encode(in EncodeRequest) (*report.Frame, error) {
	return d.EncodeContext(context.Background(), in)
}

// EncodeContext is Encode under the request budget, stopping when ctx is
// done. A frame larger than MaxEncodedFrame is refused.
func (d *Decoder) EncodeContext(ctx context.Context, in EncodeRequest) (*report.Frame, error) {
	kind, err := parseKind(in.Kind)
	if err != nil {
		return nil, err
	}
	api, v, err := d.lookup(in.API, in.Version, true)
	if err != nil {
		return nil, err
	}
	body := in.Body
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	msg := frameflow.Message{Kind: kind, API: api, Version: v, CorrelationID: in.CorrelationID, ClientID: in.ClientID, Body: body}
	b, err := frameflow.Encode(d.Codec, msg)
	if err != nil {
		return nil, &requestError{err.Error()}
	}
	if len(b) > MaxEncodedFrame {
		m := msg.Schema()
		return nil, &requestError{fmt.Sprintf("%s v%d: the encoded frame is %d bytes, larger than the %d this page answers", m.Name, v, len(b), MaxEncodedFrame)}
	}
	opts := msg.Options(report.Options{Roundtrip: true, Ctx: ctx, Budget: d.limits().For(ctx, len(b))})
	rep := report.Decode(d.Codec, b, opts)
	rep.Index = max(in.Index, 0)
	return rep, nil
}

// Result converts a report into what the page renders.
func Result(f *report.Frame) htmlr.DecodeResult {
	res := htmlr.DecodeResult{Index: f.Index, Summary: f.Summary(), Kind: f.Kind, API: f.API, Version: f.Version,
		CorrelationID: f.CorrelationID, ClientID: f.ClientID, Error: f.Error, Warning: f.Warning, Note: f.Note,
		Candidates: f.Candidates, CandidatesIncomplete: f.CandidatesIncomplete, CandidatesCapped: f.CandidatesCapped(),
		AsResponse: f.AsResponse, Bytes: f.Bytes, Tree: f.SpanTree()}
	if f.Budget != "" {
		// Said on the page too, not only in the tree's flags.
		res.Summary += "; budget: " + f.Budget
	}
	if res.API == "" {
		res.API = strconv.Itoa(int(f.APIKey))
	}
	if f.Kind == "response" {
		// A response carries no client id; keep the re-encode form's
		// field empty rather than null.
		empty := ""
		res.ClientID = &empty
	}
	if len(f.Body) > 0 {
		var buf bytes.Buffer
		if json.Indent(&buf, f.Body, "", "  ") == nil {
			res.Body = buf.String()
		}
	}
	return res
}

// readBody reads at most MaxDecodeBody bytes of the request body, with
// room for them taken first in the budget of bodies (see MaxBodies). A
// body that announces more than MaxDecodeBody is refused (413), and one
// that finds no room (503, errBodies), before any of it is read. done
// gives the room back: call it once the handler is done with the bytes
// and what it decoded from them (when there is an error, the room is
// given back already and done does nothing).
func (d *Decoder) readBody(w http.ResponseWriter, r *http.Request) (b []byte, done func(), status int, err error) {
	if r.ContentLength > MaxDecodeBody {
		return nil, noop, http.StatusRequestEntityTooLarge, fmt.Errorf("request body of %d bytes is larger than %d", r.ContentLength, MaxDecodeBody)
	}
	done, ok := d.takeBody(r)
	if !ok {
		return nil, noop, http.StatusServiceUnavailable, errBodies
	}
	b, err = io.ReadAll(http.MaxBytesReader(w, r.Body, MaxDecodeBody))
	if err != nil {
		done()
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, noop, http.StatusRequestEntityTooLarge, fmt.Errorf("request body is larger than %d bytes", MaxDecodeBody)
		}
		return nil, noop, http.StatusBadRequest, fmt.Errorf("reading the request: %w", err)
	}
	return b, done, 0, nil
}

func noop() {}

var hJSON = []string{"application/json"}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"encoding the answer failed"}`)
	}
	writeJSONBytes(w, status, b)
}

// writeJSONBytes writes an answer's JSON.
func writeJSONBytes(w http.ResponseWriter, status int, b []byte) {
	w.Header()["Content-Type"] = hJSON
	w.Header()["Cache-Control"] = hNoCache
	w.WriteHeader(status)
	w.Write(b)
}

func isJSON(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// decodeJSON reads a JSON API request into v, answering the error
// itself. done gives back the room of the body (see readBody).
func (d *Decoder) decodeJSON(w http.ResponseWriter, r *http.Request, v any) (done func(), ok bool) {
	if !isJSON(r) {
		writeJSON(w, http.StatusUnsupportedMediaType, Answer{Error: "send application/json"})
		return nil, false
	}
	b, done, status, err := d.readBody(w, r)
	switch {
	case errors.Is(err, errBodies):
		busy(w, err)
		return nil, false
	case err != nil:
		writeJSON(w, status, Answer{Error: err.Error()})
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		done()
		writeJSON(w, http.StatusBadRequest, Answer{Error: "bad JSON request: " + err.Error()})
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		done()
		writeJSON(w, http.StatusBadRequest, Answer{Error: fmt.Sprintf("bad JSON request: more after the request object, at byte %d", dec.InputOffset())})
		return nil, false
	}
	return done, true
}

// answer builds the JSON answer of fs and err and its status.
func (d *Decoder) answer(fs []*report.Frame, err error) (int, []byte) {
	_, status, b := d.build(fs, err, false)
	return status, b
}

// summaries are answer frames without markup or tree.
func summaries(fs []*report.Frame) []AnswerFrame {
	out := make([]AnswerFrame, len(fs))
	for i, f := range fs {
		c := *f
		c.Body, c.Hex = nil, ""
		c.Decoded, c.Spans = nil, nil // no tree in the JSON either
		out[i] = AnswerFrame{Frame: &c}
	}
	return out
}

func (d *Decoder) serveDecodeAPI(w http.ResponseWriter, r *http.Request) {
	var in DecodeRequest
	bodyDone, ok := d.decodeJSON(w, r, &in)
	if !ok {
		return
	}
	d.work(w, r, bodyDone, func(ctx context.Context) func() (int, []byte) {
		fs, err := d.DecodeContext(ctx, in)
		return func() (int, []byte) { return d.answer(fs, err) }
	})
}

func (d *Decoder) serveEncodeAPI(w http.ResponseWriter, r *http.Request) {
	var in EncodeRequest
	bodyDone, ok := d.decodeJSON(w, r, &in)
	if !ok {
		return
	}
	d.work(w, r, bodyDone, func(ctx context.Context) func() (int, []byte) {
		f, err := d.EncodeContext(ctx, in)
		if err != nil {
			return func() (int, []byte) { return d.answer(nil, err) }
		}
		return func() (int, []byte) { return d.answer([]*report.Frame{f}, nil) }
	})
}

// validUTF8 replaces invalid UTF-8 in s with U+FFFD.
func validUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// servePage answers the form post of the /decode/ page with the whole page.
func (d *Decoder) servePage(w http.ResponseWriter, r *http.Request) {
	// The body arrives at the client's pace: read it before taking a
	// decode slot, which is for the work only (as the JSON API does).
	b, bodyDone, status, err := d.readBody(w, r)
	if errors.Is(err, errBodies) {
		pageBusy(w, err)
		return
	}
	defer bodyDone()
	if err == nil {
		r.Body = io.NopCloser(bytes.NewReader(b))
		if perr := r.ParseForm(); perr != nil {
			status, err = http.StatusBadRequest, perr
		}
	}
	if !d.acquire(r.Context()) {
		pageBusy(w, errBusy)
		return
	}
	status, page, err := d.renderPage(r, status, err)
	bodyDone() // the form is decoded and rendered: the answer is written without its room
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	// Written after the slot is released: a client that reads slowly
	// holds its connection, not the decoding.
	done, ok := d.hold(len(page))
	if !ok {
		pageBusy(w, errPending)
		return
	}
	defer done()
	w.Header()["Content-Type"] = hHTML
	w.Header()["Cache-Control"] = hNoCache
	w.Header().Set("Content-Length", strconv.Itoa(len(page)))
	w.WriteHeader(status)
	w.Write(page)
}

// pageBusy answers a page request (the form post, a page rendered on
// demand) 503 with Retry-After.
func pageBusy(w http.ResponseWriter, err error) {
	w.Header().Set("Retry-After", strconv.Itoa(RetryAfter))
	http.Error(w, "503 "+err.Error(), http.StatusServiceUnavailable)
}

// renderPage decodes or encodes what the form r asks for (its body read
// and parsed, or err why not, with its status) with the decode slot the
// caller acquired, which it releases, and renders the page: its status
// and bytes, or an error rendering it.
func (d *Decoder) renderPage(r *http.Request, status int, err error) (int, []byte, error) {
	defer d.release()
	ctx, cancel := context.WithTimeout(r.Context(), d.Timeout)
	defer cancel()
	in := &htmlr.DecodeInput{APIs: site.APINames(d.Codec.Reg), Form: htmlr.DecodeForm{Kind: "request"}}
	var results []*report.Frame
	if err == nil {
		f := r.PostForm
		// The form is echoed into the page: keep the fields valid UTF-8
		// (the renderer cleans Hex itself).
		in.Form = htmlr.DecodeForm{Hex: f.Get("hex"), Kind: validUTF8(f.Get("kind")), API: validUTF8(f.Get("api")), Version: validUTF8(f.Get("version")),
			ShowSecrets: f.Get("show_secrets") != ""}
		if in.Form.Kind == "" {
			in.Form.Kind = "request"
		}
		switch f.Get("op") {
		case "encode":
			v, verr := strconv.Atoi(f.Get("version"))
			corr, cerr := strconv.ParseInt(f.Get("correlation_id"), 10, 32)
			if verr != nil || cerr != nil {
				err = badRequest("version and correlation_id must be numbers")
				break
			}
			er := EncodeRequest{Kind: in.Form.Kind, API: in.Form.API, Version: v, CorrelationID: int32(corr), Body: json.RawMessage(f.Get("body"))}
			if f.Get("client_id_null") == "" {
				c := f.Get("client_id")
				er.ClientID = &c
			}
			var rep *report.Frame
			if rep, err = d.EncodeContext(ctx, er); rep != nil {
				results = append(results, rep)
				in.Form.Hex = rep.Hex
			}
		default:
			dr := DecodeRequest{Hex: in.Form.Hex, Kind: in.Form.Kind, API: in.Form.API, ShowSecrets: in.Form.ShowSecrets}
			if s := strings.TrimSpace(in.Form.Version); s != "" {
				v, verr := strconv.Atoi(s)
				if verr != nil {
					err = badRequest("version %q is not a number", s)
					break
				}
				dr.Version = &v
			}
			results, err = d.DecodeContext(ctx, dr)
		}
		status = http.StatusOK
		var re *requestError
		if err != nil && errors.As(err, &re) && len(results) == 0 {
			status = http.StatusBadRequest
		}
	}
	if err != nil {
		in.Error = err.Error()
	}
	in.MaxResults = MaxAnswer
	if d.MaxAnswer > 0 {
		in.MaxResults = d.MaxAnswer
	}
	inflated := htmlr.MaxInflatedGridBytes // shared by the frames
	for _, f := range results {
		res := Result(f)
		res.InflatedBudget = &inflated
		in.Results = append(in.Results, res)
	}
	var buf bytes.Buffer
	if rerr := d.Renderer.DecodePage(&buf, in); rerr != nil {
		return 0, nil, rerr
	}
	return status, buf.Bytes(), nil
}
