package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// MaxPacket is the longest packet record read: libpcap's largest snap
// length (tcpdump and dumpcap take no more of a packet, and a TCP
// segment of 64 KB, as segmentation offload captures them, fits). A
// pcap record longer than this is skipped unread and counted in
// [Stats.Oversized], whatever snap length the file's header claims.
const MaxPacket = 262144

// pcapReader reads the records of a pcap file (its own, not pcapgo's:
// pcapgo holds a record as long as the header's snap length allows, up
// to 4 GiB, in memory).
type pcapReader struct {
	r     io.Reader
	order binary.ByteOrder
	// nanos is the timestamp's fraction unit in nanoseconds (1 or 1000).
	nanos    int64
	linkType layers.LinkType
	hdr      [16]byte
	buf      []byte
	// oversized counts the records skipped for their length.
	oversized int64
}

// newPcapReader reads a pcap file header from r.
func newPcapReader(r io.Reader) (*pcapReader, error) {
	var h [24]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, fmt.Errorf("file header cut short: %w", err)
	}
	p := &pcapReader{r: r}
	switch binary.LittleEndian.Uint32(h[:4]) {
	case 0xa1b2c3d4:
		p.order, p.nanos = binary.LittleEndian, 1000
	case 0xa1b23c4d:
		p.order, p.nanos = binary.LittleEndian, 1
	case 0xd4c3b2a1:
		p.order, p.nanos = binary.BigEndian, 1000
	case 0x4d3cb2a1:
		p.order, p.nanos = binary.BigEndian, 1
	default:
		return nil, fmt.Errorf("magic % x", h[:4])
	}
	if v := p.order.Uint16(h[4:6]); v != 2 {
		return nil, fmt.Errorf("major version %d (want 2)", v)
	}
	// The link type's top bits say whether frames carry an FCS (and how
	// long); only the link type proper is of use.
	p.linkType = layers.LinkType(p.order.Uint32(h[20:24]) & 0x0fffffff)
	return p, nil
}

// ZeroCopyReadPacketData reads the next record. The data is only valid
// until the next call. A record longer than [MaxPacket] is skipped.
func (p *pcapReader) ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	for {
		var ci gopacket.CaptureInfo
		if _, err := io.ReadFull(p.r, p.hdr[:]); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, ci, fmt.Errorf("record header cut short: %w", err)
			}
			return nil, ci, err
		}
		frac := int64(p.order.Uint32(p.hdr[4:8])) * p.nanos
		ci.Timestamp = time.Unix(int64(p.order.Uint32(p.hdr[0:4])), frac).UTC()
		caplen, origlen := p.order.Uint32(p.hdr[8:12]), p.order.Uint32(p.hdr[12:16])
		if caplen > origlen {
			return nil, ci, fmt.Errorf("captured length %d exceeds the packet's length %d", caplen, origlen)
		}
		if caplen > MaxPacket {
			if _, err := io.CopyN(io.Discard, p.r, int64(caplen)); err != nil {
				return nil, ci, fmt.Errorf("a record of %d bytes cut short: %w", caplen, noEOF(err))
			}
			p.oversized++
			continue
		}
		ci.CaptureLength, ci.Length = int(caplen), int(origlen)
		if cap(p.buf) < int(caplen) {
			p.buf = make([]byte, max(caplen, 2048))
		}
		data := p.buf[:caplen]
		if _, err := io.ReadFull(p.r, data); err != nil {
			return nil, ci, fmt.Errorf("a record of %d bytes cut short: %w", caplen, noEOF(err))
		}
		return data, ci, nil
	}
}

// noEOF makes io.EOF, which ends a file cleanly between records, the
// io.ErrUnexpectedEOF of a record cut short.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
