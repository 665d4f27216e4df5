package proxy

import (
	"errors"
	"fmt"
	"io"

	"github.com/manifester/manifester/internal/english"
	"github.com/manifester/manifester/internal/framebufs"
	"github.com/manifester/manifester/internal/pipeline"
	"github.com/manifester/manifester/internal/redact"
)

// sendFlush is how many bytes of records the sending feeder gathers
// before it writes them; it writes sooner whenever the queue runs dry.
const sendFlush = 256 << 10

// sendKeep is the most room the sending feeder keeps between writes: a
// larger frame's record (a produce request of megabytes) leaves room
// that is given up after it.
const sendKeep = 8 << 20

// sendLoop is the feeder when Config.DecodeTo is set: it takes the items
// from the queue as decodeLoop does and writes them, with the counts
// reported before each, to the decoding process as the job stream
// (stream.go). An item's queue space is given back once its record is
// written (or gathered to be). A failed write ends the stream: what it
// held and what is taken from the queue after it is counted (sendLost),
// and Close reports it.
func (p *Proxy) sendLoop(w io.Writer) {
	defer p.decodeWG.Done()
	// Not at a lower priority on a thread of its own as decodeLoop is:
	// it only copies, and such a thread would hold a P that no
	// AddDecoderP has added while the kernel runs the forwarders.
	buf := append(make([]byte, 0, sendFlush), streamMagic...)
	var rest []byte    // a split record's part after its data
	var inBuf sendLost // what buf holds
	write := func(b []byte) {
		if p.sendErr == nil && len(b) > 0 {
			if _, err := w.Write(b); err != nil {
				p.sendErr = err
				p.sendLost.add(inBuf)
				inBuf = sendLost{}
			}
		}
	}
	flush := func() {
		write(buf)
		if cap(buf) > sendKeep {
			buf = make([]byte, 0, sendFlush) // do not pin one huge frame's room
		}
		buf, inBuf = buf[:0], sendLost{}
	}
	for {
		if len(buf) >= sendFlush || (len(buf) > 0 && p.q.empty()) {
			flush()
		}
		j, ok := p.nextJob()
		if !ok {
			break
		}
		it := j.it
		if p.sendErr != nil {
			p.sendLost.count(j)
			if it != nil {
				it.body.drop()
			}
		} else {
			inBuf.count(j)
			var data []byte
			buf, data, rest = appendJobSplit(buf, rest[:0], j, true)
			if data != nil {
				// A held response's data goes from where it lies: what
				// is gathered before it (this record's head too), then
				// the data; the rest of the record is gathered, and until
				// it is written the record counts as not sent.
				flush()
				inBuf.count(j)
				write(data)
				buf = append(buf, rest...)
				if cap(rest) > sendKeep {
					rest = nil // a rewritten response's original: do not pin its room
				}
			}
		}
		if it != nil && it.kind != kindEvent {
			putHeld(it.held) // its bytes are written or gathered: copied out
			it.held = nil
			p.q.release(j.cq, it.reserved)
		}
	}
	flush()
	if c, ok := w.(io.Closer); ok {
		if err := c.Close(); err != nil && p.sendErr == nil {
			p.sendErr = err
		}
	}
}

// sendLost counts what the sending feeder took from the queue after a
// write to the decoding process failed.
type sendLost struct{ frames, events, skipped int }

// count adds what job j carries.
func (l *sendLost) count(j *job) {
	if j.skipped != nil {
		l.skipped += j.skipped.Count
	}
	switch {
	case j.it == nil:
	case j.it.kind == kindEvent:
		l.events++
	default:
		l.frames++
	}
}

func (l *sendLost) add(o sendLost) {
	l.frames, l.events, l.skipped = l.frames+o.frames, l.events+o.events, l.skipped+o.skipped
}

// sendError is what Close reports after a write to the decoding process
// failed.
func (p *Proxy) sendError() error {
	if p.sendErr == nil {
		return nil
	}
	l := p.sendLost
	return fmt.Errorf("proxy: sending to the decoding process: %w (after it, %s and %s went unlogged, beside %s skipped before)",
		p.sendErr, english.Count(l.frames, "frame"), english.Count(l.events, "event"), english.Count(l.skipped, "frame"))
}

// DecodeStream is the decoding side of a proxy whose Config.DecodeTo
// writes to r: it reads the job stream from r until its end and does
// what the proxy would have done with Config.DecodeTo unset. It redacts
// secrets (unless cfg.ShowSecrets), decodes the frames with cfg.Codec
// on cfg.DecodeWorkers workers (cfg.Summary, cfg.Roundtrip) and hands
// every event to cfg.Sink in order (cfg.ReuseTrees); cfg.MaxBuffer and
// cfg.QueueBytes, the proxy's, bound its records and the frames in
// flight. The other fields of cfg are not used. It returns nil at the end of the stream, or an error
// naming the byte offset and field of a malformed record, after
// delivering every event before it.
func DecodeStream(r io.Reader, cfg Config) error {
	if cfg.Codec == nil {
		return errors.New("proxy: Config.Codec is required")
	}
	cfg.decodeDefaults()
	p := &Proxy{cfg: cfg, reg: cfg.Codec.Reg}
	if cfg.ReuseTrees {
		p.trees = framebufs.New(maxPooledTrees)
	}
	sr, err := newStreamReader(r, maxRecord(cfg), func(base Event) *conn {
		return &conn{id: base.Conn, base: base, secrets: redact.NewStream(cfg.ShowSecrets)}
	})
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err != nil {
		return err
	}
	// The frames in flight are bounded as the proxy's queue bounds them.
	err = p.decodeJobs(pipeline.Config{Workers: cfg.DecodeWorkers, Budget: cfg.QueueBytes}, jobCost, sr.job)
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// maxRecord is the largest job record a decoding process of cfg takes:
// a frame's data and original, each at most cfg.MaxBuffer as the broker
// sent it, but a rewritten response may have grown past it (a longer
// proxy address for each of thousands of brokers); what the proxy
// queues of one frame is at most half its queue, cfg.QueueBytes.
func maxRecord(cfg Config) int {
	return max(2*cfg.MaxBuffer, int(cfg.QueueBytes/2)) + maxRecordOverhead
}

// jobCost is the bytes a job holds while in flight.
func jobCost(j *job) int64 {
	if j.it == nil {
		return 0
	}
	return int64(len(j.it.data) + len(j.it.original))
}
