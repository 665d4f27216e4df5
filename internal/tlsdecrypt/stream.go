// Package tlsdecrypt decrypts the TLS records of a captured TCP
// connection, given the session's secrets from a TLS key log (the NSS key
// log format that SSLKEYLOGFILE, Go's tls.Config.KeyLogWriter, OpenSSL's
// -keylogfile and Wireshark use), so that the application bytes inside
// can be read as if the connection were plain.
//
// A [Stream] is fed each direction's TCP bytes in order. It reads the
// handshake in the clear (the ClientHello's random finds the session in
// the [KeyLog]; the ServerHello names the version and the cipher suite),
// derives the record keys as the peers did (TLS 1.3's key schedule from
// the handshake and traffic secrets, including KeyUpdate; TLS 1.2's key
// block from the master secret), and opens every protected record,
// handing out the application data. It reads TLS 1.2 and 1.3 with AES-GCM
// and ChaCha20-Poly1305, the suites current clients and brokers
// negotiate; anything else (another suite, TLS 1.0 or 1.1, a handshake
// the capture missed, a gap in the stream, a record that does not
// authenticate, renegotiation) stops that direction with an [*Error]
// saying why, and every byte after it is counted, never dropped unsaid.
//
// Memory is bounded by one record (at most 18,437 bytes) and one
// ServerHello per direction.
package tlsdecrypt

import (
	"bytes"
	"crypto/cipher"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"fmt"
)

// Record content types.
const (
	typeCCS       = 20
	typeAlert     = 21
	typeHandshake = 22
	typeAppData   = 23
	typeHeartbeat = 24
)

// Handshake message types.
const (
	hsClientHello = 1
	hsServerHello = 2
	hsFinished    = 20
	hsKeyUpdate   = 24
)

// maxRecord is the largest record body accepted: TLS 1.2's limit on a
// protected record (2^14 + 2048), which is above TLS 1.3's (2^14 + 256).
const maxRecord = 1<<14 + 2048

// maxHello bounds the ServerHello kept to be parsed (a real one is under
// 200 bytes; with a post-quantum key share, under 1,300).
const maxHello = 1 << 16

// hrrRandom is the ServerHello random that marks a HelloRetryRequest
// (RFC 8446, section 4.1.3).
var hrrRandom = [32]byte{
	0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
	0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
}

// Why a direction stopped being decrypted: the Reason of an [*Error].
const (
	ReasonNoKey        = "no key in the key log"
	ReasonNoHandshake  = "handshake not captured"
	ReasonSuite        = "cipher suite not read"
	ReasonVersion      = "TLS version not read"
	ReasonGap          = "gap in the TLS stream"
	ReasonAuth         = "record did not authenticate"
	ReasonNotTLS       = "not a TLS record"
	ReasonRenegotiated = "renegotiated"
	ReasonHandshake    = "malformed handshake"
)

// Error says why a direction of a stream stopped being decrypted, and
// where: Offset is the position of the record (or gap) in that
// direction's byte stream.
type Error struct {
	// Reason is one of the Reason constants, short enough to count by.
	Reason string
	// Offset is the byte offset, in its direction's TCP stream, of the
	// record or gap that stopped it.
	Offset int64
	// Detail says more.
	Detail string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("TLS: %s at byte %d", e.Reason, e.Offset)
	}
	return fmt.Sprintf("TLS: %s at byte %d: %s", e.Reason, e.Offset, e.Detail)
}

// Stream decrypts the two directions of one TCP connection. The
// directions are numbered 0 and 1 by the caller, in any order: the one
// that sends the ClientHello is the TLS client. It is not safe for
// concurrent use.
type Stream struct {
	keys  *KeyLog
	sides [2]side
	// client is the index of the side that sent the ClientHello, or -1.
	client       int
	clientRandom []byte
	serverRandom []byte
	version      uint16 // 0x0303 or 0x0304, once the ServerHello is read
	suite        *suite
	sec          *secrets
	// midway: the capture began after the handshake (JoinMidway); work
	// counts the trials spent joining it (midway.go); gen is the
	// generation of the secret the first direction joined at (the
	// KeyUpdates before the capture began).
	midway bool
	work   int64
	budget *int64
	gen    int
}

// phase is which keys protect a direction's records.
type phase uint8

const (
	phaseClear     phase = iota // none: the hellos
	phaseHandshake              // TLS 1.3's handshake traffic keys
	phaseApp                    // the application traffic keys (TLS 1.2: the session's)
)

