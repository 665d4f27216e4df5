package tlstest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/manifester/manifester/internal/testcert"
	"github.com/manifester/manifester/internal/testdeadline"
)

// Topic is the topic [KafkaTLS] produces to.
const Topic = "tlstest"

// Options choose a [KafkaTLS] session.
type Options struct {
	// MaxVersion is the highest TLS version the client offers:
	// tls.VersionTLS12 or tls.VersionTLS13 (zero: TLS 1.3).
	MaxVersion uint16
	// CipherSuites are the TLS 1.2 suites the client offers (nil: Go's
	// defaults); TLS 1.3 ignores them.
	CipherSuites []uint16
	// Records is the number of records produced (zero: 3). Keys and
	// values are UTF-8 text beyond ASCII; every third value (the third,
	// the sixth, ...) is 6 KB long, so that its Produce request spans
	// several TCP segments.
	Records int
	// Consume reads the records back from the start of the partition.
	Consume bool
	// MaxVersions caps the request versions the client sends (nil:
	// kgo's, the newest kfake knows). [TsharkVersions] are versions
	// tshark 4.0's Kafka dissector knows.
	MaxVersions *kversion.Versions
}

// Session is recorded TLS traffic and what is needed to check its
// decryption.
type Session struct {
	// Recordings are the client's TCP connections, in dial order: the
	// bytes on the wire.
	Recordings []*Recording
	// Plain are the same connections' application data, as the client's
	// TLS connection passed it (Plain[i] is Recordings[i]'s): what a
	// decryption of Recordings[i] must give.
	Plain []*Recording
	// KeyLog holds the sessions' secrets, NSS SSLKEYLOGFILE format.
	KeyLog []byte
	// Port is the server's TCP port (the Kafka broker's for [KafkaTLS]).
	Port int
	// Version and CipherSuite are what every connection negotiated.
	Version, CipherSuite uint16
	// Keys and Produced are the keys and values of the records produced
	// ([KafkaTLS]), Consumed the values read back, in offset order.
	Keys, Produced, Consumed [][]byte
	// Plaintext is the application data sent in each direction (indexed
	// by capture.Dir), concatenated ([OpenSSL]).
	Plaintext [2][]byte
	// KeyUpdates is the number of TLS 1.3 KeyUpdates the server sent, each
	// asking the client for one back ([OpenSSLKeyUpdate]).
	KeyUpdates int
}

// record returns the key and value of record i of a [KafkaTLS] session.
func record(i int) (key, value []byte) {
	key = fmt.Appendf(nil, "ключ-%d", i)
	value = fmt.Appendf(nil, "värde %d — 日本語のテキスト ✓ ", i)
	if i%3 == 2 {
		value = append(value, strings.Repeat("Ωmega·", 800)...)
	}
	return key, value
}

// KafkaTLS runs a Kafka session over TLS and records it: a kfake
// cluster of one broker serves TLS (certificates from testcert); a kgo
// client, whose dialer records the TCP connection and does the TLS
// handshake itself with a key log, produces the records of o to [Topic]
// (one partition; synchronously, uncompressed), consumes them back with
// o.Consume, and is closed (so the connection that fetched may end with
// a Fetch, a long poll, the broker had not answered). The session's Recordings and Plain (of the
// connections whose handshake completed), KeyLog, Port, Version,
// CipherSuite, Keys, Produced and Consumed are set.
func KafkaTLS(t testing.TB, o Options) *Session {
	t.Helper()
	if o.MaxVersion == 0 {
		o.MaxVersion = tls.VersionTLS13
	}
	if o.Records == 0 {
		o.Records = 3
	}
	certs := testcert.New(t, "broker")
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, Topic), kfake.TLS(certs.ServerConfig(false)))
	if err != nil {
		t.Fatalf("starting kfake: %v", err)
	}
	t.Cleanup(cluster.Close)
	addr := cluster.ListenAddrs()[0]
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		t.Fatalf("kfake listens on %q: %v", addr, err)
	}

	var keyLog syncBuffer
	d := &Dialer{}
	var mu sync.Mutex
	var states []tls.ConnectionState
	var raw, plain []*Conn // of the connections that completed the handshake
	dial := func(ctx context.Context, network, host string) (net.Conn, error) {
		rc, err := d.DialContext(ctx, network, host)
		if err != nil {
			return nil, err
		}
		cfg := certs.ClientConfig(false)
		cfg.ServerName, _, _ = net.SplitHostPort(host)
		cfg.MaxVersion, cfg.CipherSuites, cfg.KeyLogWriter = o.MaxVersion, o.CipherSuites, &keyLog
		tc := tls.Client(rc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			rc.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", host, err)
		}
		pc := Record(tc)
		mu.Lock()
		states = append(states, tc.ConnectionState())
		raw, plain = append(raw, rc), append(plain, pc)
		mu.Unlock()
		return pc, nil
	}
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.Dialer(dial), kgo.DefaultProduceTopic(Topic),
		kgo.ProducerBatchCompression(kgo.NoCompression())}
	if o.MaxVersions != nil {
		opts = append(opts, kgo.MaxVersions(o.MaxVersions))
	}
	if o.Consume {
		opts = append(opts, kgo.ConsumeTopics(Topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatalf("kgo client: %v", err)
	}
	closed := false
	closeAll := func() {
		if !closed {
			closed = true
			cl.Close()
			for _, c := range d.Conns() {
				c.Close() // kgo closed them already; this bounds the recordings
			}
		}
	}
	t.Cleanup(closeAll)

	s := &Session{Port: int(ap.Port())}
	ctx := testdeadline.Context(t)
	recs := make([]*kgo.Record, o.Records)
	for i := range recs {
		k, v := record(i)
		s.Keys, s.Produced = append(s.Keys, k), append(s.Produced, v)
		recs[i] = &kgo.Record{Key: k, Value: v}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("producing %d records over TLS: %v", len(recs), err)
	}
	for o.Consume && len(s.Consumed) < len(recs) {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records: %v", len(s.Consumed), len(recs), err)
		}
		var errs []error
		fs.EachError(func(topic string, p int32, err error) {
			errs = append(errs, fmt.Errorf("%s/%d: %w", topic, p, err))
		})
		if len(errs) > 0 {
			t.Fatalf("consuming over TLS: %v", errors.Join(errs...))
		}
		fs.EachRecord(func(r *kgo.Record) { s.Consumed = append(s.Consumed, r.Value) })
	}
	closeAll()

	mu.Lock()
	defer mu.Unlock()
	for i := range raw {
		s.Recordings, s.Plain = append(s.Recordings, raw[i].Recording()), append(s.Plain, plain[i].Recording())
	}
	s.KeyLog = keyLog.Bytes()
	if len(s.Recordings) == 0 {
		t.Fatalf("the Kafka session made no TLS connection")
	}
	s.Version, s.CipherSuite = states[0].Version, states[0].CipherSuite
	for _, st := range states {
		if st.Version != s.Version || st.CipherSuite != s.CipherSuite {
			t.Fatalf("connections negotiated %s %s and %s %s", tls.VersionName(s.Version), tls.CipherSuiteName(s.CipherSuite),
				tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite))
		}
	}
	if s.Version > o.MaxVersion || (s.Version == tls.VersionTLS12 && o.CipherSuites != nil && !slices.Contains(o.CipherSuites, s.CipherSuite)) {
		t.Fatalf("negotiated %s %s, not what the client offered", tls.VersionName(s.Version), tls.CipherSuiteName(s.CipherSuite))
	}
	return s
}
