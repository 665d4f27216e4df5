package tlsdecrypt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"hash"

	"golang.org/x/crypto/chacha20poly1305"
)

// aeadKind is a record protection algorithm.
type aeadKind uint8

const (
	aesGCM aeadKind = iota
	chacha
)

// suite is what decrypting needs of a cipher suite.
type suite struct {
	id     uint16
	tls13  bool
	kind   aeadKind
	keyLen int
	hash   func() hash.Hash
}

// suites are the AEAD cipher suites this package decrypts: TLS 1.3's
// GCM and ChaCha20-Poly1305 suites, and TLS 1.2's ECDHE, DHE and RSA key
// exchanges with AES-GCM or ChaCha20-Poly1305 (RFC 5288, 5289, 7905). CBC,
// CCM and export suites are not read.
var suites = map[uint16]*suite{}

func init() {
	add := func(tls13 bool, kind aeadKind, keyLen int, h func() hash.Hash, ids ...uint16) {
		for _, id := range ids {
			suites[id] = &suite{id: id, tls13: tls13, kind: kind, keyLen: keyLen, hash: h}
		}
	}
	add(true, aesGCM, 16, sha256.New, 0x1301)                             // TLS_AES_128_GCM_SHA256
	add(true, aesGCM, 32, sha512.New384, 0x1302)                          // TLS_AES_256_GCM_SHA384
	add(true, chacha, 32, sha256.New, 0x1303)                             // TLS_CHACHA20_POLY1305_SHA256
	add(false, aesGCM, 16, sha256.New, 0xc02b, 0xc02f, 0x009c, 0x009e)    // *_AES_128_GCM_SHA256
	add(false, aesGCM, 32, sha512.New384, 0xc02c, 0xc030, 0x009d, 0x009f) // *_AES_256_GCM_SHA384
	add(false, chacha, 32, sha256.New, 0xcca8, 0xcca9, 0xccaa)            // *_CHACHA20_POLY1305_SHA256
}

// newAEAD returns the record cipher for key.
func (s *suite) newAEAD(key []byte) (cipher.AEAD, error) {
	if s.kind == chacha {
		return chacha20poly1305.New(key)
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// expandLabel is TLS 1.3's HKDF-Expand-Label with an empty context
// (RFC 8446, section 7.1).
func (s *suite) expandLabel(secret []byte, label string, n int) ([]byte, error) {
	full := "tls13 " + label
	info := make([]byte, 0, 4+len(full))
	info = binary.BigEndian.AppendUint16(info, uint16(n))
	info = append(info, byte(len(full)))
	info = append(info, full...)
	info = append(info, 0)
	return hkdf.Expand(s.hash, secret, string(info), n)
}

// keys13 returns the record key and IV of a TLS 1.3 traffic secret.
func (s *suite) keys13(secret []byte) (cipher.AEAD, []byte, error) {
	key, err := s.expandLabel(secret, "key", s.keyLen)
	if err != nil {
		return nil, nil, err
	}
	iv, err := s.expandLabel(secret, "iv", 12)
	if err != nil {
		return nil, nil, err
	}
	a, err := s.newAEAD(key)
	return a, iv, err
}

// nextSecret is a TLS 1.3 KeyUpdate's next traffic secret.
func (s *suite) nextSecret(secret []byte) ([]byte, error) {
	return s.expandLabel(secret, "traffic upd", s.hash().Size())
}

// keys12 returns the client's and the server's record ciphers and IVs
// (the 4-byte salt of GCM, the 12-byte IV of ChaCha20-Poly1305) of a TLS
// 1.2 session (RFC 5246, section 6.3; these suites have no MAC key).
func (s *suite) keys12(master, clientRandom, serverRandom []byte) (c, sv cipher.AEAD, civ, siv []byte, err error) {
	ivLen := 4
	if s.kind == chacha {
		ivLen = 12
	}
	seed := make([]byte, 0, 64)
	seed = append(append(seed, serverRandom...), clientRandom...)
	block := prf12(s.hash, master, "key expansion", seed, 2*s.keyLen+2*ivLen)
	ck, sk := block[:s.keyLen], block[s.keyLen:2*s.keyLen]
	civ, siv = block[2*s.keyLen:2*s.keyLen+ivLen], block[2*s.keyLen+ivLen:]
	if c, err = s.newAEAD(ck); err != nil {
		return
	}
	sv, err = s.newAEAD(sk)
	return
}

// prf12 is TLS 1.2's PRF: P_hash(secret, label + seed), n bytes.
func prf12(h func() hash.Hash, secret []byte, label string, seed []byte, n int) []byte {
	ls := append([]byte(label), seed...)
	mac := hmac.New(h, secret)
	mac.Write(ls)
	a := mac.Sum(nil)
	out := make([]byte, 0, n+mac.Size())
	for len(out) < n {
		mac.Reset()
		mac.Write(a)
		mac.Write(ls)
		out = mac.Sum(out)
		mac.Reset()
		mac.Write(a)
		a = mac.Sum(a[:0])
	}
	return out[:n]
}
