package capture

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Format is a capture file format.
type Format uint8

// Capture formats.
const (
	PCAP Format = iota
	PCAPNG
)

// mss is the largest TCP payload per synthesised segment.
const mss = 1448

// Writer writes synthetic captures: Ethernet, IPv4 or IPv6 and TCP
// packets carrying given byte streams, with correct sequence and
// acknowledgement numbers and checksums, in pcap or pcapng. It is how
// traffic seen by the proxy (or built by a test) becomes a file other tools
// read.
type Writer struct {
	pw      *pcapgo.Writer
	nw      *pcapgo.NgWriter
	buf     gopacket.SerializeBuffer
	packets int
}

// Packets returns the number of packets written so far.
func (w *Writer) Packets() int { return w.packets }

// NewWriter starts a capture file on w.
func NewWriter(w io.Writer, f Format) (*Writer, error) {
	cw := &Writer{buf: gopacket.NewSerializeBuffer()}
	switch f {
	case PCAP:
		cw.pw = pcapgo.NewWriterNanos(w)
		if err := cw.pw.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
			return nil, fmt.Errorf("pcap header: %w", err)
		}
	case PCAPNG:
		nw, err := pcapgo.NewNgWriter(w, layers.LinkTypeEthernet)
		if err != nil {
			return nil, fmt.Errorf("pcapng header: %w", err)
		}
		cw.nw = nw
	default:
		return nil, fmt.Errorf("unknown capture format %d", f)
	}
	return cw, nil
}

// Flush writes buffered pcapng blocks out.
func (w *Writer) Flush() error {
	if w.nw != nil {
		return w.nw.Flush()
	}
	return nil
}

// Conn starts a connection between client and server (both IPv4 or both
// IPv6). Nothing is written until [ConnWriter.Open] or data.
func (w *Writer) Conn(client, server netip.AddrPort) *ConnWriter {
	return &ConnWriter{w: w, client: client, server: server, seq: [2]uint32{1000, 500000}}
}

// ConnWriter writes the packets of one TCP connection.
type ConnWriter struct {
	w              *Writer
	client, server netip.AddrPort
	seq            [2]uint32 // next sequence number per Dir
	ipid           uint16
}

// Open writes the three-way handshake.
func (c *ConnWriter) Open(t time.Time) error {
	if err := c.packet(ClientToServer, t, nil, flags{syn: true}); err != nil {
		return err
	}
	c.seq[ClientToServer]++
	if err := c.packet(ServerToClient, t, nil, flags{syn: true, ack: true}); err != nil {
		return err
	}
	c.seq[ServerToClient]++
	return c.packet(ClientToServer, t, nil, flags{ack: true})
}

// Write writes data from one side as segments of at most 1,448 bytes.
func (c *ConnWriter) Write(d Dir, t time.Time, data []byte) error {
	for len(data) > 0 {
		n := min(len(data), mss)
		if err := c.packet(d, t, data[:n], flags{ack: true, psh: n == len(data)}); err != nil {
			return err
		}
		c.seq[d] += uint32(n)
		data = data[n:]
	}
	return nil
}

// Seq returns the sequence number of one side's next byte.
func (c *ConnWriter) Seq(d Dir) uint32 { return c.seq[d] }

// WriteSegment writes one segment carrying data at sequence number seq,
// as a retransmitted or out-of-order segment would be; the side's next
// sequence number is not changed.
func (c *ConnWriter) WriteSegment(d Dir, t time.Time, seq uint32, data []byte) error {
	next := c.seq[d]
	c.seq[d] = seq
	err := c.packet(d, t, data, flags{ack: true, psh: true})
	c.seq[d] = next
	return err
}

// Skip advances one side's sequence number by n bytes without writing
// them, as if those packets were not captured.
func (c *ConnWriter) Skip(d Dir, n int) { c.seq[d] += uint32(n) }

// Close writes FIN from both sides and the last ACK.
func (c *ConnWriter) Close(t time.Time) error {
	if err := c.packet(ClientToServer, t, nil, flags{fin: true, ack: true}); err != nil {
		return err
	}
	c.seq[ClientToServer]++
	if err := c.packet(ServerToClient, t, nil, flags{fin: true, ack: true}); err != nil {
		return err
	}
	c.seq[ServerToClient]++
	return c.packet(ClientToServer, t, nil, flags{ack: true})
}

type flags struct{ syn, ack, psh, fin, rst bool }

var (
	clientMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 1}
	serverMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 2}
)

func (c *ConnWriter) packet(d Dir, t time.Time, payload []byte, f flags) error {
	src, dst := c.client, c.server
	smac, dmac := clientMAC, serverMAC
	if d == ServerToClient {
		src, dst = dst, src
		smac, dmac = dmac, smac
	}
	tcp := &layers.TCP{
		SrcPort: layers.TCPPort(src.Port()), DstPort: layers.TCPPort(dst.Port()),
		Seq: c.seq[d], SYN: f.syn, ACK: f.ack, PSH: f.psh, FIN: f.fin, RST: f.rst, Window: 65535,
	}
	if f.ack {
		tcp.Ack = c.seq[1-d]
	}
	eth := &layers.Ethernet{SrcMAC: smac, DstMAC: dmac}
	var ip gopacket.SerializableLayer
	switch {
	case src.Addr().Is4() && dst.Addr().Is4():
		c.ipid++
		eth.EthernetType = layers.EthernetTypeIPv4
		ip4 := &layers.IPv4{Version: 4, TTL: 64, Id: c.ipid, Flags: layers.IPv4DontFragment, Protocol: layers.IPProtocolTCP,
			SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
		if err := tcp.SetNetworkLayerForChecksum(ip4); err != nil {
			return err
		}
		ip = ip4
	case src.Addr().Is6() && dst.Addr().Is6():
		eth.EthernetType = layers.EthernetTypeIPv6
		ip6 := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP,
			SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
		if err := tcp.SetNetworkLayerForChecksum(ip6); err != nil {
			return err
		}
		ip = ip6
	default:
		return errors.New("capture: client and server must both be IPv4 or both IPv6")
	}
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(c.w.buf, opts, eth, ip, tcp, gopacket.Payload(payload)); err != nil {
		return fmt.Errorf("building packet: %w", err)
	}
	data := c.w.buf.Bytes()
	ci := gopacket.CaptureInfo{Timestamp: t, CaptureLength: len(data), Length: len(data)}
	c.w.packets++
	if c.w.nw != nil {
		return c.w.nw.WritePacket(ci, data)
	}
	return c.w.pw.WritePacket(ci, data)
}
