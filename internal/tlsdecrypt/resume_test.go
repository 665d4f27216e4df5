package tlsdecrypt

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// otherMasters returns n CLIENT_RANDOM lines of random (deterministic)
// client randoms and master secrets.
func otherMasters(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	for range n {
		var random [32]byte
		var master [48]byte
		for i := range random {
			random[i] = byte(rng.Uint32())
		}
		for i := range master {
			master[i] = byte(rng.Uint32())
		}
		fmt.Fprintf(&b, "CLIENT_RANDOM %x %x\n", random, master)
	}
	return b.Bytes()
}

// TestResumedSearchBounded: the master secret of a resumed TLS 1.2
// session is searched for among the key log's, most recent first, within
// a budget (resumeBase trials, and one more for every resumePerTrial
// bytes fed): a key log of 100,000 master secrets costs a connection a
// few thousand trials, not 100,000 (a capture of many such connections
// cost their product). A session whose master secret is among the most
// recent is found; one behind 100,000 newer ones is not, and the error
// says why.
func TestResumedSearchBounded(t *testing.T) {
	client := &tls.Config{MaxVersion: tls.VersionTLS12, ClientSessionCache: tls.NewLRUClientSessionCache(4)}
	server := &tls.Config{}
	first := record(t, client, server, 2)
	second := record(t, client, server, 2)
	if first.err != nil || second.err != nil || !second.state.DidResume {
		t.Fatalf("%v, %v; resumed %v", first.err, second.err, second.state.DidResume)
	}
	others := otherMasters(100000)

	recent := append(append([]byte(nil), others...), first.keylog...)
	out, st := decrypt(t, second, recent, 0)
	for d := range 2 {
		if !bytes.Equal(out[d], second.sent[d]) || st.Err(d) != nil {
			t.Errorf("master secret the most recent, direction %d: %d of %d bytes, %v", d, len(out[d]), len(second.sent[d]), st.Err(d))
		}
	}

	old := append(append([]byte(nil), first.keylog...), others...)
	out, st = decrypt(t, second, old, 0)
	var e *Error
	if err := st.Err(0); !errors.As(err, &e) || e.Reason != ReasonNoKey || len(out[0]) != 0 {
		t.Fatalf("master secret behind 100,000 others: %d bytes, %v", len(out[0]), err)
	}
	fed := 0
	for _, c := range second.chunks {
		fed += len(c.data)
	}
	if w := st.keys.resumeWork; w == 0 || w > resumeBase+int64(fed)/resumePerTrial {
		t.Errorf("%d trials for %d bytes fed", w, fed)
	}
}
