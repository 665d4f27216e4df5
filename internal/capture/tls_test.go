package capture_test

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/manifester/manifester/internal/capture"
	"github.com/manifester/manifester/internal/frames"
	"github.com/manifester/manifester/internal/tlsdecrypt"
	"github.com/manifester/manifester/internal/tlstest"
)

// frame is what a test compares of an event.
type frame struct {
	Conn     int
	Client   string
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
	var kept [][]byte
	st, err := capture.Read(bytes.NewReader(data), capture.Options{Known: func(int16, int16) bool { return true }, TLSKeys: keys},
		func(ev *capture.Event) error {
			out = append(out, frame{Conn: ev.Conn.ID, Client: ev.Conn.Client.String(), Dir: ev.Dir, Offset: ev.Offset, Data: string(ev.Data),
				Paired: ev.Request != nil, Cut: ev.Cut != nil, TLS: ev.Conn.TLS, Response: ev.Dir == capture.ServerToClient})
			kept = append(kept, ev.Keep())
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	// The reader never writes to a buffer it gave away (Event.Keep).
	for i, f := range out {
		if string(kept[i]) != f.Data {
			t.Fatalf("frame %d (%d bytes) changed after it was kept", i, len(f.Data))
		}
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
// gives them, in an order of their own: by connection (its client's
// address: connection numbers follow the order of first frames, which
// the captures' timings may change), direction and offset.
func withoutTLS(fs []frame) []frame {
	out := slices.Clone(fs)
	for i := range out {
		out[i].TLS, out[i].Conn = "", 0
	}
	slices.SortStableFunc(out, func(a, b frame) int {
		switch {
		case a.Client != b.Client:
			return strings.Compare(a.Client, b.Client)
		case a.Dir != b.Dir:
			return int(a.Dir) - int(b.Dir)
		}
		return int(a.Offset - b.Offset)
	})
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
			if !slices.Equal(withoutTLS(got), withoutTLS(want)) {
				t.Errorf("decrypted: %d frames, the plaintext capture %d; first difference at %d", len(got), len(want), firstDiff(withoutTLS(got), withoutTLS(want)))
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
			if !slices.Equal(withoutTLS(got), withoutTLS(want)) || st.TLS.KeyLogBlocks != 1 || st.TLS.Decrypted != n {
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

// TestReadTLSGap: a segment lost inside a TLS record is a gap of the
// decrypted stream: decryption finds the next record and its sequence
// number, the frame the gap cuts is reported cut (its captured start the
// plaintext frame's), and the frames after it are read with the very
// offsets and bytes of a plaintext capture; the other direction and the
// other connections are read whole.
func TestReadTLSGap(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts tlstest.Options
	}{
		{"TLS 1.3", tlstest.Options{}},
		{"TLS 1.2", tlstest.Options{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			o.Records, o.Consume = 9, true
			s := tlstest.KafkaTLS(t, o)
			// The gap: inside the largest application data record sent
			// with two more after it, so that frames follow the gap (the
			// consumer's Fetch responses carry the records).
			gi, gd, n := -1, capture.ClientToServer, int64(0)
			var big tlstest.TLSRecord
			for i, r := range s.Recordings {
				for _, d := range []capture.Dir{capture.ClientToServer, capture.ServerToClient} {
					recs, err := tlstest.TLSRecords(r.Stream(d))
					if err != nil {
						t.Fatal(err)
					}
					for k, rec := range recs[:max(len(recs)-4, 0)] {
						if rec.Type == 23 && k > 2 && rec.Length > big.Length {
							gi, gd, big = i, d, rec
						}
					}
				}
			}
			if gi < 0 || big.Length < 300 {
				t.Fatalf("no application data record to cut: %+v", big)
			}
			n = min(1000, int64(big.Length)-150)
			gapped := slices.Clone(s.Recordings)
			gapped[gi] = gapped[gi].WithSkip(gd, big.Offset+100, n)
			want, _ := read(t, pcapOf(t, capture.PCAP, s.Plain...), nil)
			got, st := read(t, pcapOf(t, capture.PCAP, gapped...), keyLog(t, s.KeyLog))
			if st.Gaps != 1 || st.GapBytes != n || st.TLS.Resynced != 1 || len(st.TLS.Stopped) != 0 || st.TLS.Undecrypted == 0 || st.CutFrames != 1 {
				t.Fatalf("stats %+v", st)
			}
			type place struct {
				client string
				dir    capture.Dir
				offset int64
			}
			wantBy := map[place]frame{}
			for _, f := range withoutTLS(want) {
				wantBy[place{f.Client, f.Dir, f.Offset}] = f
			}
			cuts, after := 0, 0
			var cut frame
			gotBy := map[place]bool{}
			for _, f := range withoutTLS(got) {
				gotBy[place{f.Client, f.Dir, f.Offset}] = true
				w, ok := wantBy[place{f.Client, f.Dir, f.Offset}]
				switch {
				case f.Cut:
					cuts, cut = cuts+1, w
					if !ok || !bytes.HasPrefix([]byte(w.Data), []byte(f.Data)) || len(f.Data) >= len(w.Data) || f.Dir != gd {
						t.Errorf("the frame the gap cut: %+v", f)
					}
				case !ok || w.Data != f.Data:
					t.Errorf("%s %s offset %d: not the plaintext capture's frame", f.Client, f.Dir, f.Offset)
				}
			}
			// Every frame of the plaintext capture after the cut one, in
			// its direction, is read.
			for _, w := range withoutTLS(want) {
				if cuts == 1 && w.Client == cut.Client && w.Dir == gd && w.Offset >= cut.Offset+int64(len(cut.Data)) {
					after++
					if !gotBy[place{w.Client, w.Dir, w.Offset}] {
						t.Errorf("%s %s offset %d, after the gap: not read", w.Client, w.Dir, w.Offset)
					}
				}
			}
			if cuts != 1 || len(got) != len(want) {
				t.Errorf("%d cut frames, %d frames of %d", cuts, len(got), len(want))
			}
			t.Logf("%d frames after the gap in its direction", after)
		})
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

// TestReadTLSMidway: a capture of Kafka over TLS 1.3 that begins after
// the handshakes (and inside a record), with the SYN captured and a gap
// before the first bytes, or with no SYN at all, is joined midway: every
// frame read is one of the plaintext capture's, each direction's last
// frame among them; a capture of plain Kafka read with the same key log
// is read as before.
func TestReadTLSMidway(t *testing.T) {
	s := tlstest.KafkaTLS(t, tlstest.Options{Records: 9, Consume: true})
	keys := keyLog(t, s.KeyLog)
	want, _ := read(t, pcapOf(t, capture.PCAP, s.Plain...), nil)
	// Each direction loses its start, the handshake with it: the
	// client's up to inside its fourth record (its first application
	// data), the server's inside its eighth or its last. A connection
	// with too few client records to show their shape is left out.
	type cut struct {
		rec  *tlstest.Recording
		skip [2]int64
		last []byte // the client's last frame, from the plaintext
	}
	var cuts []cut
	for k, r := range s.Recordings {
		c := cut{rec: r}
		recs, err := tlstest.TLSRecords(r.Stream(capture.ClientToServer))
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) < 7 {
			continue
		}
		c.skip[capture.ClientToServer] = recs[3].Offset + 3
		if recs, err = tlstest.TLSRecords(r.Stream(capture.ServerToClient)); err != nil {
			t.Fatal(err)
		}
		c.skip[capture.ServerToClient] = recs[min(7, len(recs)-1)].Offset + 3
		for b := s.Plain[k].Stream(capture.ClientToServer); len(b) >= 4; {
			n := 4 + int(binary.BigEndian.Uint32(b))
			c.last, b = b[:n], b[n:]
		}
		cuts = append(cuts, c)
	}
	if len(cuts) == 0 {
		t.Fatal("no connection with records enough to cut")
	}
	wantData := map[string]bool{}
	for _, f := range want {
		wantData[f.Data] = true
	}

	// With the SYN: a gap before the first bytes.
	var gapped []*tlstest.Recording
	for _, c := range cuts {
		r := c.rec.WithSkip(capture.ClientToServer, 0, c.skip[0])
		gapped = append(gapped, r.WithSkip(capture.ServerToClient, 0, c.skip[1]))
	}
	// Without it: the bytes after the cut, as segments of a connection
	// whose start was not captured.
	var noSYN bytes.Buffer
	w, err := capture.NewWriter(&noSYN, capture.PCAP)
	if err != nil {
		t.Fatal(err)
	}
	for k, c := range cuts {
		cw := w.Conn(c.rec.Client, c.rec.Server)
		if !c.rec.Client.IsValid() || k > 0 && c.rec.Client == cuts[k-1].rec.Client {
			t.Fatalf("recordings share a client address: %v", c.rec.Client)
		}
		var off [2]int64
		for _, ch := range c.rec.Chunks {
			data := ch.Data
			if skip := c.skip[ch.Dir] - off[ch.Dir]; skip > 0 {
				data = data[min(int64(len(data)), skip):]
			}
			off[ch.Dir] += int64(len(ch.Data))
			if len(data) > 0 {
				if err := cw.Write(ch.Dir, ch.Time, data); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"gap after the SYN": pcapOf(t, capture.PCAP, gapped...), "no SYN": noSYN.Bytes()} {
		t.Run(name, func(t *testing.T) {
			got, st := read(t, data, keys)
			n := int64(len(cuts))
			if st.TLS.Midway != n || st.TLS.Decrypted != n || len(st.TLS.Stopped) != 0 || st.TLS.Connections != n {
				t.Fatalf("%d connections cut: %+v", n, st.TLS)
			}
			seen := map[string]bool{}
			for _, f := range got {
				seen[f.Data] = true
				if !f.Cut && !wantData[f.Data] {
					t.Errorf("conn %d %s offset %d: %d bytes that are no frame of the plaintext capture", f.Conn, f.Dir, f.Offset, len(f.Data))
				}
				if !strings.HasSuffix(f.TLS, ", joined midway") {
					t.Errorf("conn %d: TLS %q", f.Conn, f.TLS)
				}
			}
			// Each cut connection's last request is read.
			for _, c := range cuts {
				if !seen[string(c.last)] {
					t.Errorf("%v: its last request (%d bytes) not read", c.rec.Client, len(c.last))
				}
			}
			if len(got) == 0 {
				t.Fatal("no frames")
			}
		})
	}

	// Plain Kafka that begins mid-connection, read with the key log, is
	// read as without it.
	plainNoSYN := func(keys *tlsdecrypt.KeyLog) []frame {
		var b bytes.Buffer
		w, err := capture.NewWriter(&b, capture.PCAP)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range s.Plain {
			cw := w.Conn(r.Client, r.Server)
			for _, ch := range r.Chunks[2:] {
				if err := cw.Write(ch.Dir, ch.Time, ch.Data); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		got, _ := read(t, b.Bytes(), keys)
		return got
	}
	if with, without := plainNoSYN(keys), plainNoSYN(nil); !slices.Equal(with, without) || len(with) == 0 {
		t.Errorf("plain Kafka mid-connection: %d frames with the key log, %d without", len(with), len(without))
	}
}
