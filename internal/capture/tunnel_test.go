package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"maps"
	"net"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// rewrap rewrites every packet of an Ethernet pcap capture with wrap.
func rewrap(t *testing.T, data []byte, wrap func(eth []byte) []byte) []byte {
	t.Helper()
	r, err := pcapgo.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := pcapgo.NewWriterNanos(&out)
	if err := w.WriteFileHeader(262144, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for {
		d, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := wrap(d)
		ci.CaptureLength, ci.Length = len(p), len(p)
		if err := w.WritePacket(ci, p); err != nil {
			t.Fatal(err)
		}
	}
	return out.Bytes()
}

// stack serialises layers (gopacket's encoders, lengths and checksums
// computed) in front of payload.
func stack(t *testing.T, payload []byte, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, append(ls, gopacket.Payload(payload))...); err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(buf.Bytes())
}

func outerEth(typ layers.EthernetType) *layers.Ethernet {
	return &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: typ}
}

func outerIPv4(proto layers.IPProtocol) *layers.IPv4 {
	return &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: proto, SrcIP: net.IP{192, 0, 2, 1}, DstIP: net.IP{192, 0, 2, 2}}
}

func outerIPv6(next layers.IPProtocol) *layers.IPv6 {
	return &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: next, SrcIP: net.ParseIP("2001:db8:ff::1"), DstIP: net.ParseIP("2001:db8:ff::2")}
}

func outerUDP(ip gopacket.NetworkLayer, port layers.UDPPort) *layers.UDP {
	u := &layers.UDP{SrcPort: 49152, DstPort: port}
	if err := u.SetNetworkLayerForChecksum(ip); err != nil {
		panic(err)
	}
	return u
}

// geneveHeader is a Geneve header (RFC 8926, written here by hand) naming
// proto, with one 8-byte option so that its length is not the minimum.
func geneveHeader(proto layers.EthernetType) []byte {
	h := []byte{0x02, 0, 0, 0, 0, 0, 9, 0, 0x01, 0x03, 0x01, 0x01, 0xde, 0xad, 0xbe, 0xef}
	binary.BigEndian.PutUint16(h[2:], uint16(proto))
	return h
}

