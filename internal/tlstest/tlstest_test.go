package tlstest

import (
	"bytes"
	"crypto/tls"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/manifester/manifester/internal/capture"
)

// clientRandom reads the client random of the ClientHello that opens r:
// a handshake record (type 22) holding a ClientHello (type 1), whose
// random follows the record header (5 bytes), the handshake header (4)
// and the legacy version (2).
func clientRandom(t *testing.T, r *Recording) string {
	t.Helper()
	if len(r.Chunks) == 0 || r.Chunks[0].Dir != capture.ClientToServer {
		t.Fatalf("connection %s -> %s does not start with the client's bytes", r.Client, r.Server)
	}
	b := r.Chunks[0].Data
	if len(b) < 11+32 || b[0] != 22 || b[5] != 1 {
		t.Fatalf("connection %s -> %s does not start with a ClientHello: % x", r.Client, r.Server, b[:min(len(b), 16)])
	}
	return hex.EncodeToString(b[11 : 11+32])
}

// keyLog maps each client random of a key log to its labels.
func keyLog(t *testing.T, b []byte) map[string][]string {
	t.Helper()
	m := map[string][]string{}
	for _, l := range keyLogLines(b) {
		f := strings.Fields(l)
		if len(f) != 3 || len(f[1]) != 64 {
			t.Fatalf("key log line %q: want LABEL <client random> <secret>", l)
		}
		m[f[1]] = append(m[f[1]], f[0])
	}
	return m
}

// checkKeyLog checks that the key log has the secrets of every recorded
// connection, and of no other.
func checkKeyLog(t *testing.T, s *Session) {
	t.Helper()
	want := []string{"CLIENT_RANDOM"}
	if s.Version == tls.VersionTLS13 {
		want = []string{"CLIENT_HANDSHAKE_TRAFFIC_SECRET", "SERVER_HANDSHAKE_TRAFFIC_SECRET", "CLIENT_TRAFFIC_SECRET_0", "SERVER_TRAFFIC_SECRET_0"}
	}
	kl := keyLog(t, s.KeyLog)
	seen := map[string]bool{}
	for _, r := range s.Recordings {
		cr := clientRandom(t, r)
		seen[cr] = true
		for _, l := range want {
			if !slices.Contains(kl[cr], l) {
				t.Errorf("connection %s -> %s (client random %s…): no %s in the key log (has %v)", r.Client, r.Server, cr[:8], l, kl[cr])
			}
		}
	}
	for cr := range kl {
		if !seen[cr] {
			t.Errorf("key log has client random %s…, of no recorded connection", cr[:8])
		}
	}
}

// checkEncrypted checks that no plaintext shows in the recorded bytes.
func checkEncrypted(t *testing.T, s *Session, plain ...[]byte) {
	t.Helper()
	for _, r := range s.Recordings {
		for _, d := range []capture.Dir{capture.ClientToServer, capture.ServerToClient} {
			st := r.Stream(d)
			for _, p := range plain {
				if len(p) >= 8 && bytes.Contains(st, p) {
					t.Errorf("%s bytes of %s -> %s hold plaintext %q", d, r.Client, r.Server, p[:min(len(p), 40)])
				}
			}
		}
	}
}

// files writes the session's capture (pcap) and key log to a temporary
// directory.
func files(t *testing.T, s *Session) (pcapPath, keylogPath string) {
	t.Helper()
	dir := t.TempDir()
	var b bytes.Buffer
	if err := WritePcap(&b, capture.PCAP, s.Recordings...); err != nil {
		t.Fatal(err)
	}
	pcapPath, keylogPath = filepath.Join(dir, "session.pcap"), filepath.Join(dir, "session.keylog")
	if err := os.WriteFile(pcapPath, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keylogPath, s.KeyLog, 0o600); err != nil {
		t.Fatal(err)
	}
	return pcapPath, keylogPath
}

