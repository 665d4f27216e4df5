package tlsdecrypt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"slices"

	"golang.org/x/crypto/chacha20"
)

// Joining a TLS 1.3 connection midway
//
// Kafka's connections live for hours, so a capture usually begins after
// their handshakes. A TLS 1.3 session's records are protected with keys
// that come from its application traffic secrets alone (TLS 1.2's need
// the hellos' randoms, which such a capture lacks), so a key log that
// holds the secrets can still read it: the direction's first whole
// record is tried under each secret of the key log, and under the
// secrets KeyUpdates make of it, in each suite its length allows, at
// each sequence number from 0. A sequence number costs one block of key
// stream: with AES-GCM the one that masks the tag, which (after one Seal
// of the record for each secret) tests it on the whole tag; with
// ChaCha20-Poly1305 the one over the record's last bytes, whose last one
// that is not padding, the inner content type, must be application data,
// a handshake or an alert, and only the numbers that pass are
// authenticated in full. Once one direction is found, its session's
// other secret reads the other direction.

// The bounds of joining midway: the sequence numbers tried for a
// secret (records sent under it before the capture began: a direction
// whose capture begins more records than that after the session's
// start, or after its latest KeyUpdate, is not joined), with
// ChaCha20-Poly1305 (whose key stream costs about 16 times AES's to
// derive), the generations of each secret (KeyUpdates before the
// capture began), and the trials for a stream in all, in AES key stream
// blocks (about half a second's work).
//
// Eight generations: peers update their keys when asked to (Go and
// OpenSSL only then) or after a volume of data (Java, Kafka's usual
// runtime, after 2^37 bytes by default with AES-GCM), so eight cover a
// terabyte of a Java peer's traffic. The generations are tried in turn,
// each for every secret, so a session with no KeyUpdate costs what it
// did with none tried, and a later generation is reached only while the
// stream's work allows: one session's two secrets, in both suites their
// length allows, fit eight times in it; a key log of many sessions
// reaches fewer generations (of a dozen sessions or more, generation 0
// alone).
const (
	MidwayRecords       = 1 << 20
	midwayChaChaRecords = 1 << 16
	midwayGenerations   = 8
	maxMidwayWork       = 1 << 26
	chachaWeight        = 16
)

// FindRecords returns the first offset of b at which chain records of
// application data follow one another (each a header of type 23,
// version 3.3 and a length TLS allows, the next header right after its
// body), the shape of TLS 1.3 (or 1.2) traffic; false when b holds none
// yet.
func FindRecords(b []byte, chain int) (int, bool) {
	for j := 0; j+5 <= len(b); j++ {
		k, links := j, 0
		for links < chain && k+5 <= len(b) {
			n := int(binary.BigEndian.Uint16(b[k+3 : k+5]))
			if b[k] != typeAppData || b[k+1] != 3 || b[k+2] != 3 || n < 17 || n > maxRecord {
				break
			}
			links++
			k += 5 + n
		}
		if links == chain {
			return j, true
		}
	}
	return 0, false
}

// JoinMidway makes the stream read a connection whose handshake the
// capture did not hold: each direction starts at the first record that
// opens under one of the key log's TLS 1.3 application traffic secrets.
// The bytes before it are dropped (counted by Feed). budget, when not
// nil, is shared with other streams (a read's): the trials spend it, in
// AES key stream blocks, and none are made once it is spent.
func (s *Stream) JoinMidway(budget *int64) { s.midway, s.budget = true, budget }

// Midway reports whether the stream joined its session midway.
func (s *Stream) Midway() bool { return s.midway }

// joinFrom looks in b for direction i's first record and its session,
// suite and sequence number. It returns how many bytes before the
// record to drop, and whether the direction's keys are set.
func (s *Stream) joinFrom(i int, b []byte) (int, bool) {
	sd := &s.sides[i]
	start, ok := FindRecords(b, 2)
	if !ok {
		// Keep what could still start the records.
		return max(len(b)-2*(5+maxRecord), 0), false
	}
	n := int(binary.BigEndian.Uint16(b[start+3 : start+5]))
	r := b[start : start+5+n]
	if s.join(i, r) {
		return start, true
	}
	if sd.err == nil {
		s.stop(i, ReasonNoKey, fmt.Sprintf("the capture began after the handshake, and no TLS 1.3 application traffic secret of the key log's (%d sessions), nor the next %d that KeyUpdates make of each, opens this direction's first record at a sequence number below %d", s.keys.Sessions(), midwayGenerations-1, MidwayRecords))
	}
	return start, false
}

// candidate is a secret to try, with the session it belongs to.
type candidate struct {
	sec    *secrets
	secret []byte // generation 0, as the key log has it
	client bool   // the client's secret
	// gens are the secret's generations derived so far (gens[0] is
	// secret), with the suite whose hash derives them.
	gens [][]byte
	hs   *suite
}

