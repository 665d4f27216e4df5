// Package selector decides which frames of one decode run are shown
// (decode --filter) and names the topic ids they carry from the names
// earlier responses taught (topic ids are learnt in input order): it
// gathers each frame's facts (API, client id, topics, errors, latency),
// gives a response those of the request it answers, and counts what it
// hid.
package selector

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/filter"
	"github.com/manifester/manifester/internal/framefacts"
	"github.com/manifester/manifester/internal/report"
	"github.com/manifester/manifester/internal/schema"
	"github.com/manifester/manifester/internal/span"
	"github.com/manifester/manifester/internal/topicnames"
)

// Selector applies a filter and names topic ids for one decode run.
// AdmitEvent and AdmitReport take the frames in input order, on one
// goroutine; Annotate and AnnotateEarly may run on the decoding workers.
type Selector struct {
	codec *codec.Codec
	flt   *filter.Filter
	names *topicnames.Map
	// pending holds, per connection, the facts of requests awaiting their
	// response (in order: Kafka answers in order).
	pending map[int]*waiting
	// total frames looked at; shown of them matched; hiddenFailed of the
	// others did not decode.
	total, shown, hiddenFailed int
	// learnt counts the frames whose names changed names, when they are
	// learnt in the emit stage of decode --pcap (see LearnEmitted).
	learnt atomic.Int64
}

// waiting are the requests of one connection awaiting their response,
// in order, and how many of them have each correlation id (so that a
// response none of them answers is refused without looking at them all).
type waiting struct {
	q   []reqFacts
	ids map[int32]int
	// looked counts the requests looked at for an id (for tests: it
	// bounds the work).
	looked int64
}

func (w *waiting) forget(rf reqFacts) {
	if w.ids[rf.corr] <= 1 {
		delete(w.ids, rf.corr)
	} else {
		w.ids[rf.corr]--
	}
}

// reqFacts is what a response takes from its request.
type reqFacts struct {
	corr     int32
	clientID *string
	topics   []string
}

// errNoRequest marks a response whose request was not seen (so it is not
// decoded for its facts).
var errNoRequest = errors.New("no request seen")

// maxPendingFacts bounds the requests remembered per connection, as the
// capture reader bounds its pending table.
const maxPendingFacts = capture.DefaultMaxPending

// New returns the Selector of one decode run with codec c; a nil flt
// shows every frame.
func New(c *codec.Codec, flt *filter.Filter) *Selector {
	return &Selector{codec: c, flt: flt, names: topicnames.New(), pending: map[int]*waiting{}}
}

// AdmitEvent looks at one captured frame (index: its position in the
// output): with a filter, it learns topic names from responses that carry
// them and says whether the frame is to be shown. Without one, names are
// learnt from each frame's one decode, in the pipeline's ordered emit
// stage (LearnEmitted), and every frame is shown. r is the frame's
// report, decoded already with its Values (report.Options.Values), or
// nil: see AdmitDecoded.
func (s *Selector) AdmitEvent(ev *capture.Event, index int, r *report.Frame) bool {
	if r == nil {
		return s.AdmitDecoded(ev, index, nil, nil)
	}
	return s.AdmitDecoded(ev, index, r.Decoded, r.Err)
}

// DecodeEvent decodes a captured frame as the selector reads it, with
// its Values and no span tree: a request by its header, a response at
// its request's API and version as report.ResponseValues reads it (an
// ApiVersions answer read as v0, Kafka's rule), an error when its
// request was not seen or its API is unknown. It keeps no state: workers
// may call it.
func DecodeEvent(c *codec.Codec, ev *capture.Event) (*codec.Frame, error) {
	if ev.Dir != capture.ServerToClient {
		return c.DecodeRequest(ev.Data, codec.Options{})
	}
	if ev.Request != nil {
		if api, ok := c.Reg.API(ev.Request.APIKey); ok {
			return report.ResponseValues(c, ev.Data, api, ev.Request.Version)
		}
	}
	return nil, errNoRequest
}

