package capture

import (
	"errors"
	"time"

	"github.com/manifester/manifester/internal/tlsdecrypt"
)

// This file reads Kafka out of TLS connections: when the read has TLS
// secrets (Options.TLSKeys, or a pcapng file's Decryption Secrets
// Blocks), a connection whose first bytes are a TLS record is decrypted
// (package tlsdecrypt) and its application bytes are framed as any
// connection's are. Offsets of its frames are offsets in the decrypted
// stream. A gap in the application data is followed by the next record
// (tlsdecrypt finds it and its sequence number) and is a gap of the
// decrypted stream, as large as the plaintext the lost records held. A
// direction that can no longer be decrypted (no key, a gap in the
// handshake, a record that does not authenticate) ends there: the frame
// it cut is reported cut at its end, and every byte after it is counted.

// TLSStats counts what a read did with TLS connections.
type TLSStats struct {
	// Connections counts the connections read as TLS (the read had
	// secrets, and their first bytes were a TLS record, or, their start
	// not captured, they showed chained records: Midway of them);
	// Decrypted those of them with at least one record decrypted.
	Connections, Decrypted int64
	// Records and Bytes count the protected records decrypted and the
	// application bytes they held.
	Records, Bytes int64
	// Midway counts the connections read as TLS whose handshake the
	// capture lacked, joined by trying the key log's TLS 1.3 traffic
	// secrets on their records.
	Midway int64
	// Resynced counts the gaps after which decryption found the stream
	// again (the next record, and its sequence number).
	Resynced int64
	// Undecrypted counts the bytes of TLS connections that were not
	// decrypted: after a direction stopped, of records a gap cut, or of a
	// record the end of the connection cut (AtEnd of them); they are not
	// in Stats.SkippedBytes.
	Undecrypted, AtEnd int64
	// Stopped counts the directions that stopped being decrypted, by
	// reason (tlsdecrypt's Reason constants).
	Stopped map[string]int64
	// KeyLogBlocks counts the pcapng Decryption Secrets Blocks read that
	// held a TLS key log; OtherSecrets those of other kinds (WireGuard,
	// SSH), which nothing here uses.
	KeyLogBlocks, OtherSecrets int64
	// SecretsSkipped counts the key log blocks not read because the
	// capture's key logs passed 16 MiB in all (a key log costs some 2.4
	// times its size in memory).
	SecretsSkipped int64
	// SecretsError, when set, says why the file's secrets blocks were not
	// followed to its end (a malformed or oversized block).
	SecretsError string
}

// looksTLS reports whether a connection's first bytes are a TLS record
// header (a Kafka frame cannot start so: its size would be over 300 MB).
func looksTLS(b []byte) bool {
	return len(b) >= 3 && b[0] >= 20 && b[0] <= 23 && b[1] == 3 && b[2] <= 4
}

// startTLS decides, on a connection's first bytes, whether it is read
// as TLS: they must be a TLS record header and, unless the connection's
// start was captured, a hello's (bytes in the middle of a Kafka stream
// may look like a record header, never like both). Without secrets such
// a connection is ignored at once, as "TLS". A connection whose start
// was not captured is probed when the secrets include TLS 1.3 traffic
// secrets: it may be a TLS session to join midway.
func (rd *reader) startTLS(c *tcpConn, data []byte) {
	c.decided = true
	started := c.s.conn.SawSYN && !c.gapFirst
	if !started && !looksHello(data) && rd.keys.Traffic13() && rd.probing < maxProbing {
		c.probe = &tlsProbe{}
		return
	}
	if !looksTLS(data) || !started && !looksHello(data) {
		return
	}
	if rd.keys.Sessions() == 0 {
		c.s.ignored, c.s.ignoreReason = true, "TLS"
		return
	}
	c.tls = tlsdecrypt.NewStream(rd.keys)
	rd.stats.TLS.Connections++
}

// looksHello reports whether b starts with a handshake record holding a
// ClientHello or ServerHello.
func looksHello(b []byte) bool {
	return len(b) >= 6 && b[0] == 22 && b[1] == 3 && b[2] <= 4 && (b[5] == 1 || b[5] == 2)
}

// A probe holds the first bytes of a connection whose start the capture
// lacks until they tell whether it is TLS: chained application data
// records in a direction (tlsdecrypt.FindRecords, probeChain of them)
// make it a TLS session to join midway; probeMax bytes of a direction
// without them, or the connection's end, make it plain. Either way the
// bytes and gaps held are then delivered in their order.
type tlsProbe struct {
	head   [2][]byte
	chunks []probeChunk
	// held is what each direction holds against probeMax (and
	// maxProbing): its bytes, and probeChunkCost for each chunk.
	held [2]int
}

// probeChunk is bytes (head[i][off:off+n]) or a gap held by a probe.
type probeChunk struct {
	i      int
	off, n int
	gap    int64
	t      time.Time
}

// The bounds of probing: the records that tell TLS, the bytes a
// direction may hold, and the bytes all probes may hold at once (past
// which a new connection is not probed). Joining sessions midway spends
// a read's budget of trials (tlsdecrypt's, in AES blocks): joinBase, and
// joinPerByte for every byte probed, so that a crafted capture of many
// connections costs in proportion to its size.
const (
	probeChain = 3
	probeMax   = 64 << 10
	// probeChunkCost is what a chunk held costs besides its bytes (its
	// bookkeeping, and the search for records its bytes cost again): a
	// direction of one-byte segments is told after about a thousand.
	probeChunkCost = 64
	maxProbing     = 32 << 20
	joinBase       = 1 << 26
	joinPerByte    = 256
)