// tunnels are ways a mirror, an overlay or a collector wraps the packets
// it delivers: each takes a packet as captured (Ethernet) and returns it
// wrapped, with the tunnel kind the reader must count ("" for none), and
// whether tshark reads it without being told the port.
var tunnels = []struct {
	name, kind string
	tsharkArgs []string
	wrap       func(t *testing.T, eth []byte) []byte
}{
	{"VXLAN", TunnelVXLAN, nil, func(t *testing.T, eth []byte) []byte {
		ip := outerIPv4(layers.IPProtocolUDP)
		return stack(t, eth, outerEth(layers.EthernetTypeIPv4), ip, outerUDP(ip, portVXLAN), &layers.VXLAN{ValidIDFlag: true, VNI: 42})
	}},
	{"VXLAN on Linux's port", TunnelVXLAN, []string{"-d", "udp.port==8472,vxlan"}, func(t *testing.T, eth []byte) []byte {
		ip := outerIPv4(layers.IPProtocolUDP)
		return stack(t, eth, outerEth(layers.EthernetTypeIPv4), ip, outerUDP(ip, portVXLANLinux), &layers.VXLAN{ValidIDFlag: true, VNI: 1})
	}},
	{"Geneve over IPv6", TunnelGeneve, nil, func(t *testing.T, eth []byte) []byte {
		ip := outerIPv6(layers.IPProtocolUDP)
		return stack(t, append(geneveHeader(layers.EthernetTypeTransparentEthernetBridging), eth...), outerEth(layers.EthernetTypeIPv6), ip, outerUDP(ip, portGeneve))
	}},
	{"Geneve with IP inside", TunnelGeneve, nil, func(t *testing.T, eth []byte) []byte {
		ip := outerIPv4(layers.IPProtocolUDP)
		return stack(t, append(geneveHeader(layers.EthernetTypeIPv4), eth[14:]...), outerEth(layers.EthernetTypeIPv4), ip, outerUDP(ip, portGeneve))
	}},
	{"GRE with Ethernet", TunnelGRE, nil, func(t *testing.T, eth []byte) []byte {
		return stack(t, eth, outerEth(layers.EthernetTypeIPv4), outerIPv4(layers.IPProtocolGRE), &layers.GRE{Protocol: layers.EthernetTypeTransparentEthernetBridging})
	}},
	{"ERSPAN type II", TunnelGRE, nil, func(t *testing.T, eth []byte) []byte {
		return stack(t, eth, outerEth(layers.EthernetTypeIPv4), outerIPv4(layers.IPProtocolGRE),
			&layers.GRE{SeqPresent: true, Seq: 7, Protocol: layers.EthernetTypeERSPAN}, &layers.ERSPANII{Version: 1, SessionID: 3})
	}},
	{"GRE with IP", TunnelGRE, nil, func(t *testing.T, eth []byte) []byte {
		return stack(t, eth[14:], outerEth(layers.EthernetTypeIPv4), outerIPv4(layers.IPProtocolGRE), &layers.GRE{Protocol: layers.EthernetTypeIPv4})
	}},
	{"IP in IP", TunnelIPinIP, nil, func(t *testing.T, eth []byte) []byte {
		return stack(t, eth[14:], outerEth(layers.EthernetTypeIPv4), outerIPv4(layers.IPProtocolIPv4))
	}},
	{"IPv4 in IPv6 after destination options", TunnelIPinIP, nil, func(t *testing.T, eth []byte) []byte {
		opts := &layers.IPv6Destination{Options: []*layers.IPv6DestinationOption{{OptionType: 1, OptionData: []byte{0, 0, 0, 0}}}}
		opts.NextHeader = layers.IPProtocolIPv4
		return stack(t, eth[14:], outerEth(layers.EthernetTypeIPv6), outerIPv6(layers.IPProtocolIPv6Destination), opts)
	}},
	{"VXLAN in GRE", TunnelGRE, nil, func(t *testing.T, eth []byte) []byte {
		ip := outerIPv4(layers.IPProtocolUDP)
		vx := stack(t, eth, ip, outerUDP(ip, portVXLAN), &layers.VXLAN{ValidIDFlag: true, VNI: 5})
		return stack(t, vx, outerEth(layers.EthernetTypeIPv4), outerIPv4(layers.IPProtocolGRE), &layers.GRE{Protocol: layers.EthernetTypeIPv4})
	}},
	{"QinQ", "", nil, func(t *testing.T, eth []byte) []byte {
		return stack(t, eth[14:], outerEth(layers.EthernetTypeQinQ),
			&layers.Dot1Q{VLANIdentifier: 100, Type: layers.EthernetTypeDot1Q}, &layers.Dot1Q{VLANIdentifier: 200, Type: layers.EthernetTypeIPv4})
	}},
}

// TestReadTunnels: a capture delivered inside a tunnel reads as the
// capture itself: the same frames between the same (inner) addresses,
// each TCP packet counted under its tunnel, nothing skipped. tshark, an
// independent reader, finds the same Kafka messages in each.
func TestReadTunnels(t *testing.T) {
	xs := sampleExchanges()
	plain := writeCapture(t, PCAP, xs, true, 0, 0)
	want, wantSt := readAll(t, plain, Options{})
	if len(want) != 2*len(xs) {
		t.Fatalf("plain capture: %d frames, want %d", len(want), 2*len(xs))
	}
	plainKafka := tsharkCount(t, plain, "kafka")
	if plainKafka == 0 {
		t.Fatal("tshark finds no Kafka in the plain capture")
	}
	for _, tn := range tunnels {
		t.Run(tn.name, func(t *testing.T) {
			wrapped := rewrap(t, plain, func(eth []byte) []byte { return tn.wrap(t, eth) })
			got, st := readAll(t, wrapped, Options{Ports: []int{9092}})
			if len(got) != len(want) {
				t.Fatalf("%d frames, want %d (stats %+v)", len(got), len(want), st)
			}
			for i := range got {
				g, w := got[i], want[i]
				if !bytes.Equal(g.Data, w.Data) || g.Dir != w.Dir || g.Client != w.Client || g.Server != w.Server {
					t.Errorf("frame %d: %v %v->%v, want %v %v->%v (or its bytes differ)", i, g.Dir, g.Client, g.Server, w.Dir, w.Client, w.Server)
				}
			}
			if st.TCPPackets != wantSt.TCPPackets || st.NotTCP+st.Undecodable+st.Fragments+st.OtherPorts != 0 {
				t.Errorf("stats %+v, want %d TCP packets and nothing skipped", st, wantSt.TCPPackets)
			}
			wantTunnels := map[string]int64{tn.kind: wantSt.TCPPackets}
			if tn.kind == "" {
				wantTunnels = nil
			}
			if !maps.Equal(st.Tunnels, wantTunnels) {
				t.Errorf("tunnels %v, want %v", st.Tunnels, wantTunnels)
			}
			if n := tsharkCount(t, wrapped, "kafka", tn.tsharkArgs...); n != plainKafka {
				t.Errorf("tshark finds %d Kafka packets, %d in the plain capture", n, plainKafka)
			}
		})
	}
}

