// Package tlstest makes real, recorded TLS traffic for tests of TLS
// decryption:
//
//   - [Conn] and [Dialer] record the raw bytes of TCP connections, both
//     directions in order, with timestamps ([Recording]);
//   - [WritePcap] turns recordings into a pcap or pcapng capture, one TCP
//     connection each, optionally with bytes left out as a lost segment
//     would leave them ([Recording.WithSkip]).
//
// It is a test-support package: only tests import it.
package tlstest