// side is one direction.
type side struct {
	pos   int64  // stream offset of rec[0]
	rec   []byte // bytes of records not yet whole
	out   []byte // plaintext handed out by the latest Feed
	err   *Error // set when this direction stopped
	said  bool   // err was returned
	hs    hsReader
	aead  cipher.AEAD // nil: records are in the clear
	iv    []byte
	seq   uint64
	phase phase
	// secret is the TLS 1.3 traffic secret in use (for KeyUpdate).
	secret []byte
	// toApp and update are key changes that take effect after the
	// current record: the handshake's Finished (TLS 1.3), a KeyUpdate.
	toApp, update bool
	// pendingMaster: TLS 1.2 keys are due at the next record, from a
	// master secret yet to be found (a resumed session).
	pendingMaster bool
	// resync: a gap was declared and the next record is being looked for
	// (resync.go); lost is the bytes lost since the last record read,
	// work the bytes tried since the gap, scratch the trial output.
	// gapBefore, when not -1, is the plaintext the latest gap took
	// (estimated), said by GapBefore.
	resync    bool
	lost      int64
	work      int64
	scratch   []byte
	gapBefore int64

	records, plain int64
}

// NewStream returns a stream that looks its sessions up in keys (nil
// keys: nothing is decrypted, every handshake ends in [ReasonNoKey]).
func NewStream(keys *KeyLog) *Stream { return &Stream{keys: keys, client: -1} }

// Feed takes the next bytes of direction i and returns the application
// data they complete (valid until the next call for that direction), how
// many of the bytes will never be decrypted (this direction stopped,
// now or before), and the error that stopped it, returned once: by the
// call in which it happened, or (when reading the other direction
// stopped both) by the next call or [Stream.Unsaid].
func (s *Stream) Feed(i int, data []byte) (plain []byte, dropped int, err error) {
	sd := &s.sides[i]
	sd.out = sd.out[:0]
	sd.gapBefore = -1
	if sd.err != nil {
		return nil, len(data), s.Unsaid(i)
	}
	if s.keys != nil {
		s.keys.resumeEarned += int64(len(data))
	}
	sd.rec = append(sd.rec, data...)
	b := sd.rec
	// After a gap, or before a stream joined midway has its keys, the
	// first record is searched for (resync.go, midway.go).
	if sd.resync || s.midway && sd.aead == nil {
		seek := s.joinFrom
		if sd.resync {
			seek = s.resyncFrom
		}
		k, found := seek(i, b)
		dropped, sd.pos, b = k, sd.pos+int64(k), b[k:]
		if !found {
			if sd.resync {
				sd.lost += int64(k) // found, resyncFrom counted them and started afresh
			}
			return nil, dropped + s.keep(i, b), s.Unsaid(i)
		}
	}
	for len(b) >= 5 && sd.err == nil {
		n := int(binary.BigEndian.Uint16(b[3:5]))
		if b[0] < typeCCS || b[0] > typeHeartbeat || b[1] != 3 {
			s.stop(i, ReasonNotTLS, fmt.Sprintf("the header % x", b[:5]))
			break
		}
		if n > maxRecord {
			s.stop(i, ReasonNotTLS, fmt.Sprintf("a record of %d bytes, more than TLS allows (%d)", n, maxRecord))
			break
		}
		if len(b) < 5+n {
			break
		}
		s.record(i, b[:5+n])
		if sd.err != nil {
			break
		}
		sd.pos += int64(5 + n)
		b = b[5+n:]
	}
	return sd.out, dropped + s.keep(i, b), s.Unsaid(i)
}

// keep keeps b, the bytes of direction i not read yet, for the next
// Feed, or, when the direction stopped, drops them, returning how many.
func (s *Stream) keep(i int, b []byte) int {
	sd := &s.sides[i]
	if sd.err != nil {
		sd.rec = nil
		return len(b)
	}
	sd.rec = sd.rec[:copy(sd.rec, b)]
	return 0
}

// GapBefore reports, after a Feed of direction i that found the stream
// again after a gap, how many bytes of plaintext the gap took (reckoned
// from the bytes and records lost; exact unless the lost records were
// padded or held no application data): the plaintext that Feed returned
// follows them.
func (s *Stream) GapBefore(i int) (int64, bool) {
	g := s.sides[i].gapBefore
	return g, g >= 0
}

