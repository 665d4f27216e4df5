package stats

import (
	"io"
	"strconv"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/framefacts"
	"github.com/manifester/manifester/internal/frames"
	"github.com/manifester/manifester/internal/report"
)

// ReadCapture reads a pcap or pcapng capture (see package capture) and
// adds a record per Kafka frame, in capture order. Paired responses are
// decoded, without span trees, for their error codes; one that does not
// decode is counted as undecoded. Requests are not decoded: their API,
// version and client id are read from the header.
func ReadCapture(r io.Reader, opts capture.Options, c *codec.Codec, add func(*Record)) (capture.Stats, error) {
	return capture.Read(r, opts, func(ev *capture.Event) error {
		if rec := RecordOf(ev, c); rec != nil {
			add(rec)
		}
		return nil
	})
}

// RecordOf is the record of one frame of a capture (nil for a request
// whose header does not read). It decodes a paired response for its error
// codes (as report.ResponseValues does: an ApiVersions answer that reads
// only as v0 is the broker's UNSUPPORTED_VERSION, counted under its
// request's version), and is safe on any goroutine when ev is not changed meanwhile
// (see package pipeline, which decode and stats --pcap use for a capture).
func RecordOf(ev *capture.Event, c *codec.Codec) *Record {
	var resp *codec.Frame
	var err error
	if ev.Dir != capture.ClientToServer && ev.Request != nil {
		if api, ok := c.Reg.API(ev.Request.APIKey); ok {
			resp, err = report.ResponseValues(c, ev.Data, api, ev.Request.Version)
		}
	}
	return RecordWith(ev, c, resp, err)
}

// RecordWith is RecordOf for a frame decoded already: for a paired
// response, resp and err are its decode (as RecordOf makes it: with
// values, by report.ResponseValues); they are not read for a request.
// A paired response of a known API with no decoded frame or an error is
// counted as undecoded.
func RecordWith(ev *capture.Event, c *codec.Codec, resp *codec.Frame, err error) *Record {
	rec := Record{Conn: strconv.Itoa(ev.Conn.ID), Client: ev.Conn.Client.String(), Server: ev.Conn.Server.String(), Size: len(ev.Data)}
	if ev.Cut != nil && ev.Cut.Size >= 0 {
		// A frame cut short is as large as its size prefix says, as its
		// report (and so its JSON line's size) has it.
		rec.Size = int(ev.Cut.Size)
	}
	if ev.Dir == capture.ClientToServer {
		key, v, _, ok := codec.PeekRequest(ev.Data)
		if !ok {
			// The reader only hands over frames whose header reads.
			return nil
		}
		rec.APIKey, rec.Version = key, v
		if api, ok := c.Reg.API(key); ok {
			rec.API = api.Name
			if api.Request.HeaderVersion(v) >= 1 {
				rec.ClientID = frames.PeekClientID(ev.Data)
			}
		}
		return &rec
	}
	rec.Response = true
	if req := ev.Request; req != nil {
		rec.Paired, rec.APIKey, rec.Version = true, req.APIKey, req.Version
		rec.LatencyMicros = ev.Time.Sub(req.Time).Microseconds()
		if api, ok := c.Reg.API(req.APIKey); ok {
			rec.API = api.Name
			if resp != nil && err == nil {
				rec.Errors = framefacts.Of(resp, nil).Errors
			} else {
				rec.Undecoded = true
			}
		} else {
			rec.Undecoded = true
		}
	}
	return &rec
}