// generation returns the candidate's secret after g KeyUpdates, or nil
// when no TLS 1.3 suite makes secrets of its length.
func (c *candidate) generation(g int) []byte {
	if c.hs == nil {
		return nil
	}
	if c.gens == nil {
		c.gens = [][]byte{c.secret}
	}
	for len(c.gens) <= g {
		next, err := c.hs.nextSecret(c.gens[len(c.gens)-1])
		if err != nil {
			return nil
		}
		c.gens = append(c.gens, next)
	}
	return c.gens[g]
}

// newCandidate returns a candidate for secret, or false when it has
// none of TLS 1.3's lengths.
func newCandidate(sec *secrets, secret []byte, client bool) (candidate, bool) {
	c := candidate{sec: sec, secret: secret, client: client}
	sts := tls13Suites(secret)
	if len(sts) == 0 {
		return c, false
	}
	c.hs = sts[0] // the suites of one length share their hash
	return c, true
}

// join finds the secret, its generation, the suite and the sequence
// number record r of direction i opens under.
func (s *Stream) join(i int, r []byte) bool {
	var cands []candidate
	var gens []int // the generations to try, in order
	add := func(sec *secrets, secret []byte, client bool) {
		if c, ok := newCandidate(sec, secret, client); ok {
			cands = append(cands, c)
		}
	}
	if s.sec != nil { // the other direction found the session
		if i == s.client {
			add(s.sec, s.sec.clientAP, true)
		} else {
			add(s.sec, s.sec.serverAP, false)
		}
		// A KeyUpdate that asks for one back moves both directions, so
		// the other direction's generation is tried first, then those
		// nearest it.
		for d := 0; len(gens) < midwayGenerations; d++ {
			for _, g := range []int{s.gen + d, s.gen - d} {
				if g >= 0 && g < midwayGenerations && !slices.Contains(gens, g) {
					gens = append(gens, g)
				}
			}
		}
	} else if s.keys != nil {
		randoms := make([][32]byte, 0, len(s.keys.byRandom))
		for r := range s.keys.byRandom {
			randoms = append(randoms, r)
		}
		slices.SortFunc(randoms, func(a, b [32]byte) int { return bytes.Compare(a[:], b[:]) })
		for _, r := range randoms {
			sec := s.keys.byRandom[r]
			if sec.clientAP != nil {
				add(sec, sec.clientAP, true)
			}
			if sec.serverAP != nil {
				add(sec, sec.serverAP, false)
			}
		}
		// Every secret's generation 0 first: a session with no KeyUpdate
		// before the capture costs what it did before generations were
		// tried.
		for g := range midwayGenerations {
			gens = append(gens, g)
		}
	}
	for _, g := range gens {
		// AES-GCM first: it is what the peers negotiate on processors
		// with AES instructions, and its trials are the cheaper.
		for _, kind := range []aeadKind{aesGCM, chacha} {
			for k := range cands {
				c := &cands[k]
				secret := c.generation(g)
				if secret == nil {
					continue
				}
				for _, st := range suitesFor(secret, kind) {
					if s.suite != nil && st != s.suite {
						continue
					}
					seq, ok := s.searchSeq(i, st, secret, r)
					if s.sides[i].err != nil {
						return false
					}
					if !ok {
						continue
					}
					if s.sec == nil {
						s.gen = g
					}
					s.version, s.suite, s.sec = tls.VersionTLS13, st, c.sec
					if c.client {
						s.client = i
					} else {
						s.client = 1 - i
					}
					s.setKeys13(i, secret, phaseApp)
					s.sides[i].seq = seq
					return true
				}
			}
		}
	}
	return false
}

// tls13Suites are the TLS 1.3 suites whose hash makes secrets of the
// secret's length.
func tls13Suites(secret []byte) []*suite {
	var out []*suite
	for _, id := range []uint16{0x1301, 0x1302, 0x1303} {
		if st := suites[id]; st.hash().Size() == len(secret) {
			out = append(out, st)
		}
	}
	return out
}

// suitesFor are the TLS 1.3 suites of a kind whose hash makes secrets
// of the secret's length.
func suitesFor(secret []byte, kind aeadKind) []*suite {
	var out []*suite
	for _, st := range tls13Suites(secret) {
		if st.kind == kind {
			out = append(out, st)
		}
	}
	return out
}

// bulkWork is what opening (or sealing) a record of n bytes costs, in
// AES key stream blocks: two for every 16 bytes, one for the cipher and
// one for the authenticator (measured, opening a record costs about as
// much as deriving one block alone for every 16 bytes with AES-GCM, 1.3
// times that with ChaCha20-Poly1305).
func bulkWork(n int) int64 { return int64(n)/8 + 1 }

// spend charges n AES key stream blocks of joining work to the stream
// and the shared budget, stopping direction i and returning false once
// either is spent.
func (s *Stream) spend(i int, n int64) bool {
	s.work += n
	if s.work > maxMidwayWork {
		s.stop(i, ReasonNoKey, fmt.Sprintf("joining the session midway: no secret of the key log's opened this direction's first record within %d trials", maxMidwayWork))
		return false
	}
	if s.budget != nil {
		if *s.budget -= n; *s.budget < 0 {
			s.stop(i, ReasonNoKey, "joining the session midway: the trials this input allows are spent")
			return false
		}
	}
	return true
}