// Gap tells the stream that n bytes of direction i were not captured.
// Record boundaries and sequence numbers are lost with them: once the
// application keys are in use, the next Feeds look for the next record
// and its sequence number (see [Stream.GapBefore]); before, the
// direction stops. It returns how many buffered bytes of an unfinished
// record go with the gap, and the error of a stop, once.
func (s *Stream) Gap(i int, n int64) (dropped int, err error) {
	sd := &s.sides[i]
	if sd.err != nil {
		return 0, s.Unsaid(i)
	}
	dropped = len(sd.rec)
	sd.pos += int64(dropped)
	if s.midway && sd.aead == nil { // not joined yet: the search goes on after it
		sd.pos += n
		sd.rec = sd.rec[:0]
		return dropped, nil
	}
	if sd.phase == phaseApp && !sd.toApp && !sd.update {
		sd.pos += n
		sd.rec = sd.rec[:0]
		sd.resync, sd.work = true, 0
		sd.lost += int64(dropped) + n
		return dropped, nil
	}
	s.stop(i, ReasonGap, fmt.Sprintf("%d bytes not captured: a record's boundaries and sequence number cannot be followed past them", n))
	sd.rec = nil
	return dropped, s.Unsaid(i)
}

// Unsaid returns the error that stopped direction i if no call has
// returned it yet (a stop of both directions is found while reading one
// of them), else nil.
func (s *Stream) Unsaid(i int) error {
	sd := &s.sides[i]
	if sd.err == nil || sd.said {
		return nil
	}
	sd.said = true
	return sd.err
}

// Pending is how many bytes of direction i wait for the rest of their
// record.
func (s *Stream) Pending(i int) int { return len(s.sides[i].rec) }

// Err returns the error that stopped direction i, or nil.
func (s *Stream) Err(i int) error {
	if e := s.sides[i].err; e != nil {
		return e
	}
	return nil
}

// Records returns how many protected records were decrypted, and the
// application bytes they held.
func (s *Stream) Records() (records, plain int64) {
	return s.sides[0].records + s.sides[1].records, s.sides[0].plain + s.sides[1].plain
}

// Client returns the index of the direction that sent the ClientHello,
// or -1 before one is read.
func (s *Stream) Client() int { return s.client }

// Session describes the session once its ServerHello is read: "TLS 1.3
// TLS_AES_128_GCM_SHA256"; empty before.
func (s *Stream) Session() string {
	if s.suite == nil {
		return ""
	}
	v := "TLS 1.2"
	if s.version == tls.VersionTLS13 {
		v = "TLS 1.3"
	}
	return v + " " + tls.CipherSuiteName(s.suite.id)
}

// stop ends direction i, at the record at its current offset.
func (s *Stream) stop(i int, reason, detail string) {
	sd := &s.sides[i]
	if sd.err == nil {
		sd.err = &Error{Reason: reason, Offset: sd.pos, Detail: detail}
	}
}

// stopBoth ends both directions (the session's keys are not to be had).
func (s *Stream) stopBoth(reason, detail string) {
	s.stop(0, reason, detail)
	s.stop(1, reason, detail)
}

// record handles one whole record of direction i (header included).
func (s *Stream) record(i int, r []byte) {
	sd := &s.sides[i]
	typ, body := r[0], r[5:]
	if sd.pendingMaster {
		sd.pendingMaster = false
		if !s.findMaster(i, r) {
			return
		}
	}
	if sd.aead == nil {
		switch typ {
		case typeHandshake:
			s.handshake(i, body)
		case typeCCS:
			if s.version != tls.VersionTLS13 {
				s.changeCipher12(i)
			}
		case typeAlert, typeHeartbeat:
		case typeAppData:
			s.stop(i, ReasonNoHandshake, "application data before any handshake the capture holds (it began mid-connection)")
		}
		return
	}
	if s.version == tls.VersionTLS13 && typ == typeCCS {
		return // middlebox compatibility: in the clear, ignored
	}
	if s.version == tls.VersionTLS13 && typ != typeAppData {
		s.stop(i, ReasonNotTLS, fmt.Sprintf("a protected TLS 1.3 record of type %d", typ))
		return
	}
	if s.version != tls.VersionTLS13 && typ == typeCCS {
		s.stop(i, ReasonRenegotiated, "a second ChangeCipherSpec: the session renegotiated, whose keys are not followed")
		return
	}
	inner, plain, ok := s.open(i, r)
	if !ok {
		return
	}
	sd.records++
	switch inner {
	case typeAppData:
		sd.plain += int64(len(plain))
		sd.out = append(sd.out, plain...)
	case typeHandshake:
		s.handshake(i, plain)
	}
	if sd.err != nil {
		return
	}
	if sd.toApp {
		sd.toApp = false
		s.setKeys13(i, s.trafficSecret(i), phaseApp)
	} else if sd.update {
		sd.update = false
		next, err := s.suite.nextSecret(sd.secret)
		if err != nil {
			s.stop(i, ReasonHandshake, "KeyUpdate: "+err.Error())
			return
		}
		s.setKeys13(i, next, phaseApp)
	}
}

