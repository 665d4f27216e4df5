package capture_test

import (
	"bytes"
	"crypto/tls"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/frames"
	"github.com/manifester/manifester/internal/tlsdecrypt"
	"github.com/manifester/manifester/internal/tlstest"
)

// frame is what a test compares of an event.
type frame struct {
	Conn     int
	Dir      capture.Dir
	Offset   int64
	Data     string
	Paired   bool
	Cut      bool
	TLS      string
	Response bool
}

// read reads a capture with keys and returns its frames and stats.
func read(t *testing.T, data []byte, keys *tlsdecrypt.KeyLog) ([]frame, capture.Stats) {
	t.Helper()
	var out []frame
	st, err := capture.Read(bytes.NewReader(data), capture.Options{Known: func(int16, int16) bool { return true }, TLSKeys: keys},
		func(ev *capture.Event) error {
			out = append(out, frame{Conn: ev.Conn.ID, Dir: ev.Dir, Offset: ev.Offset, Data: string(ev.Data),
				Paired: ev.Request != nil, Cut: ev.Cut != nil, TLS: ev.Conn.TLS, Response: ev.Dir == capture.ServerToClient})
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	return out, st
}

func pcapOf(t *testing.T, f capture.Format, recs ...*tlstest.Recording) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := tlstest.WritePcap(&b, f, recs...); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func keyLog(t *testing.T, text []byte) *tlsdecrypt.KeyLog {
	t.Helper()
	k := tlsdecrypt.NewKeyLog()
	if err := k.Read(bytes.NewReader(text), "keylog"); err != nil {
		t.Fatal(err)
	}
	return k
}

// withoutTLS is the frames as a plain capture of the same connections
// gives them.
func withoutTLS(fs []frame) []frame {
	out := slices.Clone(fs)
	for i := range out {
		out[i].TLS = ""
	}
	return out
}

// TestReadTLSKafka: a real Kafka session over TLS (kgo against kfake),
// in TLS 1.3 and in each TLS 1.2 AEAD suite, read from its capture with
// the key log, gives the very frames (bytes, offsets, pairing) that a
// capture of the same connections' plaintext gives; tshark, decrypting
// with the same key log, finds the same Kafka messages; a pcapng file
// carrying the key log in a secrets block (editcap's) needs no key log
// given; without one, every connection is counted as TLS and ignored.
func TestReadTLSKafka(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  tlstest.Options
		suite string
	}{
		{"TLS 1.3", tlstest.Options{}, "TLS 1.3 TLS_AES_128_GCM_SHA256"},
		{"TLS 1.2 AES-128-GCM", tlstest.Options{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}, "TLS 1.2 TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
		{"TLS 1.2 AES-256-GCM", tlstest.Options{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}}, "TLS 1.2 TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
		{"TLS 1.2 ChaCha20-Poly1305", tlstest.Options{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}}, "TLS 1.2 TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.Records, o.Consume, o.MaxVersions = 7, true, tlstest.TsharkVersions()
			s := tlstest.KafkaTLS(t, o)
			wire := pcapOf(t, capture.PCAP, s.Recordings...)
			want, wantSt := read(t, pcapOf(t, capture.PCAP, s.Plain...), nil)
			if len(want) < 10 {
				t.Fatalf("the plaintext capture holds %d frames", len(want))
			}
			got, st := read(t, wire, keyLog(t, s.KeyLog))
			if !slices.Equal(withoutTLS(got), want) {
				t.Errorf("decrypted: %d frames, the plaintext capture %d; first difference at %d", len(got), len(want), firstDiff(withoutTLS(got), want))
			}
			for _, f := range got {
				if f.TLS != tc.suite {
					t.Fatalf("conn %d: TLS %q, want %q", f.Conn, f.TLS, tc.suite)
				}
			}
			n := int64(len(s.Recordings))
			if st.TLS.Connections != n || st.TLS.Decrypted != n || st.TLS.Undecrypted != 0 || len(st.TLS.Stopped) != 0 || st.TLS.Records == 0 ||
				st.Requests != wantSt.Requests || st.Responses != wantSt.Responses || st.Unpaired != wantSt.Unpaired {
				t.Errorf("stats %+v; the plaintext capture's: %d requests, %d responses", st, wantSt.Requests, wantSt.Responses)
			}

			// tshark, decrypting with the key log, finds the same messages.
			dir := t.TempDir()
			pcapPath, keyPath := filepath.Join(dir, "tls.pcap"), filepath.Join(dir, "keys.log")
			if err := os.WriteFile(pcapPath, wire, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(keyPath, s.KeyLog, 0o644); err != nil {
				t.Fatal(err)
			}
			type msg struct {
				Response bool
				Corr     int32
				Key      int16
			}
			var ours, theirs []msg
			for _, f := range got {
				if f.Response {
					corr, _ := frames.PeekResponse([]byte(f.Data))
					ours = append(ours, msg{true, corr, -1})
				} else {
					key, _, corr, _ := frames.PeekRequest([]byte(f.Data))
					ours = append(ours, msg{false, corr, key})
				}
			}
			for _, m := range tlstest.TsharkKafka(t, pcapPath, keyPath, s.Port) {
				key := m.APIKey
				if m.Response {
					key = -1
				}
				theirs = append(theirs, msg{m.Response, m.CorrelationID, key})
			}
			cmp := func(a, b msg) int {
				switch {
				case a.Response != b.Response:
					if a.Response {
						return 1
					}
					return -1
				case a.Corr != b.Corr:
					return int(a.Corr - b.Corr)
				}
				return int(a.Key - b.Key)
			}
			slices.SortFunc(ours, cmp)
			slices.SortFunc(theirs, cmp)
			if !slices.Equal(ours, theirs) {
				t.Errorf("tshark finds %d Kafka messages, we %d:\n tshark %v\n ours   %v", len(theirs), len(ours), theirs, ours)
			}

			// The key log inside the file (editcap's secrets block).
			ng := filepath.Join(dir, "tls.pcapng")
			if out, err := exec.Command(tlstest.Tool(t, "editcap"), "--inject-secrets", "tls,"+keyPath, pcapPath, ng).CombinedOutput(); err != nil {
				t.Fatalf("editcap: %v: %s", err, out)
			}
			withSecrets, err := os.ReadFile(ng)
			if err != nil {
				t.Fatal(err)
			}
			got, st = read(t, withSecrets, nil)
			if !slices.Equal(withoutTLS(got), want) || st.TLS.KeyLogBlocks != 1 || st.TLS.Decrypted != n {
				t.Errorf("pcapng with its secrets: %d frames (want %d), %+v", len(got), len(want), st.TLS)
			}

			// No key log: nothing decrypted, every connection said.
			got, st = read(t, wire, nil)
			if len(got) != 0 || st.Ignored["TLS"] != n || st.TLS.Connections != 0 {
				t.Errorf("without a key log: %d frames, ignored %v, %+v", len(got), st.Ignored, st.TLS)
			}
		})
	}
}

func firstDiff(a, b []frame) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestReadTLSGap: a segment lost inside a TLS record stops that
// direction's decryption at the gap: the frame it cuts is reported cut
// (its captured start the plaintext frame's), the client's later frames
// are counted as undecrypted bytes, not guessed at, while the server's
// direction and the other connections are read whole.
func TestReadTLSGap(t *testing.T) {
	s := tlstest.KafkaTLS(t, tlstest.Options{Records: 7})
	gi := 0
	for i, r := range s.Recordings {
		if len(r.Stream(capture.ClientToServer)) > len(s.Recordings[gi].Stream(capture.ClientToServer)) {
			gi = i
		}
	}
	recs, err := tlstest.TLSRecords(s.Recordings[gi].Stream(capture.ClientToServer))
	if err != nil {
		t.Fatal(err)
	}
	var big tlstest.TLSRecord
	for _, r := range recs {
		if r.Type == 23 && r.Length > big.Length {
			big = r
		}
	}
	gapped := slices.Clone(s.Recordings)
	gapped[gi] = gapped[gi].WithSkip(capture.ClientToServer, big.Offset+100, 1000)
	want, _ := read(t, pcapOf(t, capture.PCAP, s.Plain...), nil)
	got, st := read(t, pcapOf(t, capture.PCAP, gapped...), keyLog(t, s.KeyLog))
	if st.Gaps != 1 || st.GapBytes != 1000 || st.TLS.Stopped[tlsdecrypt.ReasonGap] != 1 || len(st.TLS.Stopped) != 1 || st.TLS.Undecrypted == 0 {
		t.Fatalf("stats %+v", st)
	}
	conn := gi + 1 // connections are numbered as their first frame comes out, in dial order here
	split := func(fs []frame) (other []frame, c2s, s2c []frame) {
		for _, f := range fs {
			switch {
			case f.Conn != conn:
				other = append(other, f)
			case f.Dir == capture.ClientToServer:
				c2s = append(c2s, f)
			default:
				f.Paired = false // a response to a request the gap took is unpaired
				s2c = append(s2c, f)
			}
		}
		return
	}
	wOther, wC2S, wS2C := split(withoutTLS(want))
	gOther, gC2S, gS2C := split(withoutTLS(got))
	if !slices.Equal(gOther, wOther) || !slices.Equal(gS2C, wS2C) {
		t.Errorf("other connections or the server's direction differ: %d/%d and %d/%d frames", len(gOther), len(wOther), len(gS2C), len(wS2C))
	}
	if len(gC2S) == 0 || len(gC2S) > len(wC2S) {
		t.Fatalf("%d client frames, the plaintext capture %d", len(gC2S), len(wC2S))
	}
	last := len(gC2S) - 1
	if !slices.Equal(gC2S[:last], wC2S[:last]) {
		t.Errorf("the client's frames before the gap differ")
	}
	cut := gC2S[last]
	if !cut.Cut || cut.Offset != wC2S[last].Offset || !bytes.HasPrefix([]byte(wC2S[last].Data), []byte(cut.Data)) || len(cut.Data) >= len(wC2S[last].Data) {
		t.Errorf("the frame the gap cut: %+v", cut)
	}
}

// TestReadTLSNotDecrypted: a key log that lacks the sessions, or holds
// another session's secrets under their randoms, decrypts nothing; every
// connection is counted as ignored with the reason, and every direction
// as stopped.
func TestReadTLSNotDecrypted(t *testing.T) {
	s := tlstest.KafkaTLS(t, tlstest.Options{Records: 1})
	other := tlstest.KafkaTLS(t, tlstest.Options{Records: 1})
	wire := pcapOf(t, capture.PCAP, s.Recordings...)
	n := int64(len(s.Recordings))
	// other's secrets, under s's client randoms (the same order: both
	// clients dial alike).
	var swapped bytes.Buffer
	ours, theirs := bytes.Split(bytes.TrimSpace(s.KeyLog), []byte("\n")), bytes.Split(bytes.TrimSpace(other.KeyLog), []byte("\n"))
	if len(ours) != len(theirs) {
		t.Fatalf("key logs of %d and %d lines", len(ours), len(theirs))
	}
	for i := range ours {
		a, b := bytes.Fields(ours[i]), bytes.Fields(theirs[i])
		swapped.Write(bytes.Join([][]byte{b[0], a[1], b[2]}, []byte(" ")))
		swapped.WriteByte('\n')
	}
	for _, tc := range []struct {
		name, keys, reason string
	}{
		{"another cluster's key log", string(other.KeyLog), tlsdecrypt.ReasonNoKey},
		{"other secrets under these randoms", swapped.String(), tlsdecrypt.ReasonAuth},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, st := read(t, wire, keyLog(t, []byte(tc.keys)))
			if len(got) != 0 || st.Ignored["TLS: "+tc.reason] != n || st.TLS.Stopped[tc.reason] != 2*n || st.TLS.Decrypted != 0 || st.TLS.Undecrypted == 0 {
				t.Errorf("%d frames, ignored %v, %+v", len(got), st.Ignored, st.TLS)
			}
		})
	}
}
