// Package tlstest makes real, recorded TLS traffic for tests of TLS
// decryption, and checks it with independent tools:
//
//   - [Conn] and [Dialer] record the raw bytes of TCP connections, both
//     directions in order, with timestamps ([Recording]); [TLSRecords]
//     finds the TLS records of a recorded direction;
//   - [WritePcap] turns recordings into a pcap or pcapng capture, one TCP
//     connection each, optionally with bytes left out as a lost segment
//     would leave them ([Recording.WithSkip]);
//   - [KafkaTLS] runs a Kafka session (franz-go's kgo against a one-broker
//     kfake cluster) over TLS 1.2 or 1.3 and returns its recordings, their
//     plaintext and the TLS key log (NSS SSLKEYLOGFILE format);
//   - [OpenSSL] and [OpenSSLKeyUpdate] run TLS sessions against
//     openssl s_server, for the TLS 1.3 cipher suites Go cannot choose and
//     for TLS 1.3 KeyUpdate, with the plaintext each side sent;
//   - [TsharkKafka], [TsharkData] and [TsharkFields] are tshark's view of
//     a capture decrypted with a key log.
//
// Where tshark or openssl is missing, the tests that need it are skipped,
// or fail when CI=true ([Tool]). It is a test-support package: only tests
// import it.
package tlstest