// AdmitDecoded is AdmitEvent for a frame whose decode (f, err) was made
// already, by DecodeEvent or as part of the frame's report: when it
// decoded cleanly as the frame itself (not read at another version) its
// Values give the facts and the names; otherwise (f nil, or an error)
// the frame is decoded for them, as its partial values say.
func (s *Selector) AdmitDecoded(ev *capture.Event, index int, f *codec.Frame, err error) bool {
	if s.flt == nil {
		return true
	}
	resp := ev.Dir == capture.ServerToClient
	var api *schema.API
	if resp && ev.Request != nil {
		api, _ = s.codec.Reg.API(ev.Request.APIKey)
	}
	decoded := err == nil && f != nil && f.API != nil &&
		(!resp && f.Kind == schema.TypeRequest ||
			resp && api != nil && f.Kind == schema.TypeResponse && f.API == api && f.Version == ev.Request.Version)
	if !decoded {
		f, err = DecodeEvent(s.codec, ev)
	}
	if resp && err == nil {
		s.names.Learn(f, int64(index))
	}
	fr := filter.Frame{Kind: "request", Size: len(ev.Data)}
	facts := framefacts.Of(f, s.names.Resolver(int64(index)))
	fr.Topics, fr.Errors = facts.Topics, facts.Errors
	if !resp {
		if key, v, corr, ok := codec.PeekRequest(ev.Data); ok {
			fr.HasAPI, fr.APIKey, fr.Version, fr.CorrelationID = true, key, v, corr
			if a, ok := s.codec.Reg.API(key); ok {
				fr.API = a.Name
			}
		} else {
			fr.NoCorrelationID = true
		}
		if f != nil && f.HeaderVersion >= 1 && !f.ClientIDNull && f.ClientID != nil {
			id := string(f.ClientID)
			fr.ClientID = &id
		}
		s.pair(ev.Conn.ID, &fr)
	} else {
		fr.Kind = "response"
		var ok bool
		fr.CorrelationID, ok = codec.PeekCorrelationID(ev.Data)
		fr.NoCorrelationID = !ok
		if ev.Request != nil {
			fr.HasAPI, fr.APIKey, fr.Version = true, ev.Request.APIKey, ev.Request.Version
			if api != nil {
				fr.API = api.Name
			}
			lat := ev.Time.Sub(ev.Request.Time).Microseconds()
			fr.LatencyMicros = &lat
		}
		s.pair(ev.Conn.ID, &fr)
	}
	return s.count(&fr, err == nil)
}

// pair remembers a request's client id and topics on its connection, or
// gives a response those of the request it answers.
func (s *Selector) pair(conn int, fr *filter.Frame) {
	if fr.Kind == "request" {
		w := s.pending[conn]
		if w == nil {
			w = &waiting{ids: map[int32]int{}}
			s.pending[conn] = w
		}
		if len(w.q) >= maxPendingFacts {
			w.forget(w.q[0])
			w.q = w.q[1:]
		}
		w.q = append(w.q, reqFacts{corr: fr.CorrelationID, clientID: fr.ClientID, topics: fr.Topics})
		w.ids[fr.CorrelationID]++
		return
	}
	if rf, ok := s.answer(conn, fr.CorrelationID); ok {
		fr.ClientID = rf.clientID
		fr.Topics = mergeTopics(rf.topics, fr.Topics)
	}
}

// Forget drops what is remembered of connection conn's requests still
// awaiting a response: for a front end that runs without end (the proxy),
// once the connection has closed, so that its unanswered requests are not
// kept for ever.
func (s *Selector) Forget(conn int) {
	if s != nil {
		delete(s.pending, conn)
	}
}

// answer takes the facts of the request a response answers off its
// connection's queue, with those of earlier requests left unanswered.
func (s *Selector) answer(conn int, corr int32) (reqFacts, bool) {
	w := s.pending[conn]
	if w == nil || w.ids[corr] == 0 {
		return reqFacts{}, false
	}
	for i, rf := range w.q {
		w.looked++
		if rf.corr == corr {
			if i+1 == len(w.q) {
				delete(s.pending, conn) // nothing left waiting
			} else {
				for _, passed := range w.q[:i+1] {
					w.forget(passed)
				}
				w.q = w.q[i+1:]
			}
			return rf, true
		}
	}
	return reqFacts{}, false
}

func (s *Selector) count(fr *filter.Frame, decoded bool) bool {
	s.total++
	if s.flt.Match(fr) {
		s.shown++
		return true
	}
	if !decoded {
		s.hiddenFailed++
	}
	return false
}

// mergeTopics returns a's topics, then those of b that a has not, in
// linear time: a request and its response may each name tens of
// thousands of topics (comparing every pair took seconds).
func mergeTopics(a, b []string) []string {
	if len(a) == 0 {
		return b
	}
	out := append([]string(nil), a...)
	if len(b) == 0 {
		return out
	}
	inA := make(map[string]struct{}, len(a))
	for _, x := range a {
		inA[x] = struct{}{}
	}
	for _, t := range b {
		if _, dup := inA[t]; !dup {
			out = append(out, t)
		}
	}
	return out
}

// AdmitReport does for a frame of hex, file or stdin input (decoded
// already, in order, at position index) what AdmitEvent does for a
// captured one, and annotates its topic ids.
func (s *Selector) AdmitReport(r *report.Frame, index int) bool {
	return s.AdmitReportOn(r, index, -1)
}