// readCapture reads a capture with package capture, which (decrypting
// nothing) sees TLS connections and no Kafka.
func readCapture(t *testing.T, recs []*Recording, f capture.Format) capture.Stats {
	t.Helper()
	var b bytes.Buffer
	if err := WritePcap(&b, f, recs...); err != nil {
		t.Fatal(err)
	}
	events := 0
	st, err := capture.Read(&b, readOptions(t), func(*capture.Event) error { events++; return nil })
	if err != nil {
		t.Fatalf("capture.Read: %v", err)
	}
	if events != 0 || st.Connections != 0 {
		t.Errorf("capture.Read found %d Kafka frames on %d connections in TLS", events, st.Connections)
	}
	return st
}

// TestKafkaTLS: Kafka sessions over TLS 1.3 and over TLS 1.2 with each
// ECDHE-ECDSA AEAD suite negotiate what was asked, produce (and consume
// back) their records, record connections that begin with a ClientHello
// whose client random has its secrets in the key log, show no plaintext
// on the wire, and tshark decrypts each connection into its plain
// recording, where the values are (produced, and fetched);
// their capture is read by package capture as so many TLS connections,
// and tshark, decrypting it with the key log, finds on every connection
// Kafka requests with correlation ids 0, 1, 2, ... each answered once:
// ApiVersions, Metadata and Produce (and Fetch when consuming); with
// versions its dissector knows, it pairs every response with its request.
func TestKafkaTLS(t *testing.T) {
	cases := []struct {
		name string
		o    Options
	}{
		{"TLS1.3", Options{MaxVersion: tls.VersionTLS13, Consume: true, MaxVersions: TsharkVersions()}},
		{"TLS1.3-newest-versions", Options{MaxVersion: tls.VersionTLS13, Records: 4}},
	}
	for _, s := range []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256} {
		cases = append(cases, struct {
			name string
			o    Options
		}{"TLS1.2-" + tls.CipherSuiteName(s), Options{MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{s}, Consume: true, MaxVersions: TsharkVersions()}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := KafkaTLS(t, c.o)
			if s.Version != c.o.MaxVersion || c.o.CipherSuites != nil && s.CipherSuite != c.o.CipherSuites[0] {
				t.Errorf("negotiated %s %s", tls.VersionName(s.Version), tls.CipherSuiteName(s.CipherSuite))
			}
			n := max(c.o.Records, 3)
			if len(s.Produced) != n || len(s.Keys) != n || !utf8Beyond(s.Produced[0]) || !utf8Beyond(s.Keys[0]) {
				t.Errorf("produced %d records (keys %q), want %d with non-ASCII keys and values", len(s.Produced), s.Keys, n)
			}
			if c.o.Consume && !slices.EqualFunc(s.Consumed, s.Produced, bytes.Equal) {
				t.Errorf("consumed %d values, produced %d: differ", len(s.Consumed), len(s.Produced))
			}
			if len(s.Recordings) == 0 {
				t.Fatal("no connection recorded")
			}
			for _, r := range s.Recordings {
				if r.Server.Port() != uint16(s.Port) || !r.Server.Addr().IsLoopback() || r.End.IsZero() {
					t.Errorf("connection %s -> %s (end %v), want the broker's port %d on loopback, closed", r.Client, r.Server, r.End, s.Port)
				}
			}
			checkKeyLog(t, s)
			checkEncrypted(t, s, append(slices.Clone(s.Produced), s.Keys...)...)
			for _, f := range []capture.Format{capture.PCAP, capture.PCAPNG} {
				if st := readCapture(t, s.Recordings, f); st.Ignored["TLS"] != int64(len(s.Recordings)) {
					t.Errorf("format %d: capture.Read ignored %v, want %d TLS connections", f, st.Ignored, len(s.Recordings))
				}
			}
			for i, v := range s.Produced {
				if !slices.ContainsFunc(s.Plain, func(p *Recording) bool { return bytes.Contains(p.Stream(capture.ClientToServer), v) }) {
					t.Errorf("value %d is in no plain request stream", i)
				}
				if c.o.Consume && !slices.ContainsFunc(s.Plain, func(p *Recording) bool { return bytes.Contains(p.Stream(capture.ServerToClient), v) }) {
					t.Errorf("value %d is in no plain response stream", i)
				}
			}
			// tshark's checks last: without tshark they skip the rest.
			checkPlain(t, s)
			pcapPath, keylogPath := files(t, s)
			msgs := TsharkKafka(t, pcapPath, keylogPath, s.Port)
			checkTsharkKafka(t, msgs, len(s.Recordings), c.o.MaxVersions != nil)
			for _, key := range []int16{18, 3, 0} {
				if !hasRequest(msgs, key) {
					t.Errorf("tshark found no %s request", kmsg.NameForKey(key))
				}
			}
			if c.o.Consume && !hasRequest(msgs, 1) {
				t.Errorf("tshark found no Fetch request")
			}
		})
	}
}