// TestReadTunnelsSkipped: what is wrapped but not read is counted, each
// under what it is: UDP on another port, a Geneve version that does not
// exist, a VXLAN header cut short, fragments inside a tunnel or of IPv6,
// and more headers than any real packet stacks.
func TestReadTunnelsSkipped(t *testing.T) {
	plain := writeCapture(t, PCAP, sampleExchanges(), true, 0, 0)
	_, plainSt := readAll(t, plain, Options{})
	n := plainSt.Packets
	for _, c := range []struct {
		name string
		wrap func(eth []byte) []byte
		want func(Stats) int64
	}{
		{"UDP on another port", func(eth []byte) []byte {
			ip := outerIPv4(layers.IPProtocolUDP)
			return stack(t, eth, outerEth(layers.EthernetTypeIPv4), ip, outerUDP(ip, 4790))
		}, func(s Stats) int64 { return s.NotTCP }},
		{"Geneve version 1", func(eth []byte) []byte {
			h := geneveHeader(layers.EthernetTypeTransparentEthernetBridging)
			h[0] |= 0x40
			ip := outerIPv4(layers.IPProtocolUDP)
			return stack(t, append(h, eth...), outerEth(layers.EthernetTypeIPv4), ip, outerUDP(ip, portGeneve))
		}, func(s Stats) int64 { return s.Undecodable }},
		{"Geneve options past the end", func(eth []byte) []byte {
			h := geneveHeader(layers.EthernetTypeTransparentEthernetBridging)
			h[0] = 0x3f
			ip := outerIPv4(layers.IPProtocolUDP)
			return stack(t, h, outerEth(layers.EthernetTypeIPv4), ip, outerUDP(ip, portGeneve))
		}, func(s Stats) int64 { return s.Undecodable }},
		{"VXLAN cut short", func(eth []byte) []byte {
			ip := outerIPv4(layers.IPProtocolUDP)
			return stack(t, []byte{8, 0, 0}, outerEth(layers.EthernetTypeIPv4), ip, outerUDP(ip, portVXLAN))
		}, func(s Stats) int64 { return s.Undecodable }},
		{"a fragment in a tunnel", func(eth []byte) []byte {
			inner := outerIPv4(layers.IPProtocolTCP)
			inner.Flags = layers.IPv4MoreFragments
			return stack(t, eth[34:], outerEth(layers.EthernetTypeIPv4), outerIPv4(layers.IPProtocolIPv4), inner)
		}, func(s Stats) int64 { return s.Fragments }},
		{"an IPv6 fragment", func(eth []byte) []byte {
			return stack(t, eth[14:], outerEth(layers.EthernetTypeIPv6), outerIPv6(layers.IPProtocolIPv6Fragment), &layers.IPv6Fragment{NextHeader: layers.IPProtocolIPv4, MoreFragments: true})
		}, func(s Stats) int64 { return s.Fragments }},
		{"40 headers of IP in IP", func(eth []byte) []byte {
			ls := []gopacket.SerializableLayer{outerEth(layers.EthernetTypeIPv4)}
			for range 40 {
				ls = append(ls, outerIPv4(layers.IPProtocolIPv4))
			}
			return stack(t, eth[14:], ls...)
		}, func(s Stats) int64 { return s.Undecodable }},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, st := readAll(t, rewrap(t, plain, c.wrap), Options{})
			if len(got) != 0 || st.TCPPackets != 0 || st.Tunnels != nil {
				t.Errorf("%d frames, %d TCP packets, tunnels %v: want none", len(got), st.TCPPackets, st.Tunnels)
			}
			if st.Packets != n || c.want(st) != n {
				t.Errorf("stats %+v: want all %d packets counted as skipped", st, n)
			}
		})
	}
}