// searchSeq returns the sequence number at which record r opens under
// secret in suite st, trying those the bounds allow.
func (s *Stream) searchSeq(i int, st *suite, secret, r []byte) (uint64, bool) {
	sd := &s.sides[i]
	key, err := st.expandLabel(secret, "key", st.keyLen)
	if err != nil {
		return 0, false
	}
	iv, err := st.expandLabel(secret, "iv", 12)
	if err != nil {
		return 0, false
	}
	aead, err := st.newAEAD(key)
	if err != nil {
		return 0, false
	}
	enc := r[5 : len(r)-16] // the ciphertext before its tag
	tag := r[len(r)-16:]
	q := len(enc) - 1 // the inner plaintext's last byte
	if q < 0 {
		return 0, false
	}
	// The nonce is the IV with the sequence number XORed into its last 8
	// bytes.
	var nonce [12]byte
	copy(nonce[:4], iv)
	ivLow := binary.BigEndian.Uint64(iv[4:])
	setNonce := func(seq uint64) { binary.BigEndian.PutUint64(nonce[4:], ivLow^seq) }
	open := func() bool {
		if !s.spend(i, bulkWork(len(r))) {
			return false
		}
		var err error
		sd.scratch, err = aead.Open(sd.scratch[:0], nonce[:], r[5:], r[:5])
		return err == nil
	}
	if st.kind == aesGCM {
		// AES-GCM's tag is the GHASH of the header and the ciphertext,
		// which the sequence number does not change, masked with the key
		// stream block of counter 1 under the record's nonce. One Seal,
		// at sequence number 0, of the plaintext that the ciphertext
		// would be there, gives the GHASH; then each sequence number is
		// tested on the whole tag by one block, whatever the record
		// holds and however it is padded.
		block, err := aes.NewCipher(key)
		if err != nil || !s.spend(i, 2*bulkWork(len(r))) {
			return 0, false
		}
		setNonce(0)
		var ctr, ks, want [16]byte
		copy(ctr[:12], nonce[:])
		ctr[15] = 2 // the ciphertext's first counter: 1 is the tag's
		p := append(sd.scratch[:0], enc...)
		cipher.NewCTR(block, ctr[:]).XORKeyStream(p, p)
		sealed := aead.Seal(p[:0], nonce[:], p, r[:5])
		sd.scratch = sealed
		ctr[15] = 1
		block.Encrypt(ks[:], ctr[:])
		// want is the key stream block that masks the GHASH into the
		// record's tag.
		for k := range 16 {
			want[k] = sealed[len(enc)+k] ^ ks[k] ^ tag[k]
		}
		w0, w1 := binary.LittleEndian.Uint64(want[:8]), binary.LittleEndian.Uint64(want[8:])
		for seq := uint64(0); seq < MidwayRecords; seq++ {
			if seq&1023 == 0 && !s.spend(i, 1024) {
				return 0, false
			}
			binary.BigEndian.PutUint64(ctr[4:12], ivLow^seq)
			block.Encrypt(ks[:], ctr[:])
			if binary.LittleEndian.Uint64(ks[:8]) != w0 || binary.LittleEndian.Uint64(ks[8:]) != w1 {
				continue
			}
			setNonce(seq)
			if open() {
				return seq, true
			}
			if sd.err != nil {
				return 0, false
			}
		}
		return 0, false
	}
	// ChaCha20-Poly1305's tag is keyed by the nonce: a sequence number is
	// tested by the inner content type, the last byte of the inner
	// plaintext that is not padding (zeros). The key stream block over
	// the record's last byte shows it unless the padding fills that
	// block's part of the record; the blocks before are then derived in
	// turn (a wrong sequence number's does so once in 256 trials or
	// fewer), each charged.
	var ks [64]byte
	innerType := func() (byte, bool) {
		for blk := q / 64; blk >= 0; blk-- {
			if blk < q/64 && !s.spend(i, chachaWeight) {
				return 0, false
			}
			c, err := chacha20.NewUnauthenticatedCipher(key, nonce[:])
			if err != nil {
				return 0, false
			}
			c.SetCounter(uint32(1 + blk)) // ChaCha20-Poly1305's counter: 0 is the tag key's
			lo, hi := 64*blk, min(64*blk+64, q+1)
			part := ks[:hi-lo]
			clear(part)
			c.XORKeyStream(part, part)
			for j := hi - 1; j >= lo; j-- {
				if b := enc[j] ^ ks[j-lo]; b != 0 {
					return b, true
				}
			}
		}
		return 0, false
	}
	for seq := uint64(0); seq < midwayChaChaRecords; seq++ {
		if seq&63 == 0 && !s.spend(i, 64*chachaWeight) {
			return 0, false
		}
		setNonce(seq)
		typ, ok := innerType()
		if ok && typ >= typeAlert && typ <= typeAppData && open() {
			return seq, true
		}
		if sd.err != nil {
			return 0, false
		}
	}
	return 0, false
}
