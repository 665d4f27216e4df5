// Package stats summarises Kafka traffic: per API and version the requests,
// responses, requests left unanswered, bytes each way, the latency from
// request to response (p50, p99 and maximum) and the error codes the
// responses carried; per connection its endpoints, client id and frames.
//
// An [Aggregator] consumes one [Record] per frame, in capture order, from
// the capture pipeline (`manifester stats --pcap`) or from the JSON lines
// of `decode --pcap --format json` and of the proxy's log ([ReadJSONLines]);
// [Aggregator.Summary] computes the figures, which [Summary.WriteText],
// [Summary.WriteJSON] and [Summary.WriteHTML] render.
//
// # Percentiles
//
// Latency percentiles use the nearest-rank method: with the N latencies of
// an API version sorted in increasing order, the p-th percentile is the
// value at rank ceil(p/100 × N) (counting from 1). It is always one of the
// measured latencies; p50 of 1..100 µs is 50 µs, p99 is 99 µs.
package stats

import (
	"container/heap"
	"sort"

	"github.com/manifester/manifester/internal/span"
)

// Record is one frame.
type Record struct {
	// Conn identifies the frame's connection within the input (an id, or
	// any other key unique per connection); connections are numbered in
	// the order they first appear.
	Conn string
	// Client and Server are the connection's endpoints ("10.0.0.1:51000").
	Client, Server string
	// Response is true for a response.
	Response bool
	// Paired is true for a response whose request was seen: APIKey and
	// Version are then the request's. A response that is not paired is
	// counted apart (its API is unknown).
	Paired  bool
	APIKey  int16
	API     string // the API's name ("" when unknown)
	Version int16
	// ClientID is a request's client id (nil when null or absent).
	ClientID *string
	// Size is the frame's size, size prefix included.
	Size int
	// LatencyMicros is a paired response's time since its request.
	LatencyMicros int64
	// Errors are the error codes anywhere in a response (0s included;
	// they are not counted).
	Errors []int16
	// Undecoded marks a paired response that did not decode: its error
	// codes are unknown.
	Undecoded bool
}

// Aggregator accumulates records. The zero value is not ready: use [New].
type Aggregator struct {
	apis     map[apiKey]*apiAcc
	conns    map[string]*ConnStats
	unpaired int64
	// seen numbers connections as they first appear; max bounds the
	// connections listed (0: all).
	seen int
	max  int
	// done are the listed connections that have ended ([Aggregator.Close]),
	// a heap with the one least worth listing on top; omitted sums the
	// ended connections that did not make the list.
	done    connHeap
	omitted Omitted
}

// DefaultMaxConns is how many connections a summary lists by default: those
// with the most frames.
const DefaultMaxConns = 1000

// Omitted sums the connections a summary does not list.
type Omitted struct {
	Connections int64 `json:"connections"`
	Frames      int64 `json:"frames"`
	Unpaired    int64 `json:"unpaired_responses,omitempty"`
}

func (o *Omitted) add(c *ConnStats) {
	o.Connections++
	o.Frames += c.Frames
	o.Unpaired += c.Unpaired
}

// worse reports whether a is less worth listing than b: fewer frames, or
// as many and first seen later.
func worse(a, b *ConnStats) bool {
	if a.Frames != b.Frames {
		return a.Frames < b.Frames
	}
	return a.ID > b.ID
}

// connHeap is a min-heap of connections by worse (container/heap's).
type connHeap []*ConnStats

