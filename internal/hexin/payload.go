package hexin

import (
	"errors"
	"fmt"
)

// Payload returns the bytes the dump carries: for a dump of IP packets
// (tcpdump -X/-XX, see TCPSegments) the TCP payloads of its packets
// joined, which must all go one way; for any other dump its bytes.
func (d *Dump) Payload() ([]byte, error) {
	segs, isPackets, err := d.TCPSegments()
	if err != nil {
		return nil, fmt.Errorf("reading the dump's packets: %w", err)
	}
	if !isPackets {
		return d.Bytes(), nil
	}
	var out []byte
	for _, s := range segs {
		if s.Flow() != segs[0].Flow() {
			return nil, fmt.Errorf("the dump holds TCP payloads of more than one direction (%s and %s); decode one direction at a time, or write a capture and use --pcap", segs[0].Flow(), s.Flow())
		}
		out = append(out, s.Payload...)
	}
	if len(out) == 0 {
		return nil, errors.New("the dump's packets carry no TCP payload")
	}
	return out, nil
}

// Input reads the bytes of a file or a pipe that is to be decoded: raw
// binary as it is, or hex text (see DecodeText) parsed as a dump (see
// ParseDump) and reduced to its payload (see Dump.Payload).
func Input(raw []byte) ([]byte, error) {
	text, isText := DecodeText(raw)
	if !isText {
		return raw, nil
	}
	return TextInput(text)
}

// TextInput is the payload of a dump given as text (see Input).
func TextInput(text string) ([]byte, error) {
	d, err := ParseDump(text)
	if err != nil {
		return nil, err
	}
	return d.Payload()
}
