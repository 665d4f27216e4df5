package tlsdecrypt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"fmt"
	"hash"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"
)

// peer13 protects TLS 1.3 application records as a peer does, with Go's
// standard ciphers and its own HKDF-Expand-Label (RFC 8446, sections 5.2,
// 5.3, 7.1-7.3), apart from the package's code: records padded as asked,
// KeyUpdates, any generation and sequence number to start at.
type peer13 struct {
	t      testing.TB
	suite  uint16 // 0x1301, 0x1302 or 0x1303
	secret []byte
	aead   cipher.AEAD
	iv     []byte
	seq    uint64
}

// newPeer13 returns a peer whose traffic secret is secret0 after gen
// KeyUpdates, its next record numbered seq.
func newPeer13(t testing.TB, suite uint16, secret0 []byte, gen int, seq uint64) *peer13 {
	p := &peer13{t: t, suite: suite, secret: secret0}
	for range gen {
		p.secret = p.expand(p.secret, "traffic upd", p.hash()().Size())
	}
	p.rekey()
	p.seq = seq
	return p
}

func (p *peer13) hash() func() hash.Hash {
	if p.suite == 0x1302 {
		return sha512.New384
	}
	return sha256.New
}

// expand is HKDF-Expand-Label with an empty context.
func (p *peer13) expand(secret []byte, label string, n int) []byte {
	var info []byte
	info = binary.BigEndian.AppendUint16(info, uint16(n))
	info = append(info, byte(len("tls13 "+label)))
	info = append(info, "tls13 "+label...)
	info = append(info, 0)
	out, err := hkdf.Expand(p.hash(), secret, string(info), n)
	if err != nil {
		p.t.Fatal(err)
	}
	return out
}

func (p *peer13) rekey() {
	keyLen := 32
	if p.suite == 0x1301 {
		keyLen = 16
	}
	key, err := p.expand(p.secret, "key", keyLen), error(nil)
	if p.suite == 0x1303 {
		p.aead, err = chacha20poly1305.New(key)
	} else {
		var b cipher.Block
		if b, err = aes.NewCipher(key); err == nil {
			p.aead, err = cipher.NewGCM(b)
		}
	}
	if err != nil {
		p.t.Fatal(err)
	}
	p.iv, p.seq = p.expand(p.secret, "iv", 12), 0
}

// record returns the next record: content of inner type typ, then pad
// zeros.
func (p *peer13) record(typ byte, content []byte, pad int) []byte {
	inner := append(append(bytes.Clone(content), typ), make([]byte, pad)...)
	hdr := []byte{typeAppData, 3, 3, 0, 0}
	binary.BigEndian.PutUint16(hdr[3:], uint16(len(inner)+p.aead.Overhead()))
	nonce := bytes.Clone(p.iv)
	var seq [8]byte
	binary.BigEndian.PutUint64(seq[:], p.seq)
	for k := range seq {
		nonce[4+k] ^= seq[k]
	}
	p.seq++
	return p.aead.Seal(bytes.Clone(hdr), nonce, inner, hdr)
}

// keyUpdate returns a KeyUpdate record (not asking for one back) and
// moves to the next generation.
func (p *peer13) keyUpdate() []byte {
	r := p.record(typeHandshake, []byte{hsKeyUpdate, 0, 0, 1, 0}, 0)
	p.secret = p.expand(p.secret, "traffic upd", p.hash()().Size())
	p.rekey()
	return r
}

// randomBytes returns n random bytes.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// content is n bytes of application data, distinct for each k.
func content(k, n int) []byte {
	return bytes.Repeat(fmt.Appendf(nil, "record %d; ", k), n/10+1)[:n]
}

// TestJoinMidwayPadded: a record padded by any length (none, a few
// bytes, to the end of a key stream block, across blocks, longer than
// one) is found at its sequence number, in either kind of suite: the
// AES-GCM test, on the tag, does not read the padding; ChaCha20-Poly1305's
// reads back past it to the content type.
func TestJoinMidwayPadded(t *testing.T) {
	for _, id := range []uint16{0x1301, 0x1303} {
		secret := randomBytes(32)
		for _, tc := range []struct{ n, pad int }{
			{100, 0}, {100, 1}, {5, 17}, {47, 16}, {63, 1}, {60, 10}, {15, 1}, {10, 200}, {0, 5}, {1000, 300}, {3000, 64}, {64, 64},
		} {
			p := newPeer13(t, id, secret, 0, 37)
			r := p.record(typeAppData, content(tc.n, tc.n), tc.pad)
			s := NewStream(nil)
			seq, ok := s.searchSeq(0, suites[id], secret, r)
			if !ok || seq != 37 || s.Err(0) != nil {
				t.Errorf("%s: %d bytes padded by %d: sequence number %d, %v (want 37); %v", tls13Name(id), tc.n, tc.pad, seq, ok, s.Err(0))
			}
		}
	}
}

// tls13Name is a TLS 1.3 suite's name.
func tls13Name(id uint16) string {
	return map[uint16]string{0x1301: "TLS_AES_128_GCM_SHA256", 0x1302: "TLS_AES_256_GCM_SHA384", 0x1303: "TLS_CHACHA20_POLY1305_SHA256"}[id]
}
