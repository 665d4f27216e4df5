package tlsdecrypt

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzStream feeds any bytes, split at any points and with gaps, to
// both directions of a stream whose key log has a session for every
// client random the input may name (and one more), from the start or
// joined midway under a small budget: no panic, memory bounded by a
// record, and (from the start, without gaps) bytes dropped only by a
// direction that stopped.
func FuzzStream(f *testing.F) {
	// Seeds: a real TLS 1.3 and TLS 1.2 session's first bytes, and a
	// hand-made hello pair.
	hello := func(typ byte, body []byte) []byte {
		h := []byte{22, 3, 3, 0, 0, typ, 0, 0, 0}
		binary.BigEndian.PutUint16(h[3:], uint16(len(body)+4))
		h[7], h[8] = byte(len(body)>>8), byte(len(body))
		return append(h, body...)
	}
	ch := hello(1, append([]byte{3, 3}, make([]byte, 32)...))
	sh := hello(2, append(append([]byte{3, 3}, make([]byte, 32)...), 0, 0x13, 0x01, 0, 0, 6, 0, 0x2b, 0, 2, 3, 4))
	f.Add(ch, append(sh, 23, 3, 3, 0, 20, 1, 2, 3), uint16(7))
	f.Add(append(ch, 20, 3, 3, 0, 1, 1), sh, uint16(1))
	// Joined midway: padded records under the traffic secret every
	// session has, a KeyUpdate among them.
	secret := bytes.Repeat([]byte{7}, 32)
	var mid [2][]byte
	for d := range 2 {
		p := newPeer13(f, 0x1301, secret, 0, uint64(3+d))
		mid[d] = p.record(typeAppData, []byte("abc"), 20)[2:]
		for k, pad := range []int{0, 17} {
			mid[d] = append(mid[d], p.record(typeAppData, bytes.Repeat([]byte{'x'}, 40*k), pad)...)
		}
		mid[d] = append(mid[d], p.keyUpdate()...)
		mid[d] = append(mid[d], p.record(typeAppData, []byte("after"), 3)...)
	}
	f.Add(mid[0], mid[1], uint16(0x4000|50))
	f.Fuzz(func(t *testing.T, a, b []byte, split uint16) {
		keys := NewKeyLog()
		keys.byRandom[[32]byte{}] = &secrets{clientAP: secret, serverAP: secret}
		for _, in := range [][]byte{a, b} {
			// Any 32 bytes at a ClientHello's random have secrets.
			if len(in) >= 11+32 {
				r := [32]byte(in[11 : 11+32])
				keys.byRandom[r] = &secrets{master: append(secret, secret[:16]...), clientHS: secret, serverHS: secret, clientAP: secret, serverAP: secret}
			}
		}
		s := NewStream(keys)
		midway := split&0x4000 != 0
		if midway {
			budget := int64(1 << 14)
			s.JoinMidway(&budget)
		}
		n := int(split%64) + 1
		var accounted [2]int
		ins := [2][]byte{a, b}
		gaps := split&0x8000 != 0 // every fifth piece is lost
		for round := 0; len(ins[0])+len(ins[1]) > 0; round++ {
			for d := range 2 {
				k := min(n, len(ins[d]))
				if gaps && round%5 == 4 {
					dropped, _ := s.Gap(d, int64(k))
					accounted[d] += dropped
					ins[d] = ins[d][k:]
					continue
				}
				plain, dropped, _ := s.Feed(d, ins[d][:k])
				if len(plain) > k+s.Pending(d)+maxRecord {
					t.Fatalf("%d bytes of plaintext from %d", len(plain), k)
				}
				accounted[d] += dropped
				ins[d] = ins[d][k:]
			}
			if s.Pending(0) > 5+maxRecord+n || s.Pending(1) > 5+maxRecord+n {
				t.Fatalf("pending %d and %d bytes", s.Pending(0), s.Pending(1))
			}
		}
		for d := range 2 {
			if !gaps && !midway && s.Err(d) == nil && accounted[d] != 0 {
				t.Fatalf("direction %d dropped %d bytes but did not stop", d, accounted[d])
			}
		}
		_ = s.Session()
	})
}