// open decrypts a protected record of direction i in place, returning
// its content type and plaintext.
func (s *Stream) open(i int, r []byte) (byte, []byte, bool) {
	sd := &s.sides[i]
	nonce, ct, aad, ok := s.nonceFor(i, r, sd.seq)
	if !ok {
		return 0, nil, false
	}
	plain, err := sd.aead.Open(ct[:0], nonce[:], ct, aad)
	if err != nil {
		s.stop(i, ReasonAuth, fmt.Sprintf("record %d of its keys (%s): the key log's secret is not this session's, or the bytes were damaged", sd.seq, err))
		return 0, nil, false
	}
	sd.seq++
	if s.version != tls.VersionTLS13 {
		return r[0], plain, true
	}
	// TLSInnerPlaintext: content, then its type, then zero padding.
	k := len(plain) - 1
	for k >= 0 && plain[k] == 0 {
		k--
	}
	if k < 0 {
		s.stop(i, ReasonNotTLS, "a protected record with no content type")
		return 0, nil, false
	}
	return plain[k], plain[:k], true
}

// nonceFor returns the nonce, ciphertext and additional data of record r
// of direction i at sequence number seqNum; false (the direction
// stopped) when r is too short to hold them.
func (s *Stream) nonceFor(i int, r []byte, seqNum uint64) (nonce [12]byte, ct, aad []byte, ok bool) {
	sd := &s.sides[i]
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], seqNum)
	overhead := sd.aead.Overhead()
	switch {
	case s.version == tls.VersionTLS13 || s.suite.kind == chacha:
		copy(nonce[:], sd.iv)
		for k := 0; k < 8; k++ {
			nonce[4+k] ^= seq[k]
		}
		ct = r[5:]
		if s.version == tls.VersionTLS13 {
			aad = r[:5]
		}
	default: // TLS 1.2 GCM: a 4-byte salt and an 8-byte explicit nonce
		if len(r) < 5+8 {
			s.stop(i, ReasonAuth, fmt.Sprintf("a protected record of %d bytes, too short for its nonce", len(r)-5))
			return nonce, nil, nil, false
		}
		copy(nonce[:4], sd.iv)
		copy(nonce[4:], r[5:13])
		ct = r[13:]
	}
	if len(ct) < overhead {
		s.stop(i, ReasonAuth, fmt.Sprintf("a protected record of %d bytes, too short for its tag", len(r)-5))
		return nonce, nil, nil, false
	}
	if aad == nil { // TLS 1.2: sequence number, type, version, length
		var a [13]byte
		copy(a[:8], seq[:])
		copy(a[8:11], r[:3])
		binary.BigEndian.PutUint16(a[11:], uint16(len(ct)-overhead))
		aad = a[:]
	}
	return nonce, ct, aad, true
}

// handshake reads handshake bytes of direction i.
func (s *Stream) handshake(i int, b []byte) {
	sd := &s.sides[i]
	keep := 0
	if sd.aead == nil {
		keep = maxHello // hellos travel in the clear
	}
	sd.hs.feed(b, keep, func(typ byte, body []byte, size int) { s.message(i, typ, body, size) })
}

// message handles one whole handshake message of direction i: body holds
// its first bytes (all of it when size fits the keep given to feed).
func (s *Stream) message(i int, typ byte, body []byte, size int) {
	sd := &s.sides[i]
	switch typ {
	case hsClientHello:
		if s.client >= 0 {
			return // the second ClientHello after a HelloRetryRequest
		}
		if len(body) < 34 {
			s.stop(i, ReasonHandshake, fmt.Sprintf("a ClientHello of %d bytes", size))
			return
		}
		s.client = i
		s.clientRandom = append([]byte(nil), body[2:34]...)
		s.sec = s.keys.lookup(s.clientRandom)
	case hsServerHello:
		s.serverHello(i, body, size)
	case hsFinished:
		if sd.phase == phaseHandshake {
			sd.toApp = true
		}
	case hsKeyUpdate:
		if s.version == tls.VersionTLS13 && sd.phase == phaseApp {
			sd.update = true
		}
	}
}