// AdmitReportOn is AdmitReport for a frame of connection conn (a proxy
// log's "conn"): responses match with their request's client id and
// topics. conn < 0: no connection.
func (s *Selector) AdmitReportOn(r *report.Frame, index, conn int) bool {
	s.Annotate(r, index)
	if r.Decoded != nil && r.Decoded.API != nil && r.Kind == "response" && r.Error == "" {
		s.names.LearnTree(r.SpanTree(), r.Decoded.API.Response, r.Decoded.Version, int64(index))
	}
	if s.flt == nil {
		return true
	}
	fr := filter.Frame{Kind: r.Kind, HasAPI: r.Decoded != nil && r.Decoded.API != nil, APIKey: r.APIKey, API: r.API,
		Version: r.Version, CorrelationID: r.CorrelationID, NoCorrelationID: !r.Known(report.FactCorrelationID),
		ClientID: r.ClientID, LatencyMicros: r.LatencyMicros, Size: r.Size}
	facts := framefacts.OfTree(r.SpanTree(), s.names.Resolver(int64(index)))
	fr.Topics, fr.Errors = facts.Topics, facts.Errors
	if conn >= 0 {
		s.pair(conn, &fr)
	}
	return s.count(&fr, r.Error == "")
}

// annotate names the frame's topic ids learnt before its position (notes
// on its tree).
func (s *Selector) Annotate(r *report.Frame, index int) {
	if s != nil {
		s.names.Annotate(r.SpanTree(), int64(index))
	}
}

// AnnotateEarly is Annotate for a frame decoded on a worker of decode
// --pcap while frames before it may still be Teaching names (in the emit
// stage, LearnEmitted): it returns the learnt count the annotation saw
// and the frame's number of topic-id rows, so that the emit stage can
// tell whether the frame must be annotated (and written) again.
func (s *Selector) AnnotateEarly(r *report.Frame, index int) (seen int64, rows int) {
	seen = s.learnt.Load()
	_, rows = s.names.AnnotateRows(r.SpanTree(), int64(index))
	return seen, rows
}

// Reannotate names the topic ids of a frame annotated early (see
// AnnotateEarly) again, in the emit stage, once every frame before it
// has taught its names: the notes the early annotation put on its
// topic-id rows (the decoder puts none there) are taken off first, so
// that the tree is annotated as a fresh decode's would be.
func (s *Selector) Reannotate(r *report.Frame, index int) {
	t := r.SpanTree()
	if t == nil {
		return
	}
	for id := span.ID(0); int(id) < t.Len(); id++ {
		if n := t.N(id); n.Val != span.ValUUID || n.Aux == 0 {
			continue
		}
		if f := t.Desc(id).Field; f != nil && framefacts.IsTopicID(f) {
			t.Extra(id, true).Note = ""
		}
	}
	s.names.AnnotateRows(t, int64(index))
}

// Filters reports whether the run has a filter (a nil Selector has
// none). Without one every frame is shown, and topic names are learnt in
// the emit stage (LearnEmitted); with one, AdmitEvent learns them in
// input order.
func (s *Selector) Filters() bool { return s != nil && s.flt != nil }

// Learnt is the number of frames whose names changed the names known,
// learnt in the emit stage (LearnEmitted): a frame annotated early (see
// AnnotateEarly) saw every name if Learnt is still what it saw.
func (s *Selector) Learnt() int64 { return s.learnt.Load() }

// Teaching returns the response message and version whose names a
// cleanly decoded frame teaches (nil when it teaches none).
func (s *Selector) Teaching(r *report.Frame) (*schema.Message, int16) {
	if r.Kind != "response" || r.Error != "" || r.Decoded == nil || r.Decoded.API == nil {
		return nil, 0
	}
	msg, v := r.Decoded.API.Response, r.Decoded.Version
	if !s.names.Teaches(msg, v) {
		return nil, 0
	}
	return msg, v
}

// LearnEmitted learns the names a frame's tree teaches, at its position,
// in capture order (from the emit stage).
func (s *Selector) LearnEmitted(t *span.Tree, msg *schema.Message, v int16, index int) {
	if s.names.LearnTree(t, msg, v, int64(index)) > 0 {
		s.learnt.Add(1)
	}
}

// Summary says how many frames the filter showed, and how many of the
// hidden ones did not decode (they do not count for the exit status).
func (s *Selector) Summary(w io.Writer) { s.SummaryAs(w, "decode", "shown") }

// SummaryAs is Summary for the command named cmd (as in "manifester
// proxy: ..."), which does with the frames admitted what done says
// ("shown", "counted").
func (s *Selector) SummaryAs(w io.Writer, cmd, done string) {
	if !s.Filters() {
		return
	}
	fmt.Fprintf(w, "manifester %s: --filter %q: %d of %d frames %s", cmd, s.flt.String(), s.shown, s.total, done)
	if s.hiddenFailed > 0 {
		fmt.Fprintf(w, "; %d of the frames not %s did not decode", s.hiddenFailed, done)
	}
	fmt.Fprintln(w)
}
