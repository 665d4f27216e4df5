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
	// Connections counts the connections read as TLS (their first bytes
	// were a TLS record and the read had secrets); Decrypted those of
	// them with at least one record decrypted.
	Connections, Decrypted int64
	// Records and Bytes count the protected records decrypted and the
	// application bytes they held.
	Records, Bytes int64
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
// a connection is ignored at once, as "TLS".
func (rd *reader) startTLS(c *tcpConn, data []byte) {
	c.decided = true
	if !looksTLS(data) || !c.s.conn.SawSYN && !looksHello(data) {
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
	if c.s.conn.TLS == "" {
		c.s.conn.TLS = c.tls.Session()
	}
	if len(plain) > 0 && !c.s.ignored {
		rd.half(c, i).feed(plain, func(int) time.Time { return t })
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
	if c.tls.Decrypted() {
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