// probeGap holds a gap of n bytes of direction i; the probe settles as
// plain when its direction holds too much.
func (rd *reader) probeGap(c *tcpConn, i int, n int64) {
	p := c.probe
	p.chunks = append(p.chunks, probeChunk{i: i, gap: n})
	p.held[i] += probeChunkCost
	rd.probing += probeChunkCost
	if p.held[i] > probeMax {
		rd.settleProbe(c, false)
	}
}

// probeTLS holds bytes of direction i and settles the probe when they
// tell.
func (rd *reader) probeTLS(c *tcpConn, i int, data []byte, t time.Time) {
	p := c.probe
	p.chunks = append(p.chunks, probeChunk{i: i, off: len(p.head[i]), n: len(data), t: t})
	p.head[i] = append(p.head[i], data...)
	p.held[i] += len(data) + probeChunkCost
	rd.probing += len(data) + probeChunkCost
	rd.joinBudget += rd.joinPerByte * int64(len(data))
	if _, ok := tlsdecrypt.FindRecords(p.head[i], probeChain); ok {
		rd.settleProbe(c, true)
	} else if p.held[i] > probeMax {
		rd.settleProbe(c, false)
	}
}

// settleProbe reads a probed connection as TLS joined midway, or as
// plain, delivering what the probe held.
func (rd *reader) settleProbe(c *tcpConn, isTLS bool) {
	p := c.probe
	c.probe = nil
	rd.probing -= p.held[0] + p.held[1]
	if isTLS {
		c.tls = tlsdecrypt.NewStream(rd.keys)
		c.tls.JoinMidway(&rd.joinBudget)
		rd.stats.TLS.Connections++
		rd.stats.TLS.Midway++
		// The decrypted stream starts at a record, not at a frame: its
		// frames are found as a capture's begun mid-connection are.
		for _, h := range []*half{c.s.c2s, c.s.s2c} {
			h.synced, h.fresh = false, true
		}
	}
	for _, ch := range p.chunks {
		switch {
		case ch.gap > 0 && isTLS:
			rd.gapTLS(c, ch.i, ch.gap)
		case ch.gap > 0:
			rd.half(c, ch.i).gap(ch.gap)
		case isTLS:
			rd.deliverTLS(c, ch.i, p.head[ch.i][ch.off:ch.off+ch.n], ch.t)
		default:
			rd.deliverPlain(c, ch.i, p.head[ch.i][ch.off:ch.off+ch.n], ch.t)
		}
	}
}

// deliverTLS decrypts bytes of direction i and frames what they hold.
func (rd *reader) deliverTLS(c *tcpConn, i int, data []byte, t time.Time) {
	plain, dropped, err := c.tls.Feed(i, data)
	rd.tlsStopped(c, i, dropped, err)
	if lost, ok := c.tls.GapBefore(i); ok {
		// Found again after a gap: the plaintext it took is a gap of the
		// decrypted stream. Its size is reckoned from the records lost,
		// so the first frame after it must be confirmed as a frame found
		// by resynchronisation is.
		rd.stats.TLS.Resynced++
		if h := rd.half(c, i); !c.s.ignored {
			h.lose(lost)
			if h.synced {
				h.tentative, h.tentativeReq = true, h.dir == ClientToServer
			}
		}
	}
	if c.s.conn.TLS == "" && c.tls.Session() != "" {
		c.s.conn.TLS = c.tls.Session()
		if c.tls.Midway() {
			c.s.conn.TLS += ", joined midway"
		}
	}
	if len(plain) > 0 && !c.s.ignored {
		rd.half(c, i).feed(plain, t)
	}
}

// gapTLS tells the decryption of direction i that n bytes were lost: it
// looks for the stream again after them (or stops).
func (rd *reader) gapTLS(c *tcpConn, i int, n int64) {
	dropped, err := c.tls.Gap(i, n)
	rd.stats.GapBytes += n
	rd.stats.Gaps++
	rd.tlsStopped(c, i, dropped, err)
}

// tlsStopped counts bytes that will not be decrypted and, when direction
// i has just stopped, the reason; the frame the stop cut is reported.
func (rd *reader) tlsStopped(c *tcpConn, i int, dropped int, err error) {
	if dropped > 0 {
		rd.stats.TLS.Undecrypted += int64(dropped)
	}
	if err == nil {
		return
	}
	var e *tlsdecrypt.Error
	reason := err.Error()
	if errors.As(err, &e) {
		reason = e.Reason
	}
	if rd.stats.TLS.Stopped == nil {
		rd.stats.TLS.Stopped = map[string]int64{}
	}
	rd.stats.TLS.Stopped[reason]++
	if c.tlsReason == "" {
		c.tlsReason = reason
	}
	if !c.s.ignored {
		rd.half(c, i).unfinished()
	}
}

// finishTLS counts a TLS connection's last undecrypted bytes, and names
// the reason of one that gave no plaintext at all.
func (rd *reader) finishTLS(c *tcpConn) {
	for i := range 2 {
		rd.tlsStopped(c, i, 0, c.tls.Unsaid(i))
		if n := c.tls.Pending(i); n > 0 {
			rd.stats.TLS.Undecrypted += int64(n)
			rd.stats.TLS.AtEnd += int64(n)
		}
	}
	records, plain := c.tls.Records()
	rd.stats.TLS.Records += records
	rd.stats.TLS.Bytes += plain
	if records > 0 {
		rd.stats.TLS.Decrypted++
	}
	if plain == 0 && c.s.ignoreReason == "" {
		reason := c.tlsReason
		if reason == "" {
			reason = "no application data"
		}
		c.s.ignoreReason = "TLS: " + reason
	}
}