// serverHello reads the ServerHello (or HelloRetryRequest) sent on
// direction i and, for TLS 1.3, sets both directions' handshake keys.
func (s *Stream) serverHello(i int, b []byte, size int) {
	if s.client < 0 {
		s.stopBoth(ReasonNoHandshake, "a ServerHello with no ClientHello before it (the capture began mid-handshake)")
		return
	}
	if i == s.client {
		s.stopBoth(ReasonHandshake, "a ServerHello from the client")
		return
	}
	if size > len(b) {
		s.stopBoth(ReasonHandshake, fmt.Sprintf("a ServerHello of %d bytes", size))
		return
	}
	p := parser{b: b}
	legacy := p.u16()
	random := p.bytes(32)
	p.bytes(int(p.u8())) // session id
	id := p.u16()
	p.u8() // compression
	version := legacy
	if !p.bad && len(p.b) >= 2 {
		exts := parser{b: p.bytes(int(p.u16()))}
		for !exts.bad && len(exts.b) >= 4 {
			typ, ext := exts.u16(), exts.bytes(int(exts.u16()))
			if typ == 0x002b && len(ext) == 2 { // supported_versions
				version = binary.BigEndian.Uint16(ext)
			}
		}
		p.bad = p.bad || exts.bad
	}
	if p.bad {
		s.stopBoth(ReasonHandshake, "a ServerHello cut short")
		return
	}
	if bytes.Equal(random, hrrRandom[:]) {
		// A HelloRetryRequest (TLS 1.3 only): the real ServerHello
		// follows; the client's ChangeCipherSpec before it is ignored.
		s.version = tls.VersionTLS13
		return
	}
	if version != tls.VersionTLS12 && version != tls.VersionTLS13 {
		s.stopBoth(ReasonVersion, fmt.Sprintf("%s: only TLS 1.2 and 1.3 are read", tls.VersionName(version)))
		return
	}
	st := suites[id]
	if st == nil || st.tls13 != (version == tls.VersionTLS13) {
		s.stopBoth(ReasonSuite, fmt.Sprintf("%s: only AES-GCM and ChaCha20-Poly1305 suites are read", tls.CipherSuiteName(id)))
		return
	}
	s.version, s.suite = version, st
	s.serverRandom = append([]byte(nil), random...)
	if version != tls.VersionTLS13 {
		return // TLS 1.2: the keys come with ChangeCipherSpec
	}
	sec := s.sec
	if sec == nil || sec.clientHS == nil || sec.serverHS == nil {
		s.stopBoth(ReasonNoKey, s.noKey("CLIENT_HANDSHAKE_TRAFFIC_SECRET and SERVER_HANDSHAKE_TRAFFIC_SECRET"))
		return
	}
	s.setKeys13(i, sec.serverHS, phaseHandshake)
	s.setKeys13(s.client, sec.clientHS, phaseHandshake)
}

// noKey says which session the key log lacked.
func (s *Stream) noKey(labels string) string {
	return fmt.Sprintf("no %s for client random %s… (%d sessions in the key log)", labels, hex.EncodeToString(s.clientRandom[:8]), s.keys.Sessions())
}

// trafficSecret is direction i's first application traffic secret.
func (s *Stream) trafficSecret(i int) []byte {
	if i == s.client {
		return s.sec.clientAP
	}
	return s.sec.serverAP
}

// setKeys13 sets direction i's TLS 1.3 record keys from a traffic secret.
func (s *Stream) setKeys13(i int, secret []byte, ph phase) {
	sd := &s.sides[i]
	if secret == nil {
		s.stop(i, ReasonNoKey, s.noKey("CLIENT_TRAFFIC_SECRET_0 and SERVER_TRAFFIC_SECRET_0"))
		return
	}
	a, iv, err := s.suite.keys13(secret)
	if err != nil {
		s.stop(i, ReasonNoKey, err.Error())
		return
	}
	sd.aead, sd.iv, sd.seq, sd.secret, sd.phase = a, iv, 0, secret, ph
}

