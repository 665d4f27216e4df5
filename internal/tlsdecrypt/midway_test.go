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
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
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

// keyLogLines returns the key log lines of a session's traffic secrets,
// under a random client random.
func keyLogLines(client, server []byte) string {
	random := hex.EncodeToString(randomBytes(32))
	return fmt.Sprintf("CLIENT_TRAFFIC_SECRET_0 %s %x\nSERVER_TRAFFIC_SECRET_0 %s %x\n", random, client, random, server)
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

// TestJoinMidwayGenerations: a session captured after KeyUpdates (each
// direction at its own generation, ahead of or behind the other) is
// joined at the generation each direction is at, and the KeyUpdates
// after the join are followed: each direction decrypts to the content
// of every record after the one the capture began inside, padded or
// not.
func TestJoinMidwayGenerations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		suite uint16
		gen   [2]int    // the client's and the server's generation
		seq   [2]uint64 // their first record's sequence number
		first int       // the direction fed first
		decoy bool      // another session's lines come first in the key log
	}{
		{"AES-128-GCM, the client joined first, ahead", 0x1301, [2]int{2, 1}, [2]uint64{40, 5}, 0, false},
		{"AES-256-GCM, the server joined first, behind, another session", 0x1302, [2]int{4, 2}, [2]uint64{7, 900}, 1, true},
		{"ChaCha20-Poly1305, the client joined first, ahead", 0x1303, [2]int{1, 0}, [2]uint64{300, 2}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			size := 32
			if tc.suite == 0x1302 {
				size = 48
			}
			secrets := [2][]byte{randomBytes(size), randomBytes(size)}
			keylog := keyLogLines(secrets[0], secrets[1])
			if tc.decoy {
				keylog = keyLogLines(randomBytes(size), randomBytes(size)) + keylog
			}
			keys := NewKeyLog()
			if err := keys.Read(strings.NewReader(keylog), "keylog"); err != nil {
				t.Fatal(err)
			}
			// Each direction: a record the capture begins inside, records
			// of several paddings (the first whole one's too), a KeyUpdate,
			// more records under the next generation.
			var wire, want [2][]byte
			for d := range 2 {
				p := newPeer13(t, tc.suite, secrets[d], tc.gen[d], tc.seq[d])
				wire[d] = p.record(typeAppData, content(100+d, 50), 0)[3:]
				for k, pad := range []int{70, 0, 1, 16, 300} {
					c := content(10*d+k, 20+k*k*97%1500)
					wire[d] = append(wire[d], p.record(typeAppData, c, pad)...)
					want[d] = append(want[d], c...)
				}
				wire[d] = append(wire[d], p.keyUpdate()...)
				for k, pad := range []int{0, 40} {
					c := content(20*d+k, 300+k)
					wire[d] = append(wire[d], p.record(typeAppData, c, pad)...)
					want[d] = append(want[d], c...)
				}
			}
			st := NewStream(keys)
			st.JoinMidway(nil)
			var out [2][]byte
			for _, d := range []int{tc.first, 1 - tc.first} {
				for b := wire[d]; len(b) > 0; {
					n := min(len(b), 700)
					plain, _, err := st.Feed(d, b[:n])
					if err != nil {
						t.Fatalf("direction %d: %v", d, err)
					}
					out[d] = append(out[d], plain...)
					b = b[n:]
				}
			}
			for d := range 2 {
				if !bytes.Equal(out[d], want[d]) {
					t.Errorf("direction %d: decrypted %d bytes, want %d", d, len(out[d]), len(want[d]))
				}
			}
			if got := st.Session(); got != "TLS 1.3 "+tls13Name(tc.suite) || st.Client() != 0 || st.gen != tc.gen[tc.first] {
				t.Errorf("session %q, client %d, joined at generation %d (want %d)", got, st.Client(), st.gen, tc.gen[tc.first])
			}
		})
	}
}

// TestJoinMidwayBudgetGenerations: the generations tried spend the
// same budget as generation 0: a direction three KeyUpdates in is
// joined with a budget that covers the trials of the generations before
// it, and stops, saying so, with one that does not; what is spent past
// the budget is at most one charge.
func TestJoinMidwayBudgetGenerations(t *testing.T) {
	secrets := [2][]byte{randomBytes(48), randomBytes(48)}
	keys := NewKeyLog()
	if err := keys.Read(strings.NewReader(keyLogLines(secrets[0], secrets[1])), "keylog"); err != nil {
		t.Fatal(err)
	}
	p := newPeer13(t, 0x1302, secrets[0], 3, 10)
	wire := append(p.record(typeAppData, content(1, 500), 0), p.record(typeAppData, content(2, 500), 0)...)
	// Generations 0 to 2 of both secrets, each all its sequence numbers
	// (AES-256-GCM alone makes 48-byte secrets).
	before := int64(3 * 2 * MidwayRecords)
	for _, tc := range []struct {
		budget int64
		joined bool
	}{{before - MidwayRecords/2, false}, {before + MidwayRecords/2, true}} {
		budget := tc.budget
		st := NewStream(keys)
		st.JoinMidway(&budget)
		plain, _, err := st.Feed(0, wire)
		if tc.joined {
			if err != nil || !bytes.Equal(plain, append(content(1, 500), content(2, 500)...)) || st.gen != 3 {
				t.Errorf("budget %d: %d bytes, generation %d, %v", tc.budget, len(plain), st.gen, err)
			}
			if spent := tc.budget - budget; spent < before || spent != st.work {
				t.Errorf("budget %d: %d spent, the stream counted %d, generations 0 to 2 cost %d", tc.budget, spent, st.work, before)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "the trials this input allows are spent") || budget >= 0 || budget < -maxMidwayCharge {
			t.Errorf("budget %d: %v; budget left %d", tc.budget, err, budget)
		}
	}
}

// TestJoinMidwayGenerationBound: a direction more KeyUpdates in than
// the generations tried is not joined, and said so, once every
// generation of every secret has been tried at every sequence number.
func TestJoinMidwayGenerationBound(t *testing.T) {
	secrets := [2][]byte{randomBytes(48), randomBytes(48)}
	keys := NewKeyLog()
	if err := keys.Read(strings.NewReader(keyLogLines(secrets[0], secrets[1])), "keylog"); err != nil {
		t.Fatal(err)
	}
	p := newPeer13(t, 0x1302, secrets[0], midwayGenerations, 0)
	r := p.record(typeAppData, content(1, 100), 0)
	wire := append(bytes.Clone(r), p.record(typeAppData, content(2, 100), 0)...)
	st := NewStream(keys)
	st.JoinMidway(nil)
	plain, dropped, err := st.Feed(0, wire)
	if len(plain) != 0 || dropped != len(wire) || err == nil || !strings.Contains(err.Error(), fmt.Sprintf("nor the next %d that KeyUpdates make of each", midwayGenerations-1)) {
		t.Errorf("%d bytes, %d dropped, %v", len(plain), dropped, err)
	}
	// Two secrets, each at every generation and sequence number.
	least := int64(2 * midwayGenerations * MidwayRecords)
	if most := least + 2*midwayGenerations*2*bulkWork(len(r)); st.work < least || st.work > most {
		t.Errorf("%d trials, want %d to %d", st.work, least, most)
	}
}
