package redact

import (
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/report"
)

// Conns keeps SASL secrets out of the frames of several connections: one
// [Stream] per connection number (0 for the frames of one hex or file
// input), made on first use. A nil *Conns, or one made to show secrets,
// redacts nothing. It is not safe for concurrent use; the frames of each
// connection must come in the order they were sent.
type Conns struct {
	show    bool
	streams map[int]*Stream
}

// NewConns returns a Conns that redacts, or with show one that does not.
func NewConns(show bool) *Conns { return &Conns{show: show, streams: map[int]*Stream{}} }

// Stream returns the Stream of a connection (nil with secrets shown).
func (s *Conns) Stream(conn int) *Stream {
	if s == nil || s.show {
		return nil
	}
	st := s.streams[conn]
	if st == nil {
		st = NewStream(false)
		s.streams[conn] = st
	}
	return st
}

// Forget drops what s keeps of connection conn (it has ended).
func (s *Conns) Forget(conn int) {
	if s != nil {
		delete(s.streams, conn)
	}
}

// Frame returns the bytes to decode and show in place of b, a frame of
// connection conn, and what was redacted (see [Stream.Frame]).
func (s *Conns) Frame(conn int, c *codec.Codec, b []byte, ro report.Options) ([]byte, *Plan) {
	return s.Stream(conn).Frame(c, b, ro)
}
