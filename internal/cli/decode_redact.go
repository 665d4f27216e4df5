package cli

import (
	"github.com/manifester/manifester/internal/codec"
	"github.com/manifester/manifester/internal/redact"
	"github.com/manifester/manifester/internal/report"
)

// secrets keeps SASL secrets out of decode's output (unless
// --show-secrets): one redact.Stream per connection (0 for the frames of
// a hex or file input).
type secrets struct {
	show    bool
	streams map[int]*redact.Stream
}

func newSecrets(show bool) *secrets { return &secrets{show: show, streams: map[int]*redact.Stream{}} }

// stream returns the redact.Stream of a connection (nil with secrets
// shown).
func (s *secrets) stream(conn int) *redact.Stream {
	if s == nil || s.show {
		return nil
	}
	st := s.streams[conn]
	if st == nil {
		st = redact.NewStream(false)
		s.streams[conn] = st
	}
	return st
}

// frame returns the bytes to decode and show in place of b, and what was
// redacted. Frames of one connection must come in order.
func (s *secrets) frame(conn int, c *codec.Codec, b []byte, ro report.Options) ([]byte, *redact.Plan) {
	return s.stream(conn).Frame(c, b, ro)
}
