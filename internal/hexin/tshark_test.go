package hexin

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// TestTsharkHexDump writes a capture with gopacket, has tshark (an
// independent reader) print it as hex dumps, and checks that the TCP
// payloads come back out of that text.
func TestTsharkHexDump(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed")
	}
	payloads := [][]byte{
		{0, 0, 0, 10, 0, 18, 0, 3, 0, 0, 0, 1, 0xff, 0xff},
		bytes.Repeat([]byte("kafka"), 40),
	}
	path := filepath.Join(t.TempDir(), "c.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for i, p := range payloads {
		eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: net.IP{10, 0, 0, 1}, DstIP: net.IP{10, 0, 0, 2}}
		tcp := &layers.TCP{SrcPort: 50000, DstPort: 9092, Seq: uint32(1 + 100*i), PSH: true, ACK: true, Window: 512}
		_ = tcp.SetNetworkLayerForChecksum(ip)
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, tcp, gopacket.Payload(p)); err != nil {
			t.Fatal(err)
		}
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(1700000000, 0), CaptureLength: len(buf.Bytes()), Length: len(buf.Bytes())}
		if err := w.WritePacket(ci, buf.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	out, err := exec.Command("tshark", "-r", path, "-x").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	d, err := ParseDump(string(out))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	segs, ok, err := d.TCPSegments()
	if err != nil || !ok || len(segs) != len(payloads) {
		t.Fatalf("%d segments, ok %v, err %v\n%s", len(segs), ok, err, out)
	}
	for i, s := range segs {
		if !bytes.Equal(s.Payload, payloads[i]) || s.Flow() != "10.0.0.1:50000 -> 10.0.0.2:9092" {
			t.Errorf("segment %d: %s %x", i, s.Flow(), s.Payload)
		}
	}
}
