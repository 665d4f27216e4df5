package capture

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// UDP ports whose datagrams are read as tunnels: VXLAN on IANA's port and
// on Linux's older default (flannel's and other overlays'), Geneve on
// IANA's. Traffic mirroring (AWS's sends VXLAN), overlay networks and
// collectors deliver captures wrapped in these; the TCP inside is read as
// if captured directly.
const (
	portVXLAN      = 4789
	portVXLANLinux = 8472
	portGeneve     = 6081
)

// maxLayers bounds the headers one packet may stack (tags, tunnels,
// extension headers). Each consumes bytes, so a packet could not stack
// more than its length allows; the bound keeps a crafted one cheap.
const maxLayers = 32

// Tunnel kinds, the keys of [Stats.Tunnels].
const (
	TunnelVXLAN  = "VXLAN"
	TunnelGeneve = "Geneve"
	TunnelGRE    = "GRE"
	TunnelIPinIP = "IP in IP"
)

// packetLayers is the outcome of walking a packet's headers.
type packetLayers uint8

const (
	layersTCP         packetLayers = iota // a TCP segment, in rd.tcp, between src and dst
	layersNotTCP                          // no TCP inside (ARP, UDP, ...)
	layersFragment                        // an IP fragment (not reassembled)
	layersUndecodable                     // a header did not decode
)

// walk decodes the headers of a packet that starts with first, down to
// TCP: link layers, VLAN tags, IPv4 or IPv6 (with hop-by-hop and
// destination options), and the tunnels it unwraps (VXLAN, Geneve, GRE
// with Ethernet, ERSPAN type II or IP inside, IP in IP). The addresses are
// the innermost IP header's; tunnel names the outermost tunnel ("" for
// none).
func (rd *reader) walk(first gopacket.LayerType, data []byte) (res packetLayers, src, dst netip.Addr, tunnel string) {
	typ := first
	sawIP := false
	for range maxLayers {
		var l gopacket.DecodingLayer
		switch typ {
		case layers.LayerTypeEthernet:
			l = &rd.eth
		case layers.LayerTypeDot1Q:
			l = &rd.dot1q
		case layers.LayerTypeLoopback:
			l = &rd.loop
		case layers.LayerTypeLinuxSLL:
			l = &rd.sll
		case layers.LayerTypeLinuxSLL2:
			l = &rd.sll2
		case layers.LayerTypeIPv4:
			l = &rd.ip4
		case layers.LayerTypeIPv6:
			l = &rd.ip6
		case layers.LayerTypeIPv6Destination:
			l = &rd.ip6dst
		case layers.LayerTypeIPv6Fragment:
			return layersFragment, src, dst, tunnel
		case layers.LayerTypeTCP:
			l = &rd.tcp
		case layers.LayerTypeUDP:
			l = &rd.udp
		case layers.LayerTypeVXLAN:
			l = &rd.vxlan
		case layers.LayerTypeGeneve:
			l = &rd.geneve
		case layers.LayerTypeGRE:
			l = &rd.gre
		case layers.LayerTypeERSPANII:
			l = &rd.erspan
		case gopacket.LayerTypeFragment:
			return layersFragment, src, dst, tunnel
		default:
			return layersNotTCP, src, dst, tunnel
		}
		if err := l.DecodeFromBytes(data, gopacket.NilDecodeFeedback); err != nil {
			return layersUndecodable, src, dst, tunnel
		}
		next := l.NextLayerType()
		switch typ {
		case layers.LayerTypeIPv4, layers.LayerTypeIPv6:
			if sawIP && tunnel == "" {
				tunnel = TunnelIPinIP
			}
			sawIP = true
			if typ == layers.LayerTypeIPv4 {
				src, _ = netip.AddrFromSlice(rd.ip4.SrcIP)
				dst, _ = netip.AddrFromSlice(rd.ip4.DstIP)
			} else {
				src, _ = netip.AddrFromSlice(rd.ip6.SrcIP)
				dst, _ = netip.AddrFromSlice(rd.ip6.DstIP)
			}
		case layers.LayerTypeTCP:
			if !src.IsValid() || !dst.IsValid() {
				return layersNotTCP, src, dst, tunnel
			}
			return layersTCP, src, dst, tunnel
		case layers.LayerTypeUDP:
			// UDP carries TCP only in a tunnel, and only these three
			// are read (gopacket's port table names more protocols).
			switch rd.udp.DstPort {
			case portVXLAN, portVXLANLinux:
				next = layers.LayerTypeVXLAN
			case portGeneve:
				next = layers.LayerTypeGeneve
			default:
				return layersNotTCP, src, dst, tunnel
			}
		case layers.LayerTypeVXLAN:
			tunnel = cmp.Or(tunnel, TunnelVXLAN)
		case layers.LayerTypeGeneve:
			tunnel = cmp.Or(tunnel, TunnelGeneve)
		case layers.LayerTypeGRE:
			tunnel = cmp.Or(tunnel, TunnelGRE)
		}
		typ, data = next, l.LayerPayload()
	}
	return layersUndecodable, src, dst, tunnel
}

// geneve reads a Geneve header (RFC 8926): 8 bytes, then its options
// (their length in 4-byte words in the first byte's low six bits), then
// the protocol its second 16 bits name. It replaces gopacket's, which
// copies each option out and counts the header's length in a byte that
// wraps past 255.
type geneve struct {
	layers.BaseLayer
	proto layers.EthernetType
}

func (g *geneve) CanDecode() gopacket.LayerClass    { return layers.LayerTypeGeneve }
func (g *geneve) NextLayerType() gopacket.LayerType { return g.proto.LayerType() }

func (g *geneve) DecodeFromBytes(data []byte, _ gopacket.DecodeFeedback) error {
	if len(data) < 8 {
		return errors.New("geneve header cut short")
	}
	if v := data[0] >> 6; v != 0 {
		return fmt.Errorf("geneve version %d (only 0 is defined)", v)
	}
	n := 8 + int(data[0]&0x3f)*4
	if len(data) < n {
		return errors.New("geneve options cut short")
	}
	g.proto = layers.EthernetType(binary.BigEndian.Uint16(data[2:4]))
	g.BaseLayer = layers.BaseLayer{Contents: data[:n], Payload: data[n:]}
	return nil
}

// ipv6Options is gopacket's IPv6 destination options header, which lacks
// two of a DecodingLayer's methods.
type ipv6Options struct{ layers.IPv6Destination }

func (o *ipv6Options) CanDecode() gopacket.LayerClass    { return layers.LayerTypeIPv6Destination }
func (o *ipv6Options) NextLayerType() gopacket.LayerType { return o.NextHeader.LayerType() }
