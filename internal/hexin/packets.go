package hexin

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
)

// Segment is the TCP payload of one packet of a dump.
type Segment struct {
	Src, Dst netip.AddrPort
	Payload  []byte
}

// Flow names the segment's direction, "10.0.0.1:50000 -> 10.0.0.2:9092".
func (s Segment) Flow() string { return s.Src.String() + " -> " + s.Dst.String() }

// TCPSegments reads the packets of a tcpdump -X (IP) or -XX (Ethernet or
// Linux cooked v1/v2) dump as IPv4/IPv6 TCP packets and returns their payloads.
// ok is false when the first packet is not recognisably one, so that plain
// dumps of Kafka bytes are left alone. Packets that are not TCP are
// skipped; an IP or TCP header that is cut short is an error. Its time
// and memory are proportional to the dump's size.
func (d *Dump) TCPSegments() (segs []Segment, ok bool, err error) {
	if len(d.Packets) == 0 {
		return nil, false, nil
	}
	link := detectLink(d.Packets[0])
	if link < 0 {
		return nil, false, nil
	}
	var l segmentList
	for i, p := range d.Packets {
		if src := d.source(i); src != "" && src != "Frame" {
			if strings.HasPrefix(src, "Reassembled TCP") && len(l.all) > 0 {
				l.reassembled(p)
			}
			continue // other data sources (decompressed bodies) are derived bytes
		}
		if len(p) < link {
			return nil, true, fmt.Errorf("packet %d: %d bytes, shorter than its link header", i, len(p))
		}
		s, isTCP, err := tcpPayload(p[link:])
		if err != nil {
			return nil, true, fmt.Errorf("packet %d: %w", i, err)
		}
		if isTCP && len(s.Payload) > 0 {
			l.add(s)
		}
	}
	return l.segments(), true, nil
}

// source is the data source label of packet i ("" when unlabelled).
func (d *Dump) source(i int) string {
	if i < len(d.Sources) {
		return d.Sources[i]
	}
	return ""
}

// flowKey is a segment's direction.
type flowKey struct{ src, dst netip.AddrPort }

// segmentList holds the segments of a dump as they are read: all of
// them in order (those a reassembled block replaced marked dropped), and
// per flow the indexes of its segments not dropped, so that a
// reassembled block finds the segments it replaces without walking
// every segment before it (n blocks would cost n² otherwise).
type segmentList struct {
	all     []Segment
	dropped []bool
	byFlow  map[flowKey][]int
}

func (l *segmentList) add(s Segment) {
	if l.byFlow == nil {
		l.byFlow = map[flowKey][]int{}
	}
	k := flowKey{s.Src, s.Dst}
	l.byFlow[k] = append(l.byFlow[k], len(l.all))
	l.all = append(l.all, s)
	l.dropped = append(l.dropped, false)
}

// reassembled puts the bytes of a tshark "Reassembled TCP" block in place
// of the payloads it was made of: the last segments of the flow of the
// segment before it, as many bytes as the block holds (the first of them
// keeping any bytes before the block's start). tshark's reassembly wins
// where the bytes differ.
func (l *segmentList) reassembled(data []byte) {
	last := l.all[len(l.all)-1] // never dropped: a block's bytes come last
	k := flowKey{last.Src, last.Dst}
	idx := l.byFlow[k]
	need := len(data)
	for need > 0 && len(idx) > 0 {
		i := idx[len(idx)-1]
		idx = idx[:len(idx)-1]
		need -= len(l.all[i].Payload)
		if need < 0 {
			// The earliest part also holds bytes before the block.
			l.all[i].Payload = l.all[i].Payload[:-need]
			idx = append(idx, i)
			break
		}
		l.dropped[i] = true
	}
	l.byFlow[k] = idx
	l.add(Segment{Src: last.Src, Dst: last.Dst, Payload: data})
}

// segments returns the segments not dropped, in order.
func (l *segmentList) segments() []Segment {
	var out []Segment
	for i, s := range l.all {
		if !l.dropped[i] {
			out = append(out, s)
		}
	}
	return out
}

// detectLink returns the link-header length of a packet (0 for raw IP, 14
// for Ethernet, 16 or 20 for Linux cooked capture v1 or v2), or -1 when it is none of
// them. A packet counts as IP when its IP length field matches its size.
func detectLink(p []byte) int {
	for _, l := range []int{0, 14, 16, 20} {
		if len(p) <= l {
			continue
		}
		switch l {
		case 14:
			if et := binary.BigEndian.Uint16(p[12:]); et != 0x0800 && et != 0x86dd {
				continue
			}
		case 16:
			if et := binary.BigEndian.Uint16(p[14:]); et != 0x0800 && et != 0x86dd {
				continue
			}
		case 20: // Linux cooked v2 (tcpdump -i any): protocol first
			if et := binary.BigEndian.Uint16(p); et != 0x0800 && et != 0x86dd {
				continue
			}
		}
		if ipLengthMatches(p[l:]) {
			return l
		}
	}
	return -1
}

func ipLengthMatches(p []byte) bool {
	if len(p) < 20 {
		return false
	}
	switch p[0] >> 4 {
	case 4:
		return p[0]&0x0f >= 5 && int(binary.BigEndian.Uint16(p[2:])) == len(p)
	case 6:
		return len(p) >= 40 && int(binary.BigEndian.Uint16(p[4:]))+40 == len(p)
	}
	return false
}

func tcpPayload(p []byte) (Segment, bool, error) {
	var s Segment
	var proto byte
	var src, dst netip.Addr
	var rest []byte
	switch {
	case len(p) >= 20 && p[0]>>4 == 4:
		ihl := int(p[0]&0x0f) * 4
		total := int(binary.BigEndian.Uint16(p[2:]))
		if ihl < 20 || total < ihl || total > len(p) {
			return s, false, fmt.Errorf("IPv4 header: header %d bytes, total %d, have %d", ihl, total, len(p))
		}
		proto = p[9]
		src, dst = netip.AddrFrom4([4]byte(p[12:16])), netip.AddrFrom4([4]byte(p[16:20]))
		rest = p[ihl:total]
	case len(p) >= 40 && p[0]>>4 == 6:
		n := int(binary.BigEndian.Uint16(p[4:]))
		if 40+n > len(p) {
			return s, false, fmt.Errorf("IPv6 payload length %d, have %d", n, len(p)-40)
		}
		proto = p[6] // extension headers are not followed
		src, dst = netip.AddrFrom16([16]byte(p[8:24])), netip.AddrFrom16([16]byte(p[24:40]))
		rest = p[40 : 40+n]
	default:
		return s, false, fmt.Errorf("not an IP packet (first byte 0x%02x)", p[0])
	}
	if proto != 6 {
		return s, false, nil
	}
	if len(rest) < 20 {
		return s, false, fmt.Errorf("TCP header cut short: %d bytes", len(rest))
	}
	doff := int(rest[12]>>4) * 4
	if doff < 20 || doff > len(rest) {
		return s, false, fmt.Errorf("TCP data offset %d, segment of %d bytes", doff, len(rest))
	}
	s.Src = netip.AddrPortFrom(src, binary.BigEndian.Uint16(rest[0:]))
	s.Dst = netip.AddrPortFrom(dst, binary.BigEndian.Uint16(rest[2:]))
	s.Payload = rest[doff:]
	return s, true, nil
}