func (h connHeap) Len() int           { return len(h) }
func (h connHeap) Less(i, j int) bool { return worse(h[i], h[j]) }
func (h connHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *connHeap) Push(x any)        { *h = append(*h, x.(*ConnStats)) }
func (h *connHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

type apiKey struct {
	key, version int16
}

type apiAcc struct {
	name                string
	requests, responses int64
	reqBytes, respBytes int64
	undecoded           int64
	latencies           []int64
	errors              map[string]int64
}

// New returns an empty aggregator that lists every connection.
func New() *Aggregator {
	return &Aggregator{apis: map[apiKey]*apiAcc{}, conns: map[string]*ConnStats{}}
}

// NewListing returns an empty aggregator whose summary lists at most max
// connections (0: all): those with the most frames (the first seen among
// equals); the others are summed in [Summary.Omitted]. Connections that
// end ([Aggregator.Close]) and do not make the list are kept as that sum
// only, so that with a source that says when connections end (a
// capture), memory is bounded by the connections open at once and max.
func NewListing(max int) *Aggregator {
	a := New()
	a.max = max
	return a
}

// Close says that connection conn has ended: no record of it follows.
func (a *Aggregator) Close(conn string) {
	c := a.conns[conn]
	if c == nil {
		return
	}
	delete(a.conns, conn)
	if a.max <= 0 {
		a.done = append(a.done, c)
		return
	}
	heap.Push(&a.done, c)
	if len(a.done) > a.max {
		a.omitted.add(heap.Pop(&a.done).(*ConnStats))
	}
}

// Add counts one frame.
func (a *Aggregator) Add(r *Record) {
	c := a.conns[r.Conn]
	if c == nil {
		a.seen++
		c = &ConnStats{ID: a.seen, Client: r.Client, Server: r.Server}
		a.conns[r.Conn] = c
	}
	c.Frames++
	if !r.Response && c.ClientID == nil && r.ClientID != nil {
		id := *r.ClientID
		c.ClientID = &id
	}
	if r.Response && !r.Paired {
		a.unpaired++
		c.Unpaired++
		return
	}
	k := apiKey{r.APIKey, r.Version}
	acc := a.apis[k]
	if acc == nil {
		acc = &apiAcc{errors: map[string]int64{}}
		a.apis[k] = acc
	}
	if acc.name == "" {
		acc.name = r.API
	}
	if !r.Response {
		acc.requests++
		acc.reqBytes += int64(r.Size)
		return
	}
	acc.responses++
	acc.respBytes += int64(r.Size)
	acc.latencies = append(acc.latencies, max(r.LatencyMicros, 0))
	if r.Undecoded {
		acc.undecoded++
	}
	for _, e := range r.Errors {
		if e != 0 {
			acc.errors[span.ErrorName(e)]++
		}
	}
}

// Summary is the result: its JSON form is the output of `stats --format
// json`.
type Summary struct {
	APIs        []APIStats  `json:"apis"`
	Connections []ConnStats `json:"connections"`
	// Omitted sums the connections not listed (see [NewListing]); absent
	// when every connection is listed.
	Omitted *Omitted `json:"connections_omitted,omitempty"`
	// UnpairedResponses are responses whose request was not seen (their
	// API and version are unknown, so they are in no API's figures).
	UnpairedResponses int64 `json:"unpaired_responses"`
}

// APIStats are the figures of one API version.
type APIStats struct {
	APIKey  int16  `json:"api_key"`
	Name    string `json:"name"`
	Version int16  `json:"version"`
	// Requests seen; Responses paired with them; Unanswered requests
	// with no response seen (acks=0 produce, or cut off by the capture).
	Requests   int64 `json:"requests"`
	Responses  int64 `json:"responses"`
	Unanswered int64 `json:"unanswered"`
	Bytes      Bytes `json:"bytes"`
	// Latency is nil when no response was paired.
	Latency *Latency `json:"latency_us"`
	// Errors counts the non-zero error codes in the responses, by name:
	// a response with two partitions failing counts two.
	Errors map[string]int64 `json:"errors"`
	// Undecoded counts the responses that did not decode (so their error
	// codes are not in Errors); absent when 0.
	Undecoded int64 `json:"undecoded,omitempty"`
	// Latencies are the paired responses' latencies, sorted (for the
	// histogram).
	Latencies []int64 `json:"-"`
}

// Bytes are the bytes of the frames each way, size prefixes included.
type Bytes struct {
	Request  int64 `json:"request"`
	Response int64 `json:"response"`
}

// Latency holds nearest-rank percentiles, in microseconds.
type Latency struct {
	P50 int64 `json:"p50"`
	P99 int64 `json:"p99"`
	Max int64 `json:"max"`
}

// ConnStats are the figures of one connection.
type ConnStats struct {
	ID     int    `json:"id"`
	Client string `json:"client"`
	Server string `json:"server"`
	// ClientID is the first client id its requests carried.
	ClientID *string `json:"client_id"`
	Frames   int64   `json:"frames"`
	// Unpaired counts its responses whose request was not seen.
	Unpaired int64 `json:"unpaired_responses,omitempty"`
}

// Summary computes the figures of the records added so far.
func (a *Aggregator) Summary() *Summary {
	s := &Summary{APIs: []APIStats{}, Connections: []ConnStats{}, UnpairedResponses: a.unpaired}
	keys := make([]apiKey, 0, len(a.apis))
	for k := range a.apis {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].key != keys[j].key {
			return keys[i].key < keys[j].key
		}
		return keys[i].version < keys[j].version
	})
	for _, k := range keys {
		acc := a.apis[k]
		st := APIStats{APIKey: k.key, Name: acc.name, Version: k.version, Requests: acc.requests, Responses: acc.responses,
			Unanswered: max(acc.requests-acc.responses, 0), Bytes: Bytes{acc.reqBytes, acc.respBytes}, Errors: map[string]int64{}, Undecoded: acc.undecoded}
		for n, c := range acc.errors {
			st.Errors[n] = c
		}
		if len(acc.latencies) > 0 {
			lat := append([]int64(nil), acc.latencies...)
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			st.Latencies = lat
			st.Latency = &Latency{P50: Percentile(lat, 50), P99: Percentile(lat, 99), Max: lat[len(lat)-1]}
		}
		s.APIs = append(s.APIs, st)
	}
	// The connections still open and those ended that made the list; of
	// them, the max most worth listing, in the order they first appeared.
	all := make([]*ConnStats, 0, len(a.conns)+len(a.done))
	for _, c := range a.conns {
		all = append(all, c)
	}
	all = append(all, a.done...)
	omitted := a.omitted
	if a.max > 0 && len(all) > a.max {
		sort.Slice(all, func(i, j int) bool { return worse(all[j], all[i]) })
		for _, c := range all[a.max:] {
			omitted.add(c)
		}
		all = all[:a.max]
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	for _, c := range all {
		s.Connections = append(s.Connections, *c)
	}
	if omitted.Connections > 0 {
		s.Omitted = &omitted
	}
	return s
}

// Percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method: the value at rank ceil(p/100 × N).
func Percentile(sorted []int64, p int) int64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := (p*n + 99) / 100
	return sorted[min(max(rank, 1), n)-1]
}
