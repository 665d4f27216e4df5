package tlsdecrypt

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
)

// Finding the stream again after a gap
//
// A gap loses a direction's record boundaries and the count of records
// (the sequence number every nonce is made from). Once the session's
// application keys are in use both can be found again: the next record
// starts at a header of an application data record whose body
// authenticates under the keys at some sequence number after the last
// one read. TLS 1.2's GCM records carry their nonce, which Go, OpenSSL and
// Java make the sequence number, so it is tried first; then each number
// from the next expected one on, as many as the lost bytes could have
// held records. The work is bounded by the input: the bytes opened for
// one gap are at most resyncBase plus resyncPerByte for every byte lost
// or searched, and never more than maxResyncWork; past that the
// direction stops.

// The bounds of the trial decryption after one gap.
const (
	maxResyncWork = 64 << 20
	resyncBase    = 256 << 10
	resyncPerByte = 256
)

// minRecordOnWire is the fewest bytes a protected record takes (a header,
// a byte of content, a tag).
const minRecordOnWire = 5 + 1 + 16

// resyncFrom looks in b for the first record after a gap of direction i;
// it returns how many bytes before it to drop and whether it was found
// (false: it needs more bytes, or the direction stopped).
func (s *Stream) resyncFrom(i int, b []byte) (int, bool) {
	sd := &s.sides[i]
	for j := 0; j+5 <= len(b); j++ {
		h := b[j:]
		n := int(binary.BigEndian.Uint16(h[3:5]))
		if h[0] != typeAppData || h[1] != 3 || h[2] != 3 || n > maxRecord || n < s.overhead()-5 {
			continue
		}
		if len(h) < 5+n {
			return j, false // a candidate whose body is still to come
		}
		if next := h[5+n:]; len(next) >= 3 && (next[0] < typeCCS || next[0] > typeHeartbeat || next[1] != 3) {
			continue // what follows it is no record
		}
		if seq, ok := s.trySeqs(i, h[:5+n], int64(j)); ok {
			records := seq - sd.seq
			lost := sd.lost + int64(j) - int64(records)*int64(s.overhead())
			sd.gapBefore, sd.seq, sd.lost = max(lost, 0), seq, 0
			sd.resync = false
			return j, true
		}
		if sd.err != nil {
			return j, false
		}
	}
	// Keep what could still start a record's header.
	return max(len(b)-4, 0), false
}

// overhead is the bytes a protected record adds to its content.
func (s *Stream) overhead() int {
	switch {
	case s.version == tls.VersionTLS13:
		return 5 + 1 + 16 // the inner content type
	case s.suite.kind == aesGCM:
		return 5 + 8 + 16 // the explicit nonce
	}
	return 5 + 16
}

// trySeqs opens record r (not in place) at the sequence numbers it may
// have, returning the one it authenticates at; skipped is how many bytes
// were searched past since the gap, which may also have held records.
func (s *Stream) trySeqs(i int, r []byte, skipped int64) (uint64, bool) {
	sd := &s.sides[i]
	try := func(seq uint64) bool {
		sd.work += int64(len(r))
		if limit := min(maxResyncWork, resyncBase+resyncPerByte*(sd.lost+skipped+int64(len(r)))); sd.work > limit {
			s.stop(i, ReasonGap, fmt.Sprintf("the stream was not found again after the gap within %d bytes of trial decryption", limit))
			return false
		}
		return s.authentic(i, r, seq)
	}
	if s.version != tls.VersionTLS13 && s.suite.kind == aesGCM && len(r) >= 13 {
		if seq := binary.BigEndian.Uint64(r[5:13]); seq >= sd.seq && try(seq) {
			return seq, true
		}
	}
	most := uint64((sd.lost+skipped)/minRecordOnWire) + 1
	for k := uint64(0); k <= most && sd.err == nil; k++ {
		if try(sd.seq + k) {
			return sd.seq + k, true
		}
	}
	return 0, false
}

// authentic reports whether record r of direction i authenticates at
// sequence number seq.
func (s *Stream) authentic(i int, r []byte, seq uint64) bool {
	sd := &s.sides[i]
	nonce, ct, aad, ok := s.nonceFor(i, r, seq)
	if !ok {
		return false
	}
	var err error
	sd.scratch, err = sd.aead.Open(sd.scratch[:0], nonce[:], ct, aad)
	return err == nil
}