// checkPlain checks that tshark decrypts the session's capture into its
// plain recordings: each connection's two directions byte for byte.
func checkPlain(t *testing.T, s *Session) {
	t.Helper()
	if len(s.Plain) != len(s.Recordings) {
		t.Fatalf("%d plain recordings of %d connections", len(s.Plain), len(s.Recordings))
	}
	pcapPath, keylogPath := files(t, s)
	got := TsharkData(t, pcapPath, keylogPath, s.Port)
	if len(got) != len(s.Plain) {
		t.Errorf("tshark decrypts %d connections, %d were recorded", len(got), len(s.Plain))
	}
	// tshark numbers connections by their first packets, the session by
	// its dials: match them by their bytes.
	for i, p := range s.Plain {
		want := [2][]byte{p.Stream(capture.ClientToServer), p.Stream(capture.ServerToClient)}
		if len(want[0]) == 0 || len(want[1]) == 0 {
			t.Errorf("connection %d: plain recording of %d and %d bytes, want both directions", i, len(want[0]), len(want[1]))
		}
		if !slices.ContainsFunc(got, func(g [2][]byte) bool { return bytes.Equal(g[0], want[0]) && bytes.Equal(g[1], want[1]) }) {
			t.Errorf("connection %d (%d and %d plain bytes): tshark decrypts no connection into them", i, len(want[0]), len(want[1]))
		}
	}
}

func utf8Beyond(b []byte) bool { return bytes.ContainsFunc(b, func(r rune) bool { return r > 0x7f }) }

func hasRequest(msgs []Message, key int16) bool {
	return slices.ContainsFunc(msgs, func(m Message) bool { return !m.Response && m.APIKey == key })
}