// changeCipher12 sets direction i's TLS 1.2 record keys at its
// ChangeCipherSpec.
func (s *Stream) changeCipher12(i int) {
	if s.suite == nil || s.client < 0 {
		s.stop(i, ReasonNoHandshake, "a ChangeCipherSpec before the hellos")
		return
	}
	sd := &s.sides[i]
	sd.seq, sd.phase = 0, phaseApp
	if s.sec == nil || s.sec.master == nil {
		// A resumed session: its abbreviated handshake writes no key log
		// line; its master secret is the session's it resumes, found on
		// the first protected record (findMaster).
		sd.pendingMaster = true
		return
	}
	s.setKeys12(i, s.sec.master)
}

// setKeys12 sets direction i's TLS 1.2 record keys from a master secret.
func (s *Stream) setKeys12(i int, master []byte) bool {
	c, sv, civ, siv, err := s.suite.keys12(master, s.clientRandom, s.serverRandom)
	if err != nil {
		s.stopBoth(ReasonNoKey, err.Error())
		return false
	}
	sd := &s.sides[i]
	if i == s.client {
		sd.aead, sd.iv = c, civ
	} else {
		sd.aead, sd.iv = sv, siv
	}
	return true
}

// findMaster finds the master secret of a resumed TLS 1.2 session: the
// one of the key log's under which r, direction i's first protected
// record, authenticates. Each secret costs a key expansion and the
// opening of one short record, so they are tried most recent first
// (a session resumes a recent one), within the key log's budget for it
// (see [KeyLog.spendResume]): a key log of a million secrets cost every
// resumed connection of a capture a million trials.
func (s *Stream) findMaster(i int, r []byte) bool {
	sd := &s.sides[i]
	if s.sec != nil && s.sec.master != nil { // found on the other direction
		return s.setKeys12(i, s.sec.master)
	}
	tried, spent := 0, false
	if s.keys != nil && len(r) <= 5+8+16+64 {
		ms := s.keys.masters
		for j := len(ms) - 1; j >= 0; j-- {
			if !s.keys.spendResume() {
				spent = true
				break
			}
			tried++
			if !s.setKeys12(i, ms[j]) {
				continue
			}
			if s.authentic(i, r, 0) {
				s.sec = &secrets{master: ms[j]}
				return true
			}
		}
	}
	sd.aead = nil
	why := "; nor does any of its master secrets open the first protected record, as that of a resumed session would"
	if spent {
		why = fmt.Sprintf("; nor does any of the %d most recent of its %d master secrets open the first protected record, as that of a resumed session would (the search for resumed sessions' secrets spent its budget: %d trials, and one for every %d bytes read)",
			tried, len(s.keys.masters), resumeBase, resumePerTrial)
	}
	s.stopBoth(ReasonNoKey, s.noKey("CLIENT_RANDOM (master secret)")+why)
	return false
}

// hsReader splits a direction's handshake bytes into messages, which may
// span records or share one.
type hsReader struct {
	hdr  [4]byte
	nhdr int
	typ  byte
	size int    // the message's body length
	left int    // body bytes still to come
	body []byte // its first bytes, up to the keep of the call that began it
	keep int
}

// feed reads b, calling fn with every message completed.
func (h *hsReader) feed(b []byte, keep int, fn func(typ byte, body []byte, size int)) {
	for len(b) > 0 {
		if h.nhdr < 4 {
			k := copy(h.hdr[h.nhdr:], b)
			h.nhdr += k
			b = b[k:]
			if h.nhdr < 4 {
				return
			}
			h.typ = h.hdr[0]
			h.size = int(h.hdr[1])<<16 | int(h.hdr[2])<<8 | int(h.hdr[3])
			h.left, h.keep, h.body = h.size, keep, h.body[:0]
		}
		k := min(h.left, len(b))
		if room := h.keep - len(h.body); room > 0 {
			h.body = append(h.body, b[:min(k, room)]...)
		}
		h.left -= k
		b = b[k:]
		if h.left == 0 {
			h.nhdr = 0
			fn(h.typ, h.body, h.size)
		}
	}
}

// parser reads a handshake message's fields; bad turns true past its end.
type parser struct {
	b   []byte
	bad bool
}

func (p *parser) bytes(n int) []byte {
	if p.bad || n > len(p.b) {
		p.bad, p.b = true, nil
		return nil
	}
	out := p.b[:n:n]
	p.b = p.b[n:]
	return out
}

func (p *parser) u8() byte {
	if b := p.bytes(1); !p.bad {
		return b[0]
	}
	return 0
}

func (p *parser) u16() uint16 {
	if b := p.bytes(2); !p.bad {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}
