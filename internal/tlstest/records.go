package tlstest

import "fmt"

// TLSRecord is where one TLS record lies in a direction's byte stream.
type TLSRecord struct {
	// Offset is the stream offset of the record's 5-byte header.
	Offset int64
	// Type is the record's content type as sent: 22 handshake, 20
	// change_cipher_spec, 21 alert, 23 application data (every encrypted
	// TLS 1.3 record, whatever it holds).
	Type uint8
	// Length is the length of the record's body, after the header.
	Length int
}

// TLSRecords splits stream, one direction of a TLS connection from its
// first byte ([Recording.Stream]), into its records, for tests that cut
// a capture at a chosen place (inside the third application data
// record, across two records, ...). A record the stream ends in the
// middle of is an error.
func TLSRecords(stream []byte) ([]TLSRecord, error) {
	var rs []TLSRecord
	for off := 0; off < len(stream); {
		if len(stream)-off < 5 {
			return rs, fmt.Errorf("TLS record header at %d: %d bytes left", off, len(stream)-off)
		}
		h := stream[off:]
		if h[1] != 3 {
			return rs, fmt.Errorf("TLS record at %d: version %d.%d is not TLS", off, h[1], h[2])
		}
		n := int(h[3])<<8 | int(h[4])
		if len(stream)-off-5 < n {
			return rs, fmt.Errorf("TLS record at %d: %d bytes of %d", off, len(stream)-off-5, n)
		}
		rs = append(rs, TLSRecord{Offset: int64(off), Type: h[0], Length: n})
		off += 5 + n
	}
	return rs, nil
}
