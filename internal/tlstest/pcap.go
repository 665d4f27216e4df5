package tlstest

import (
	"fmt"
	"io"
	"net/netip"
	"slices"
	"time"

	"github.com/manifester/manifester/internal/capture"
)

// WritePcap writes recs to w as a capture in format f, each recording one
// TCP connection (handshake, its chunks as segments of at most 1,448
// bytes, the closing FINs), the connections' packets interleaved by time.
// A recording whose addresses are invalid or repeat an earlier
// connection's gets a distinct loopback client port (and 127.0.0.1:9092
// for an invalid server). The bytes of each recording's Skips are left
// out, the sequence numbers jumping over them.
func WritePcap(w io.Writer, f capture.Format, recs ...*Recording) error {
	cw, err := capture.NewWriter(w, f)
	if err != nil {
		return err
	}
	type event struct {
		t    time.Time
		conn int
		kind int // open, chunk, close
		c    Chunk
	}
	const (
		open = iota
		chunk
		closing
	)
	var evs []event
	conns := make([]*capture.ConnWriter, len(recs))
	used := map[[2]netip.AddrPort]bool{}
	ports := map[uint16]bool{}
	for _, r := range recs {
		ports[r.Client.Port()] = true
	}
	next := uint16(40000)
	for i, r := range recs {
		if err := checkSkips(r); err != nil {
			return fmt.Errorf("connection %d (%s -> %s): %w", i+1, r.Client, r.Server, err)
		}
		client, server := r.Client, r.Server
		if !server.IsValid() || server.Port() == 0 {
			server = netip.MustParseAddrPort("127.0.0.1:9092")
		}
		if !client.IsValid() || client.Addr().Is4() != server.Addr().Is4() || used[[2]netip.AddrPort{client, server}] {
			for ports[next] {
				next++
			}
			ports[next] = true
			lo := netip.MustParseAddr("127.0.0.1")
			if server.Addr().Is6() {
				lo = netip.IPv6Loopback()
			}
			client = netip.AddrPortFrom(lo, next)
		}
		used[[2]netip.AddrPort{client, server}] = true
		conns[i] = cw.Conn(client, server)
		start := r.Start
		if len(r.Chunks) > 0 && (start.IsZero() || r.Chunks[0].Time.Before(start)) {
			start = r.Chunks[0].Time
		}
		evs = append(evs, event{t: start, conn: i, kind: open})
		last := start
		for _, c := range r.Chunks {
			if c.Time.After(last) {
				last = c.Time
			}
			c.Time = last
			evs = append(evs, event{t: last, conn: i, kind: chunk, c: c})
		}
		if r.End.After(last) {
			last = r.End
		}
		evs = append(evs, event{t: last, conn: i, kind: closing})
	}
	slices.SortStableFunc(evs, func(a, b event) int { return a.t.Compare(b.t) })
	offsets := make([][2]int64, len(recs))
	for _, ev := range evs {
		c, r := conns[ev.conn], recs[ev.conn]
		switch ev.kind {
		case open:
			err = c.Open(ev.t)
		case closing:
			err = c.Close(ev.t)
		default:
			off := &offsets[ev.conn][ev.c.Dir]
			err = writeSkipping(c, ev.c, *off, r.Skips)
			*off += int64(len(ev.c.Data))
		}
		if err != nil {
			return fmt.Errorf("writing connection %d: %w", ev.conn+1, err)
		}
	}
	if err := cw.Flush(); err != nil {
		return fmt.Errorf("flushing the capture: %w", err)
	}
	return nil
}

// checkSkips refuses skips that are empty or reach past their stream.
func checkSkips(r *Recording) error {
	for _, s := range r.Skips {
		if n := int64(len(r.Stream(s.Dir))); s.N <= 0 || s.Offset < 0 || s.Offset+s.N > n {
			return fmt.Errorf("skip of %d bytes at %d of the %s stream (%d bytes): out of range", s.N, s.Offset, s.Dir, n)
		}
	}
	return nil
}

// writeSkipping writes ch, whose first byte is at offset off of its
// direction's stream, leaving out the bytes of skips.
func writeSkipping(c *capture.ConnWriter, ch Chunk, off int64, skips []Skip) error {
	data := ch.Data
	for len(data) > 0 {
		n := int64(len(data))
		skipped := false
		for _, s := range skips {
			switch {
			case s.Dir != ch.Dir:
			case s.Offset <= off && off < s.Offset+s.N:
				skipped = true
				n = min(n, s.Offset+s.N-off)
			case s.Offset > off:
				n = min(n, s.Offset-off)
			}
		}
		if skipped {
			c.Skip(ch.Dir, int(n))
		} else if err := c.Write(ch.Dir, ch.Time, data[:n]); err != nil {
			return err
		}
		data, off = data[n:], off+n
	}
	return nil
}