// checkTsharkKafka checks tshark's messages of conns connections: on
// each, requests numbered 0, 1, 2, ... by correlation id, each answered
// by one later response (but for a consumer's Fetch, a long poll the
// broker may not have answered when the client closed, and the requests
// after it); with paired,
// tshark names each response's request, and it is the one with its
// correlation id.
func checkTsharkKafka(t *testing.T, msgs []Message, conns int, paired bool) {
	t.Helper()
	type key struct {
		stream int
		corr   int32
	}
	reqs := map[key]Message{}
	answered := map[key]bool{}
	next := map[int]int32{}
	for _, m := range msgs {
		k := key{m.Stream, m.CorrelationID}
		if !m.Response {
			if m.CorrelationID != next[m.Stream] {
				t.Errorf("frame %d: request correlation id %d on stream %d, want %d", m.Frame, m.CorrelationID, m.Stream, next[m.Stream])
			}
			next[m.Stream] = m.CorrelationID + 1
			reqs[k] = m
			continue
		}
		req, ok := reqs[k]
		switch {
		case !ok:
			t.Errorf("frame %d: response %d on stream %d answers no request before it", m.Frame, m.CorrelationID, m.Stream)
		case answered[k]:
			t.Errorf("frame %d: second response %d on stream %d", m.Frame, m.CorrelationID, m.Stream)
		case paired && (m.APIKey != req.APIKey || m.Version != req.Version):
			t.Errorf("frame %d: response %d paired by tshark with %d v%d, the request is %d v%d", m.Frame, m.CorrelationID, m.APIKey, m.Version, req.APIKey, req.Version)
		}
		answered[k] = true
	}
	// A broker answers a connection's requests in order, so a long poll
	// cut by the close leaves that Fetch and whatever the client sent
	// after it unanswered: each stream's first unanswered Fetch after its
	// last answered request.
	cut := map[int]int32{}
	for k, m := range reqs {
		if !answered[k] && m.APIKey == 1 {
			if c, ok := cut[k.stream]; !ok || k.corr < c {
				cut[k.stream] = k.corr
			}
		}
	}
	for k := range answered {
		if c, ok := cut[k.stream]; ok && k.corr > c {
			delete(cut, k.stream) // answered after it: not cut by the close
		}
	}
	for k, m := range reqs {
		if c, ok := cut[k.stream]; !answered[k] && !(ok && k.corr >= c) {
			t.Errorf("frame %d: %s request %d on stream %d has no response", m.Frame, kmsg.NameForKey(m.APIKey), k.corr, k.stream)
		}
	}
	if len(next) != conns {
		t.Errorf("tshark found Kafka requests on %d connections, want %d", len(next), conns)
	}
	t.Logf("tshark: %d Kafka messages on %d connections", len(msgs), len(next))
}

// TestTLSGap: the records of a Kafka session's client stream tile it,
// the first a handshake record, application data after; skipping 1,000
// bytes inside the largest application data record makes a capture with one
// gap of that size in a TLS connection, which tshark sees as a lost
// segment.
func TestTLSGap(t *testing.T) {
	s := KafkaTLS(t, Options{})
	var r *Recording
	for _, c := range s.Recordings {
		if r == nil || len(c.Stream(capture.ClientToServer)) > len(r.Stream(capture.ClientToServer)) {
			r = c
		}
	}
	stream := r.Stream(capture.ClientToServer)
	recs, err := TLSRecords(stream)
	if err != nil {
		t.Fatal(err)
	}
	var end int64
	var big TLSRecord
	for i, rec := range recs {
		if rec.Offset != end || i == 0 && rec.Type != 22 {
			t.Fatalf("record %d: %+v after %d bytes", i, rec, end)
		}
		end = rec.Offset + 5 + int64(rec.Length)
		if rec.Type == 23 && rec.Length > big.Length {
			big = rec
		}
	}
	// Go's records grow from one TCP segment's worth; the Produce request
	// (with a 6 KB value) fills several.
	if end != int64(len(stream)) || big.Length < 1448 {
		t.Fatalf("records tile %d of %d bytes; largest application data record %+v, want one over a TCP segment", end, len(stream), big)
	}
	const n = 1000
	gapped := r.WithSkip(capture.ClientToServer, big.Offset+100, n)
	others := slices.DeleteFunc(slices.Clone(s.Recordings), func(c *Recording) bool { return c == r })
	st := readCapture(t, append(others, gapped), capture.PCAP)
	if st.Gaps != 1 || st.GapBytes != n || st.Ignored["TLS"] != int64(len(s.Recordings)) {
		t.Errorf("%d gaps of %d bytes, ignored %v; want 1 of %d, %d TLS connections", st.Gaps, st.GapBytes, st.Ignored, n, len(s.Recordings))
	}
	g := *s
	g.Recordings = append(others, gapped)
	pcapPath, keylogPath := files(t, &g)
	if rows := TsharkFields(t, pcapPath, keylogPath, s.Port, "tcp.analysis.lost_segment", "frame.number"); len(rows) != 1 {
		t.Errorf("tshark sees %d lost segments, want 1", len(rows))
	}
}
